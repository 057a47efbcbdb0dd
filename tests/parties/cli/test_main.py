"""parties.cli.main: the ``mpdp`` parser as a whole (help texts, --version, lazy imports, Ctrl-C)."""

import argparse
import importlib
import pkgutil
import re
import subprocess
import sys
from importlib import metadata

import pytest

from mpdp.parties.cli import commands
from mpdp.parties.cli.main import COMMANDS, build_parser, main
from tests.calibration import scaled


@pytest.mark.parametrize("command", [[], ["compose"], ["mechanism"], ["compare-central"], ["accuracy"]])
def test_help_explains_paper_codes(capsys, command) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out
    for code, words in (("000", "Composition Theorem"), ("001", "Graph Colorings"),
                        ("002", "Secure Multi-party Differential Privacy")):
        if re.search(rf"(?<![\d.]){code}\b", text) or not command:  # cited: then explained
            assert f"{code} = " in text and words in text, (command, code)


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"mpdp {metadata.version('mpdp')}\n"


def test_the_command_table_lists_every_command_module() -> None:
    modules = {info.name for info in pkgutil.iter_modules(commands.__path__)}
    assert {name.replace("-", "_") for name in COMMANDS} == modules


def test_the_whole_parser_registers_every_command() -> None:
    (sub,) = [a for a in build_parser(*COMMANDS)._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == list(COMMANDS)
    assert all(callable(parser.get_default("run")) for parser in sub.choices.values())
    assert [action.dest for action in sub._choices_actions] == list(COMMANDS)  # each listed once, in order


HEAVY = ("numpy", "scipy", "matplotlib", "aiomqtt", "amqtt", "pydantic", "cryptography", "rich")


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_and_version_import_no_heavy_module(argv: list[str]) -> None:
    """In a fresh interpreter, ``python -m mpdp --help`` leaves numpy, scipy, matplotlib and the MQTT and
    crypto stacks unimported (checked in ``sys.modules`` at exit)."""
    code = ("import sys, runpy\n"
            f"sys.argv = ['mpdp', *{argv!r}]\n"
            "try:\n    runpy.run_module('mpdp', run_name='__main__')\n"
            "except SystemExit as done:\n    assert done.code == 0, done.code\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60))
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_chosen_command_imports_its_module_only() -> None:
    code = ("import sys\nfrom mpdp.parties.cli.main import main\n"
            "assert main(['compose', '--epsilon', '1', '--delta', '0', '-k', '2']) == 0\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('mpdp.parties.cli.commands.')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60))
    assert result.stdout.strip().splitlines()[-1] == "['compose']"


def test_ctrl_c_while_a_command_is_imported_is_one_line(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(name: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["compose", "--epsilon", "1", "-k", "2"]) == 130
    assert capsys.readouterr().err == "mpdp: interrupted\n"


def test_json_into_a_closed_pipe_is_quiet() -> None:
    """``mpdp ... --json | head -c 1``: the reader leaves; mpdp ends with 141 (SIGPIPE's code) and no
    BrokenPipeError traceback. The pipe is closed before mpdp writes (it is still importing)."""
    proc = subprocess.Popen([sys.executable, "-m", "mpdp", "accuracy", "--epsilon", "1*8", "--function", "majority",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=scaled(60)) == 141 and err == "", err
    proc.stderr.close()


def test_accuracy_help_is_plain_text_and_names_every_option(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["accuracy", "--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":mod:" not in text
    for option in ("--measure", "--rule", "--engine"):  # each with its help line
        assert re.search(rf"\n  {option} \{{[^}}]+\}}\n +\S", text), option
    assert "<= 0" in text  # error measures print as negative numbers


@pytest.mark.parametrize(("argv", "line"), [
    (["simulate", "--epsilom", "1"],
     "mpdp: error: unrecognized arguments: --epsilom 1 (did you mean --epsilon?)"),
    (["simulate", "-k", "1e3"], "mpdp: error: unrecognized arguments: -k 1e3 (did you mean --parties?)"),
    (["sweep", "--epsilon", "1", "--zzz"],
     "mpdp: error: unrecognized arguments: --zzz; mpdp sweep --help lists the options"),
    (["simulate", "--parties", "1e3"], "mpdp: error: argument --parties: '1e3' is not allowed: an "
                                       "integer in digits (1000, not 1e3 or 1.5)"),
])
def test_an_unknown_option_gets_the_option_meant(capsys, argv, line) -> None:
    """One line: the option it most likely meant among the command's (a close spelling, or the option whose
    metavar a short flag names), else where the command's options are listed; a non-integer count says
    what is allowed."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines() == [line]
