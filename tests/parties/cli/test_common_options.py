"""Every command alike: ``--json [FILE]``, ``--quiet``, ``--config TOML`` on each command (one helper), and
the top-level ``-v``/``--log-level`` wired to the ``mpdp`` loggers."""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import mpdp
from mpdp.parties.cli.args import apply_config
from mpdp.parties.cli.main import COMMANDS, _leaves, build_parser, main
from tests.parties.cli.invoke import ok, refused, strict_json

COMPOSE = ["compose", "--epsilon", "0.5", "-k", "3", "--delta-slack", "1e-6"]


def _leaf_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    parser = build_parser(*COMMANDS)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [(name, leaf) for name in COMMANDS for leaf in _leaves(sub.choices[name])]


@pytest.mark.parametrize("name, leaf", _leaf_parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_has_the_common_options(name: str, leaf: argparse.ArgumentParser) -> None:
    options = {o: a for a in leaf._actions for o in a.option_strings}
    assert options["--json"].nargs == "?" and options["--json"].const == "-"
    assert options["--quiet"].nargs == 0 and options["--config"].nargs is None


def test_json_alone_goes_to_stdout_and_the_text_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*COMPOSE, "--json"]) == 0
    captured = capsys.readouterr()
    doc = strict_json(captured.out)
    assert (doc["kind"], doc["schema_version"], doc["mpdp_version"]) == ("compose", 1, mpdp.__version__)
    assert doc["inputs"]["epsilon"] == 0.5 and doc["inputs"]["k"] == 3
    assert "epsilon_tilde (exact)" in captured.err  # the human text, on standard error


