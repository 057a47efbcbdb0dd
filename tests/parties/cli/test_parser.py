"""Every ``mpdp`` parser takes no abbreviation and no single-valued option twice, and a misspelt option or
``--config`` key is named with the one it most likely meant (parties.cli.parser, parties.cli.args)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mpdp.parties.cli.main import COMMANDS, build_parser, main


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser] + [p for action in subs for child in action.choices.values() for p in _parsers(child)]


def test_every_parser_refuses_abbreviations() -> None:
    parsers = _parsers(build_parser(*COMMANDS))
    assert len(parsers) > len(COMMANDS) and all(not p.allow_abbrev for p in parsers)


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """argparse's refusal: exit 2 and one ``mpdp: error:`` line, as every other refusal (no usage block)."""
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    assert caught.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpdp: error: "), lines
    return lines[0]


def test_an_abbreviation_is_not_taken_for_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    """``--par 5`` ran as ``--parties 5``."""
    line = _refused(capsys, "sweep", "--epsilon", "1", "--par", "5", "--samples", "10")
    assert line == "mpdp: error: unrecognized arguments: --par 5 (did you mean --parties?)"


@pytest.mark.parametrize(("argv", "line"), [
    (["sweep", "--epsilon", "1", "--seed", "1", "--seed", "2"],
     "mpdp: error: argument --seed: given twice (1, then 2): it takes one value, give it once"),
    (["compose", "--epsilon", "0.1", "-k", "3", "-k", "4"],
     "mpdp: error: argument -k: given twice (3, then 4): it takes one value, give it once"),
])
def test_a_single_valued_option_given_twice_is_refused_by_name(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                               line: str) -> None:
    assert _refused(capsys, *argv) == line


def test_options_that_add_up_may_still_be_repeated(capsys: pytest.CaptureFixture[str]) -> None:
    main(["-v", "-v", "compose", "--epsilon", "0.1", "-k", "3", "--json"])  # a count: -v -v is verbosity 2
    assert '"k": 3' in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "end"), [
    (["accuracy", "--epsilon", "1,1,1", "--fucntion=xor"],
     "the following arguments are required: --function; unrecognized arguments: --fucntion=xor "
     "(did you mean --function?)"),
    (["sweep", "--epsilon", "1", "--fucntion", "xor"], "unrecognized arguments: --fucntion xor (did you mean --function?)"),
])
def test_a_misspelt_option_is_named_with_the_one_meant(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                       end: str) -> None:
    """``--fucntion=xor`` was answered ``the following arguments are required: --function`` alone."""
    assert _refused(capsys, *argv).endswith(end)


def test_a_misspelt_config_key_gets_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.toml"
    config.write_text('epsilon = "1,1,1"\nfucntion = "xor"\n')
    assert main(["accuracy", "--config", str(config)]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"mpdp: error: --config {config}: key='fucntion' is not allowed: an option of this "
                           "command (did you mean function?): delta, engine, epsilon, function,"), line


@pytest.mark.parametrize(("argv", "line"), [
    (["simulate", "--repetitions", "nan"],
     "mpdp: error: argument --repetitions: 'nan' is not allowed: an integer in digits (1000, not 1e3 or 1.5)"),
    (["sweep", "--epsilon", "1", "--jobs", "0"], "mpdp: error: argument --jobs: '0' is not allowed: an integer >= 1"),
    (["sweep", "--epsilon", "1", "--samples", "0"],
     "mpdp: error: argument --samples: '0' is not allowed: an integer >= 1"),
    (["sweep", "--jobs", "2"],
     "mpdp: error: the following arguments are required: --epsilon (mpdp sweep --help lists them)"),
    (["accuracy", "--epsilon", "1", "--function", "majority", "--rule", "best"],
     "mpdp: error: argument --rule: invalid choice: 'best' (choose from 'average', 'worst-case', 'both')"),
])
def test_a_value_argparse_refuses_is_one_line_as_every_other_refusal(capsys: pytest.CaptureFixture[str],
                                                                     argv: list[str], line: str) -> None:
    """``--repetitions nan`` printed the command's whole usage and ``mpdp simulate: error: ...``."""
    assert _refused(capsys, *argv) == line
