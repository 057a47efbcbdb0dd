"""parties.cli.errors: an exception group becomes one line, its first cause and a count of the rest
(issue 10, item 5: "ExceptionGroup (1992 sub-exceptions)")."""

from __future__ import annotations

import argparse

import pytest

from mpdp.parties.cli import main as cli_main
from mpdp.parties.cli.errors import error_line, first_cause, leaves
from mpdp.protocols.errors import TransportError


def _group() -> ExceptionGroup:
    timeouts = [TimeoutError(f"party {i} timed out") for i in range(1991)]
    nested = ExceptionGroup("worker 1", [*timeouts[:1000], TransportError("broker went away")])
    return ExceptionGroup("parties", [nested, ExceptionGroup("worker 2", timeouts[1000:])])


def test_leaves_are_counted_depth_first() -> None:
    found = leaves(_group())
    assert len(found) == 1992 and str(found[0]) == "party 0 timed out"


def test_the_first_mpdp_error_is_the_cause_and_the_rest_are_counted() -> None:
    first, rest = first_cause(_group())
    assert isinstance(first, TransportError) and len(rest) == 1991
    assert error_line(_group()) == "broker went away (and 1,991 more: 1,991 TimeoutError)"


def test_without_an_mpdp_error_the_first_leaf_is_named_with_its_type() -> None:
    group = ExceptionGroup("parties", [OSError("connection refused"), TimeoutError("late"), TimeoutError("later")])
    assert error_line(group) == "OSError: connection refused (and 2 more: 2 TimeoutError)"


def test_an_error_surfaced_from_a_group_counts_the_group() -> None:
    cause = TransportError("lost")
    group = ExceptionGroup("g", [cause, TimeoutError("x")])
    try:
        raise cause from group
    except TransportError as exc:
        assert error_line(exc) == "lost (and 1 more: 1 TimeoutError)"
    assert error_line(TransportError("alone")) == "alone"


