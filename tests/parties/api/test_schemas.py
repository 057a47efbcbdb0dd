"""The JSON documents: each command's ``--json`` on small inputs validates against the pydantic model of its
kind, and the committed ``schemas/`` are exactly what the models generate now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mpdp
from mpdp.analysis.reports.documents import KINDS, SCHEMA_VERSION, versioned
from mpdp.parties.api.schemas import DOCUMENTS, json_schemas, validate_document
from mpdp.parties.cli.main import COMMANDS, main
from tests.parties.cli.invoke import ok

ROOT = Path(__file__).resolve().parents[3]


def test_the_committed_schemas_are_the_models() -> None:
    generated = {name: json.dumps(schema, indent=2, sort_keys=True) + "\n" for name, schema in json_schemas().items()}
    committed = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "schemas").glob("*.json")}
    assert committed == generated, "run `mpdp schema --out schemas/` and commit the result"


def test_every_command_has_a_document_kind() -> None:
    assert set(COMMANDS) <= set(KINDS) and set(DOCUMENTS) == set(KINDS)


def test_mpdp_schema_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok(capsys, "schema", "--out", str(tmp_path), "--json")
    validate_document(doc)
    assert sorted(Path(f).name for f in doc["files"]) == sorted(json_schemas())
    assert json.loads((tmp_path / "sweep.schema.json").read_text())["properties"]["kind"]["const"] == "sweep"


@pytest.mark.parametrize("argv", [
    ["accuracy", "--epsilon", "0.5,1,1.5", "--function", "majority"],
    ["compose", "--epsilon", "0.1", "--delta", "0", "-k", "30", "--delta-slack", "1e-5"],
    ["mechanism", "--graph", "majority:3", "--epsilon", "0.6931", "--delta", "0.1", "--balanced"],
    ["compare-central", "--voters", "1,3", "--epsilon", "1"],
    ["calibrate", "--epsilon", "1", "--delta", "1e-6", "-k", "4"],
    ["theorem-3-1", "--parties", "2", "--trials", "3"],
    ["sweep", "--epsilon", "0.5:1:2", "--parties", "5", "--samples", "2000"],
], ids=lambda argv: argv[0])
def test_each_document_validates(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok(capsys, *argv, "--json")
    model = validate_document(doc)
    assert (model.kind, model.schema_version, model.mpdp_version) == (argv[0], SCHEMA_VERSION, mpdp.__version__)
    assert doc["inputs"] and list(doc)[:4] == ["schema_version", "mpdp_version", "kind", "inputs"]


def test_files_written_by_commands_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "sweep"
    assert main(["sweep", "--epsilon", "0.5:1:2", "--parties", "5", "--samples", "2000", "--out", str(run),
                 "--quiet"]) == 0
    assert validate_document(json.loads((run / "sweep.json").read_text())).kind == "sweep"
    for argv in (["report", str(run)], ["figures", "--out", str(tmp_path / "f"), "--only", "002-xor"],
                 ["keys", "--parties", "3", "--out", str(tmp_path / "keys"), "--session", "s-1"],
                 ["broker", "config", "--roster", str(tmp_path / "keys" / "roster.json"), "--out", str(tmp_path / "b")]):
        path = tmp_path / f"{argv[0]}.json"
        assert main([*argv, "--json", str(path), "--quiet"]) == 0
        assert capsys.readouterr().out == ""
        doc = json.loads(path.read_text())
        assert validate_document(doc).kind == argv[0] and doc["inputs"], argv
    assert json.loads((tmp_path / "keys.json").read_text())["parties"] == 3


def test_api_documents_validate() -> None:
    r = mpdp.estimate(epsilon=1.0, parties=3, samples=200, seed=1)
    assert validate_document(r.to_dict()).kind == "estimate"


def test_a_wrong_document_is_refused() -> None:
    doc = versioned("sweep", {"alpha": 0.05, "consistent": True}, {})
    with pytest.raises(ValueError, match="points"):
        validate_document(doc)
    with pytest.raises(ValueError, match="schema_version=2"):
        validate_document(versioned("calibrate", {}, {}) | {"schema_version": 2})
    with pytest.raises(KeyError, match="nope"):
        versioned("nope", {}, {})