def test_json_file_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    assert main([*COMPOSE, "--json", str(path), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")  # quiet: nothing printed
    doc = json.loads(path.read_text())
    # 000 Theorem 3.1, basic composition: k * epsilon
    assert doc["kind"] == "compose" and doc["bounds"]["basic"] == pytest.approx(1.5, rel=1e-12)
    assert main([*COMPOSE, "--json", str(path)]) == 0
    assert "epsilon_tilde" in capsys.readouterr().out  # with a FILE, the text stays on standard output


def test_an_unwritable_json_file_is_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "sweep", "--epsilon", "0.1:1:3", "--json", str(tmp_path / "missing" / "s.json"))
    assert "--json" in line and "does not exist" in line


def test_compare_central_json_is_an_object_with_rows(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok(capsys, "compare-central", "--voters", "1,3", "--epsilon", "1", "--json")
    assert doc["kind"] == "compare-central" and [r["voters"] for r in doc["rows"]] == [1, 3]
    assert doc["inputs"] == {"voters": "1,3", "epsilon": "1", "delta": 0.0, "plot": None,
                             "time_limit": doc["inputs"]["time_limit"]}


@pytest.mark.parametrize("argv, level", [([], logging.WARNING), (["-v"], logging.INFO), (["-vv"], logging.DEBUG),
                                         (["-vvv"], logging.DEBUG), (["--log-level", "error"], logging.ERROR),
                                         (["-v", "--log-level", "CRITICAL"], logging.CRITICAL)])
def test_verbosity_sets_the_mpdp_loggers(argv: list[str], level: int, capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("mpdp")
    before = logger.level
    try:
        assert main([*argv, *COMPOSE]) == 0
        assert logger.getEffectiveLevel() == level
    finally:
        logger.setLevel(before)


@pytest.mark.parametrize("verbose, shown", [(0, False), (1, True)])
def test_records_reach_standard_error(verbose: int, shown: bool) -> None:
    # a fresh interpreter: pytest's own logging handlers would swallow basicConfig's
    code = ("import logging; from mpdp.parties.cli.args import configure_logging; "
            f"configure_logging({verbose}, None); logging.getLogger('mpdp.worker').info('an info record')")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    assert ("mpdp INFO mpdp.worker: an info record" in err) == shown


def test_a_bad_log_level_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--log-level", "loud", *COMPOSE])
    assert exit_info.value.code == 2 and "--log-level" in capsys.readouterr().err


def test_config_gives_defaults_and_the_command_line_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.toml"
    config.write_text('epsilon = 0.5\nk = 4\ndelta-slack = 1e-6\n')
    doc = ok(capsys, "compose", "--config", str(config), "--json")
    assert (doc["inputs"]["epsilon"], doc["k"]) == (0.5, 4)
    assert doc["bounds"]["basic"] == pytest.approx(2.0, rel=1e-12)
    doc = ok(capsys, "compose", "--config", str(config), "-k", "2", "--json")
    assert doc["k"] == 2 and doc["bounds"]["basic"] == pytest.approx(1.0, rel=1e-12)
    # a required option in the file, a list as a TOML array, a flag as a boolean
    config.write_text('epsilon = [0.5, 1, 1.5]\nfunction = "majority"\nrule = "average"\njson = true\n')
    doc = ok(capsys, "accuracy", "--config", str(config), "--json")
    assert doc["k"] == 3 and list(doc["rules"]) == ["average"]


@pytest.mark.parametrize("text, words", [
    ("epsilon = 0.5\nkk = 3\n", ["key='kk'", "epsilon", "delta-slack"]),
    ("epsilon = 0.5\nk = 'three'\n", ["k", "'three'"]),
    ("measure = 'loud'\nepsilon = 1\nfunction = 'xor'\n", ["measure", "one of zero-one"]),
    ("epsilon = [0.5\n", ["a TOML file"]),
])
def test_config_errors_name_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                    words: list[str]) -> None:
    config = tmp_path / "run.toml"
    config.write_text(text)
    command = "accuracy" if "measure" in text else "compose"
    line = refused(capsys, command, "--config", str(config))
    assert all(w in line for w in words), line


@pytest.mark.parametrize("text, expected", [
    ('repetitions = "abc"\n', "repetitions='abc' is not allowed: an integer"),
    ("repetitions = 1.5\n", "repetitions='1.5' is not allowed: an integer"),
    ('alpha = "often"\n', "alpha='often' is not allowed: a number"),
    ('protocol = "smc"\n', "protocol='smc' is not allowed: one of rr, curator, mpc"),
    ("rounds = [3]\n", "rounds=[3] is not allowed: an integer, not a list"),
    ("alpha = [0.1]\n", "alpha=[0.1] is not allowed: a number, not a list"),
    ("json = 5\n", "json=5 is not allowed: a file name (text), or true"),
    ('rule = "average"\nworst-case = true\n', "key='worst-case' is not allowed: not with rule (one of them)"),
    ("epsilon = -1\n", "epsilon='-1' is not allowed: a number >= 0 (inf allowed), LO:HI, or a file of per-party "
                       "values"),
])
def test_a_config_value_of_the_wrong_type_names_key_value_and_type(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   text: str, expected: str) -> None:
    """No Python internals ("invalid literal for int() with base 10") reach the user: the key, its value, the type;
    a list of one for one number, a number for --json's file, the keys the command line refuses together
    (--rule average --worst-case), and a value the command's own check refuses are named as in the file."""
    config = tmp_path / "run.toml"
    config.write_text(text)
    line = refused(capsys, "simulate", "--config", str(config), "--parties", "3")
    assert line == f"mpdp: error: --config {config}: {expected}"


def test_a_missing_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "readable TOML" in refused(capsys, *COMPOSE, "--config", str(tmp_path / "none.toml"))


def test_the_documented_run_toml_is_valid_for_simulate(tmp_path: Path) -> None:
    """The ``run.toml`` of the docs' command-line conventions page configures ``mpdp simulate`` as it says."""
    page = (Path(__file__).resolve().parents[3] / "docs" / "reference" / "cli-conventions.md").read_text(encoding="utf-8")
    block = page.split("```toml\n", 1)[1].split("```", 1)[0]
    config = tmp_path / "run.toml"
    config.write_text("\n".join(line.strip() for line in block.splitlines()) + "\n")
    argv = ["simulate", "--config", str(config), "--seed", "4"]
    parser = build_parser("simulate")
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    apply_config(sub.choices["simulate"], argv)
    args = parser.parse_args(argv)
    assert (args.dataset, args.epsilon, args.repetitions, args.rule) == ("house-votes-84", "1.0", 200, "average")
    assert (args.seed, args.out, args.json) == (4, "runs/house", "runs/house.json")  # the command line wins


def test_inputs_never_show_a_broker_password() -> None:
    from mpdp.parties.cli.args import command_inputs

    args = argparse.Namespace(broker="mqtts://alice:s3cret@broker.example:8883", out=Path("run"), json="-",
                              run=print, seed=3)
    assert command_inputs(args) == {"broker": "mqtts://alice:***@broker.example:8883", "out": "run", "seed": 3}


def test_a_config_that_is_not_utf8_is_one_line_and_a_bom_is_skipped(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.toml"
    config.write_bytes(b"epsilon = 0.5\n# caf\xe9\n")  # Latin-1
    line = refused(capsys, *COMPOSE, "--config", str(config))
    assert "--config=" in line and "TOML file in UTF-8" in line and "byte 19 is 0xe9" in line
    config.write_bytes(b"\xef\xbb\xbfepsilon = [0.5\n")  # a BOM is skipped: the TOML error is the bracket
    assert "a TOML file" in refused(capsys, *COMPOSE, "--config", str(config))


def test_a_config_json_true_is_standard_output_and_an_error_of_a_typed_option_names_the_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json = true writes to standard output (not a file named "true"); --epsilon -2 typed over the file's
    epsilon = -1 is named as typed."""
    config = tmp_path / "run.toml"
    config.write_text("json = true\nfunction = 'xor'\n")
    assert ok(capsys, "accuracy", "--config", str(config), "--epsilon", "1", "--json")["k"] == 1
    assert not (tmp_path / "true").exists() and not Path("true").exists()
    config.write_text("epsilon = -1\n")
    line = refused(capsys, "simulate", "--config", str(config), "--epsilon", "-2", "--parties", "3")
    assert line.startswith("mpdp: error: --epsilon='-2' is not allowed")
