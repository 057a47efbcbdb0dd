"""The documentation site (issue 24): ``mkdocs build --strict`` (every warning an error: a broken link, a missing
page, an unparsable docstring) builds it, with the Python API reference generated from the docstrings and the
command-line reference from the argument parser; the README stays a short front page that links into it."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.calibration import scaled

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=scaled(400), check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # no end-of-life banner
    assert done.returncode == 0, done.stderr[-4000:]
    assert not re.search(r"^WARNING", done.stderr, flags=re.M), done.stderr[-4000:]
    return out


def _text(site: Path, page: str) -> str:
    return html.unescape((site / page / "index.html").read_text(encoding="utf-8"))


def _plain(site: Path, page: str) -> str:
    """The page's text without its tags (highlighted code is split into spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / page / "index.html").read_text(encoding="utf-8")))


def test_the_python_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    api = _text(site, "reference/api/mpdp")
    for name in ("simulate", "simulate_async", "compose", "sweep", "accuracy", "estimate", "mechanism", "report",
                 "audit.audit", "Simulation", "Result"):
        assert f'id="mpdp.parties.api.{name}"' in api, name
    protocols = _text(site, "reference/api/protocols")
    assert 'id="mpdp.protocols.optimal_mechanism"' in protocols
    assert "001" in protocols  # the docstrings' sources, carried over
    analysis = _text(site, "reference/api/analysis")
    assert 'id="mpdp.analysis.' in analysis
    for page in (api, protocols, analysis):  # the docstrings' Sphinx roles shown as the code they name
        assert not re.search(r":(mod|func|class|meth):<code>", page)


def test_simulate_shows_its_signature_and_the_config_its_fields(site: Path) -> None:
    """``mpdp.simulate`` is a function of its own (no wrapper hiding its signature), and SimulationConfig's field
    descriptions are on the page, one table row per field."""
    from mpdp.parties.api.simulation_config import SimulationConfig

    text = _plain(site, "reference/api/mpdp")
    signature = re.search(r"simulate\(\s*config[^)]*progress[^)]*\*\*options[^)]*\)", text)
    assert signature is not None, "no signature of mpdp.simulate"
    assert "Returns:" in text or "Returns" in text
    for name, field in SimulationConfig.model_fields.items():
        assert f"{name}" in text and (field.description or "")[:40] in text, name
    assert "per-party while the parties' sockets fit" in text  # connections="auto", explained


def test_the_build_code_is_no_page_and_the_site_has_its_address(site: Path) -> None:
    assert not (site / "module_map.py").exists() and not (site / "hooks").exists()
    assert '<link rel="canonical" href="http://127.0.0.1:8000/reference/api/mpdp/">' in _text(site, "reference/api/mpdp")


def test_the_cli_reference_is_the_parsers_help(site: Path) -> None:
    from mpdp.parties.cli.main import COMMANDS, build_parser

    page = _text(site, "reference/cli")
    text = _plain(site, "reference/cli")
    parser = build_parser("simulate")
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    assert set(COMMANDS) <= set(sub.choices)
    for name in COMMANDS:
        assert f'id="mpdp-{name}"' in page, name
    for option in (action.option_strings[-1] for action in sub.choices["simulate"]._actions if action.option_strings):
        assert option in text, option
    assert parser.format_usage().split()[1] == "mpdp" and "usage: mpdp simulate" in text


def test_the_tutorials_are_the_notebooks(site: Path) -> None:
    for name in ("teacher", "researcher"):
        page = _plain(site, f"tutorials/{name}")
        script = (ROOT / "examples" / f"{name}.py").read_text(encoding="utf-8")
        title = script.splitlines()[1].removeprefix("# # ")
        assert title in page
        first_code = script.split("# %%\n", 1)[1].strip().splitlines()[0]
        assert first_code in page


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [p for value in node.values() for p in pages(value)]
        if isinstance(node, list):
            return [p for value in node for p in pages(value)]
        return []

    listed = pages(config["nav"])
    assert len(listed) >= 25
    for page in listed:
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert built.is_file(), page


def test_the_readme_is_a_short_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert "docs/index.md" in links and "docs/reference/api/mpdp.md" in links
    for link in links:
        assert (ROOT / link).is_file(), link
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(block) == 2 and "mpdp simulate" in block[0] and "pytest" in block[1]  # what .ci/run runs


def test_the_mathematics_page_names_functions_and_tests_that_exist() -> None:
    """Each result of the papers names the function that computes it (importable under that name) and the
    tests that check it (files of tests/, given by path or by name)."""
    import importlib

    page = (ROOT / "docs" / "mathematics.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in page.splitlines() if line.startswith("| 00")]
    assert len(rows) >= 20
    test_files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    for result, computed, _shown, checked in (row[:4] for row in rows):
        names = re.findall(r"`(mpdp\.[\w.]+)`", computed)
        assert names, result
        for name in names:
            module, _, attribute = name.rpartition(".")
            assert getattr(importlib.import_module(module), attribute) is not None, name
        for test in re.findall(r"`((?:tests/)?[\w/]*test_\w+\.py)", checked):
            assert (ROOT / test).is_file() if "/" in test else test in test_files, (result, test)