class _Failing:
    """A parser whose command raises ``group`` (what a session's task groups can raise)."""

    def __init__(self, group: ExceptionGroup) -> None:
        self.group = group

    def parse_known_args(self, argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
        return argparse.Namespace(run=self.run), []

    def run(self, args: argparse.Namespace) -> int:
        raise self.group


@pytest.mark.parametrize("group,code,line", [
    (_group(), 2, "mpdp: error: broker went away (and 1,991 more: 1,991 TimeoutError)"),
    (ExceptionGroup("g", [OSError("refused")]), 1, "mpdp: error: OSError: refused"),
])
def test_main_prints_one_line(group: ExceptionGroup, code: int, line: str, capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main, "build_parser", lambda *commands: _Failing(group))
    monkeypatch.setattr(cli_main, "value_options", lambda parser: frozenset())
    assert cli_main.main(["simulate"]) == code
    assert capsys.readouterr().err.strip().splitlines() == [line]


def test_api_errors_name_keywords_and_the_command_line_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """broker= and validators= refusals of the Python API name its keywords (they said --broker); mpdp simulate
    names the same errors by its flags (flag_named)."""
    import mpdp
    from mpdp.protocols.errors import ParameterError
    from tests.parties.cli.invoke import refused
    allowed = ("'auto', 'mosquitto', 'embedded' or mqtt|mqtts|ws|wss://[USER[:PASSWORD]@]HOST[:PORT][/PATH]"
               "[?protocol=3.1.1|5&timeout=SECONDS]")
    embedded = "0 with the embedded broker (no MQTT 5 shared subscriptions): broker mosquitto or an external broker URL"
    for options, line in (({"broker": "zz://x"}, f"broker='zz://x' is not allowed: {allowed}"),
                          ({"broker": "embedded", "validators": 2}, f"validators=2 is not allowed: {embedded}")):
        with pytest.raises(ParameterError) as caught:
            mpdp.simulate(parties=3, progress=False, **options)
        assert str(caught.value) == line
    assert refused(capsys, "simulate", "--parties", "3", "--broker", "zz://x") == (
        f"mpdp: error: --broker='zz://x' is not allowed: {allowed}")
    assert refused(capsys, "simulate", "--parties", "3", "--broker", "embedded", "--validators", "2") == (
        f"mpdp: error: --validators=2 is not allowed: {embedded}")


@pytest.mark.parametrize(("epsilon", "api", "cli"), [
    ("0.1:2:100000", "fewer points or samples, jobs=N, or time_limit=SECONDS",
     "fewer points or samples, --jobs N, or --time-limit SECONDS"),
    ("0:2:3", "LO > 0 on a log scale (or scale='linear')", "LO > 0 on a log scale (or --scale linear)"),
])
def test_a_refusal_names_keywords_to_the_api_and_options_to_the_command_line(
        capsys: pytest.CaptureFixture[str], epsilon: str, api: str, cli: str) -> None:
    """A CostLimitError said --time-limit to API callers: the library words its alternatives as keywords
    (time_limit=SECONDS, scale='linear'), the command line as its options (flag_named)."""
    import mpdp
    from mpdp.protocols.errors import ParameterError
    from tests.parties.cli.invoke import refused
    with pytest.raises(ParameterError) as caught:
        mpdp.sweep(epsilon, parties=101)
    assert str(caught.value).endswith(api) and "--" not in str(caught.value)
    assert refused(capsys, "sweep", "--epsilon", epsilon, "--parties", "101").endswith(cli)


def test_the_command_line_names_its_options_where_the_api_names_keywords(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refusals said ``--force=True``, ``only with out``, ``or resume=False``, ``omitted with total_delta``,
    ``--epsilon=None ... (the graph file has no eps)`` without a graph file, and ``--parties with delta > 0=61``."""
    from tests.parties.cli.invoke import refused
    cases = [
        (["simulate", "--parties", "5", "--rounds", "1", "--force"],
         "--force is not allowed: only with --out DIR, the run's folder (it replaces an earlier run's files there)"),
        (["simulate", "--parties", "5", "--rounds", "1", "--out", str(tmp_path), "--resume"],
         f"--out={str(tmp_path)!r} is not allowed: a run's folder holding its results.json (nothing to resume "
         "there): the folder named when the run started, or without --resume"),
        (["compose", "--epsilon", "0.1", "-k", "3", "--total-delta", "1e-5", "--delta-slack", "1e-6"],
         "--delta-slack=1e-06 is not allowed: omitted when --total-delta D is given (one or the other)"),
        (["mechanism", "--graph", "majority:3"], "--epsilon is required: a number >= 0 (majority:3 gives none of its own)"),
        (["sweep", "--epsilon", "1", "--delta", "0.1", "--parties", "61"],
         "--parties='61' is not allowed: at most 60 (with delta > 0, four-output randomized response; --delta 0, "
         "pure randomized response, holds thousands of parties)"),
    ]
    for argv, line in cases:
        assert refused(capsys, *argv) == f"mpdp: error: {line}", argv


def test_a_graph_file_without_eps_says_so(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import mpdp
    from mpdp.protocols.errors import ParameterError
    with pytest.raises(ParameterError) as caught:
        mpdp.mechanism(graph="majority:3")
    assert str(caught.value) == "epsilon=None is not allowed: a number >= 0 (majority:3 gives none of its own)"


def test_a_skipped_worst_case_names_the_option_in_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    """The accuracy text said ``(time_limit=SECONDS)``; its --json keeps the API's words (the API document)."""
    from tests.parties.cli.invoke import ok
    text = ok(capsys, "accuracy", "--epsilon", "1*1000", "--function", "sum", "--time-limit", "5")
    skipped = next(line for line in text.splitlines() if "not computed" in line)
    assert skipped.endswith("over the 5 s time limit: use the average rule (exact at any size), or allow more time "
                            "(--time-limit SECONDS)")


def test_the_sweeps_lp_limit_is_named_with_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.parties.cli.invoke import refused
    line = refused(capsys, "sweep", "--epsilon", "0.1:2:20", "--parties", "20000", "--time-limit", "1")
    assert line.endswith("over the 60 s time limit of one point's LP (fixed: --time-limit SECONDS bounds the whole "
                         "sweep's estimate, not one LP): the worst-case rule of majority for 20,000 parties: use "
                         "--rule average (exact at any size), or fewer parties")
