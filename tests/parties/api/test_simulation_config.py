"""One config object for a live run (issue 21): ``mpdp.simulate``'s options are the fields of
:class:`SimulationConfig`, the same names as ``mpdp simulate``'s flags (and so its ``--config`` TOML keys), and
the recorded ones are the ``inputs`` of its documents. No process starts in these tests: every call is refused
before, or only builds the model."""

from __future__ import annotations

import argparse
import inspect
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mpdp
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.cli.args import apply_config
from mpdp.parties.cli.main import build_parser
from mpdp.protocols.errors import ParameterError


def _simulate_parser() -> argparse.ArgumentParser:
    (sub,) = [a for a in build_parser("simulate")._actions if isinstance(a, argparse._SubParsersAction)]
    parser = sub.choices["simulate"]
    assert isinstance(parser, argparse.ArgumentParser)
    return parser


def test_simulate_takes_at_most_twelve_parameters() -> None:
    assert len(inspect.signature(mpdp.simulate).parameters) <= 12
    assert len(inspect.signature(mpdp.simulate_async).parameters) <= 12


def test_every_option_is_a_flag_of_mpdp_simulate_of_the_same_name_and_default() -> None:
    """A parameter added once, everywhere: each field (but the votes array, Python only) is a flag with the
    field's default (the broker's is resolved from its flags; dataset/parties: one of them is required)."""
    parser = _simulate_parser()
    dests = {a.dest for a in parser._actions}
    fields = SimulationConfig.model_fields
    assert sorted(set(fields) - dests) == ["votes"]
    for name, field in fields.items():
        if name in dests and name != "epsilon":  # the flag takes the text "1.0", the field 1.0
            assert parser.get_default(name) == field.default, name
    assert float(parser.get_default("epsilon")) == fields["epsilon"].default


def test_a_config_toml_reaches_the_model_through_the_flags(tmp_path: Path) -> None:
    config = tmp_path / "run.toml"
    config.write_text('parties = 4\nepsilon = "0.5:2"\nrepetitions = 30\nprotocol = "rr"\nparty-decisions = true\n')
    parser = _simulate_parser()
    argv = ["--config", str(config), "--seed", "4"]
    apply_config(parser, argv)
    args = parser.parse_args(argv)
    given = {name: getattr(args, name) for name in SimulationConfig.model_fields if hasattr(args, name)}
    model = SimulationConfig.of(None, given)
    assert (model.parties, model.epsilon, model.repetitions, model.seed, model.party_decisions) == (
        4, "0.5:2", 30, 4, True)


def test_the_documented_run_toml_is_a_config_for_python_too(tmp_path: Path) -> None:
    """The ``mpdp simulate --config`` file of the CLI conventions page, read by Python: the same options (json
    is the command line's, skipped), keywords over the file's."""
    page = Path(__file__).resolve().parents[3] / "docs" / "reference" / "cli-conventions.md"
    readme = page.read_text(encoding="utf-8")
    block = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "run.toml"
    path.write_text("\n".join(line.strip() for line in block.splitlines()) + "\n")
    model = SimulationConfig.from_toml(path, seed=4)
    assert (model.dataset, float(model.epsilon), model.repetitions, model.rule, model.seed, model.out) == (
        "house-votes-84", 1.0, 200, "average", 4, "runs/house")
    path.write_text('parties = 3\nepsilom = 1\n')
    with pytest.raises(ParameterError, match=r"^epsilom=1 is not allowed: an option of a --config TOML"):
        SimulationConfig.from_toml(path)


def test_inputs_are_the_recorded_fields_in_order_with_the_resolved_values() -> None:
    model = SimulationConfig(parties=3, epsilon=0.5, budget=[2.0, 1e-5], workers=2)
    inputs = model.inputs(dataset="random", round_timeout=60.0)
    assert list(inputs) == ["dataset", "epsilon", "delta", "repetitions", "function", "rule", "seed", "protocol",
                            "servers", "threshold", "secure", "party_decisions", "alpha", "round_timeout",
                            "budget", "delta_slack"]
    assert (inputs["dataset"], inputs["epsilon"], inputs["round_timeout"], inputs["budget"]) == (
        "random", 0.5, 60.0, (2.0, 1e-5))


def test_a_config_and_keywords_combine_and_the_model_is_frozen() -> None:
    base = SimulationConfig(dataset="house-votes-84", epsilon=2.0, seed=3)
    changed = SimulationConfig.of(base, {"seed": 4, "repetitions": np.int64(50)})
    assert (changed.dataset, changed.epsilon, changed.seed, changed.repetitions) == ("house-votes-84", 2.0, 4, 50)
    assert base.replace(protocol="mpc").protocol == "mpc" and base.protocol == "rr"
    with pytest.raises(ValueError):
        base.seed = 5  # type: ignore[misc]


@pytest.mark.parametrize("options, line", [
    ({"epsilom": 1.0}, "epsilom=1.0 is not allowed: an option of mpdp.simulate (did you mean epsilon?)"),
    ({"xyzzy": 1.0}, "xyzzy=1.0 is not allowed: an option of mpdp.simulate: dataset, votes, parties,"),
    ({"repetitions": True}, "repetitions=True is not allowed: an integer, not true or false"),
    ({"repetitions": "many"}, "repetitions='many' is not allowed: an integer, not text"),
    ({"parties": 2.5}, "parties=2.5 is not allowed: an integer, not a float"),
    ({"repetitions": 1e3}, "repetitions=1000.0 is not allowed: an integer, not a float (write 1000)"),
    ({"seed": np.float64(3.0)}, "seed=np.float64(3.0) is not allowed: an integer, not a float (write 3)"),
    ({"secure": "maybe"}, "secure='maybe' is not allowed: true or false"),
    ({"epsilon": [1.0, "a"]}, "epsilon=[1.0, 'a'] is not allowed: each party's epsilon (nats): one value, \"LO:HI\""),
    ({"budget": (1.0,)}, "budget=(1.0,) is not allowed: each party's (epsilon, delta) budget, or \"EPS,DELTA\""),
])
def test_a_bad_option_is_one_line_naming_it_and_what_is_allowed(options: dict[str, object], line: str) -> None:
    with pytest.raises(ParameterError) as caught:
        mpdp.simulate(**options)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(line) and "\n" not in message
    assert caught.value.name == next(iter(options))


def test_the_cli_names_the_flag_of_a_bad_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.parties.cli.invoke import refused

    line = refused(capsys, "simulate", "--parties", "3", "--repetitions", "0", "--broker", "embedded")
    assert "--repetitions=0 is not allowed: an integer >= 1" in line


@pytest.mark.parametrize("options, line", [
    ({"epsilon": -1}, "epsilon=-1.0 is not allowed: a number >= 0 (inf allowed)"),
    ({"epsilon": float("nan")}, "epsilon=nan is not allowed: a number >= 0 (inf allowed)"),
    ({"epsilon": "2:1"}, "epsilon='2:1' is not allowed: LO:HI with finite 0 <= LO <= HI"),
    ({"epsilon": "1:inf"}, "epsilon='1:inf' is not allowed: LO:HI with finite 0 <= LO <= HI"),
    ({"epsilon": [0.5, -2.0]}, "epsilon[1]=-2.0 is not allowed: a number >= 0 (inf allowed)"),
    ({"epsilon": []}, "epsilon=[] is not allowed: one value per party, not an empty list"),
    ({"delta": 1.0}, "delta=1.0 is not allowed: a number in [0, 1)"),
    ({"delta": -0.1}, "delta=-0.1 is not allowed: a number in [0, 1)"),
    ({"delta": float("inf")}, "delta=inf is not allowed: a number in [0, 1)"),
    ({"repetitions": 0}, "repetitions=0 is not allowed: an integer >= 1"),
    ({"repetitions": -3}, "repetitions=-3 is not allowed: an integer >= 1"),
    ({"parties": 0}, "parties=0 is not allowed: an integer >= 1"),
    ({"parties": 3, "rounds": -1}, "rounds=-1 is not allowed: an integer >= 1"),
    ({"seed": -1}, "seed=-1 is not allowed: an integer >= 0"),
    ({"workers": 0}, "workers=0 is not allowed: an integer >= 1"),
    ({"alpha": 1.0}, "alpha=1.0 is not allowed: a level in (0, 1)"),
    ({"round_timeout": 0.0}, "round_timeout=0.0 is not allowed: a finite number of seconds > 0, or None"),
    ({"time_limit": float("inf")}, "time_limit=inf is not allowed: a finite number of seconds > 0, or None"),
    ({"delta_slack": 1.0}, "delta_slack=1.0 is not allowed: a number in [0, 1)"),
    ({"validators": 65}, "validators=65 is not allowed: an integer in [0, 64]"),
    ({"rule": "best"}, "rule='best' is not allowed: one of average, worst-case"),
    ({"protocol": "smc"}, "protocol='smc' is not allowed: one of rr, curator, mpc"),
    ({"connections": "many"}, "connections='many' is not allowed: one of auto, per-party, per-worker"),
    ({"budget": "2"}, "budget='2' is not allowed: EPS,DELTA, e.g. 2.0,1e-5"),
    ({"executor": "tcp://h:1"}, "executor='tcp://h:1' is not allowed: dask://HOST:PORT"),
    ({"seed": 3, "secure": True}, "seed=3 is not allowed: no seed in secure mode (secure=True)"),
    ({"force": True}, "force=True is not allowed: only with out=DIR, the run's folder"),
    ({"dataset": "house-votes-84", "parties": 3}, "input='dataset, parties' is not allowed: one of dataset="),
    ({"protocol": "mpc", "servers": 4, "threshold": 2}, "threshold=2 is not allowed: an integer in 0..1 (T < m/2)"),
    ({"protocol": "curator", "epsilon": "0.5:2"}, "epsilon='0.5:2' is not allowed: one value with protocol curator"),
    ({"protocol": "curator", "rule": "worst-case"}, "rule='worst-case' is not allowed: average with protocol"),
])
def test_the_model_itself_refuses_a_value_out_of_range_in_one_line(options: dict[str, object], line: str) -> None:
    """``SimulationConfig(...)`` refuses, before any run, with the keyword's name (not the CLI's flag)."""
    with pytest.raises(ParameterError) as caught:
        SimulationConfig(**options)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(line), message
    assert "\n" not in message and "--" not in message
    assert caught.value.name.split("[")[0] in (*options, "input")


def test_the_edges_of_each_range_are_accepted() -> None:
    model = SimulationConfig(parties=1, rounds=1, epsilon=float("inf"), delta=math.nextafter(1.0, 0.0),
                             repetitions=1, seed=0, alpha=1e-9, validators=64)
    assert (model.parties, model.epsilon, model.repetitions, model.validators) == (1, float("inf"), 1, 64)
    assert SimulationConfig(protocol="mpc", servers=3, threshold=1).threshold == 1
    assert SimulationConfig(epsilon="0:0").epsilon == "0:0"


def test_a_misspelt_field_names_the_closest_one() -> None:
    with pytest.raises(ParameterError) as caught:
        SimulationConfig(repetiton=5)  # type: ignore[call-arg]
    assert str(caught.value).startswith(
        "repetiton=5 is not allowed: an option of SimulationConfig (did you mean repetitions?): dataset, votes, ")


def test_simulate_is_a_function_of_its_own_with_its_signature_and_docstring() -> None:
    """``help(mpdp.simulate)`` shows simulate (its arguments, errors, result), not simulate_async through a wrapper."""
    assert mpdp.simulate.__name__ == "simulate" and not hasattr(mpdp.simulate, "__wrapped__")
    assert list(inspect.signature(mpdp.simulate).parameters) == ["config", "progress", "options"]
    doc = inspect.getdoc(mpdp.simulate) or ""
    assert all(part in doc for part in ("Args:", "Returns:", "Raises:", "ParameterError", ".toml"))
    assert inspect.iscoroutinefunction(mpdp.simulate_async) and not inspect.iscoroutinefunction(mpdp.simulate)


def test_a_toml_path_is_read_as_a_config_not_as_a_dataset(tmp_path: Path) -> None:
    """``mpdp.simulate("run.toml")`` reads the file as ``--config`` does; keywords win over its keys. Refused
    here before any process starts: the file's epsilon is out of range, then a keyword is."""
    from mpdp.parties.api.simulation import _config_of

    path = tmp_path / "run.toml"
    path.write_text('parties = 4\nepsilon = "0.5:2"\nrepetitions = 30\n')
    config = _config_of(path, {"seed": 9})
    assert (config.parties, config.epsilon, config.repetitions, config.seed, config.dataset) == (4, "0.5:2", 30, 9, None)
    assert _config_of(str(path), {}).parties == 4
    assert _config_of("votes.csv", {}).dataset == "votes.csv"
    path.write_text('parties = 4\nepsilon = -2\n')
    with pytest.raises(ParameterError, match=r"^epsilon=-2.0 is not allowed"):
        mpdp.simulate(str(path))
    with pytest.raises(ParameterError, match=r"^repetitions=0 is not allowed"):
        mpdp.simulate(path, epsilon=1.0, repetitions=0)


@pytest.mark.parametrize("argv, expected", [
    (["compare", "--repetitions", "0"], "--repetitions=0 is not allowed: an integer >= 1"),
    (["compare", "--servers", "2", "--threshold", "1"], "--threshold=1 is not allowed: an integer in 0..0 (T < m/2) "
     "(1 colluding servers need at least 3 servers, not 2)"),
    (["compare", "--epsilon", "nan"], "--epsilon=nan is not allowed: a number >= 0 (inf allowed)"),
    (["sweep", "--epsilon", "0.5:2:3", "--parties", "7", "--live", "--round-timeout", "0", "--samples", "3"],
     "--round-timeout=0.0 is not allowed: a finite number of seconds > 0, or None"),
])
def test_compare_and_a_live_sweep_check_their_runs_with_the_model(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                                  expected: str) -> None:
    """``mpdp compare`` and ``mpdp sweep --live`` refuse what SimulationConfig refuses, named by their flags."""
    from tests.parties.cli.invoke import refused

    assert refused(capsys, *argv) == f"mpdp: error: {expected}"


def test_a_live_sweep_from_python_checks_its_run_options_with_the_model() -> None:
    with pytest.raises(ParameterError, match=r"^workers=0 is not allowed: an integer >= 1$"):
        mpdp.sweep("0.5:2:3", parties=5, live=True, workers=0)
    with pytest.raises(ParameterError, match=r"^round_timeout=inf is not allowed: a finite number of seconds > 0"):
        mpdp.sweep("0.5:2:3", parties=5, live=True, round_timeout=float("inf"))


@pytest.mark.parametrize("call, argv, keyword, flag", [
    (lambda missing: mpdp.report(missing), ["report"], "run_dir", "RUN_DIR"),
    (lambda missing: mpdp.simulate(dataset=missing), ["simulate", "--dataset"], "dataset", "--dataset"),
    (lambda missing: mpdp.simulate(parties=3, epsilon=missing + ":1"), ["simulate", "--parties", "3", "--epsilon"],
     "epsilon LO", "--epsilon LO"),
])
def test_one_error_names_the_keyword_in_python_and_the_flag_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], call: Any, argv: list[str], keyword: str, flag: str) -> None:
    from tests.parties.cli.invoke import refused

    missing = str(tmp_path / "missing")
    with pytest.raises(ParameterError) as caught:
        call(missing)
    assert str(caught.value).startswith(f"{keyword}=") and "--" not in str(caught.value).split(" is not allowed")[0]
    typed = missing + ":1" if keyword.startswith("epsilon") else missing
    line = refused(capsys, *argv, typed)
    assert line == "mpdp: error: " + str(caught.value).replace(f"{keyword}=", f"{flag}=", 1)


@pytest.mark.parametrize(("options", "line"), [
    ({"epsilon": True}, "epsilon=True is not allowed: each party's epsilon (nats): one value"),
    ({"secure": "yes"}, "secure='yes' is not allowed: true or false"),
    ({"force": 1}, "force=1 is not allowed: true or false"),
    ({"repetitions": "10"}, "repetitions='10' is not allowed: an integer, not text"),
    ({"alpha": "0.1"}, "alpha='0.1' is not allowed: a number, not text"),
    ({"delta": False}, "delta=False is not allowed: a number, not true or false"),
    ({"servers": 5}, "servers=5 is not allowed: only with protocol mpc (its compute servers), not rr"),
    ({"threshold": 0, "protocol": "curator"},
     "threshold=0 is not allowed: only with protocol mpc (its compute servers), not curator"),
])
def test_no_value_is_coerced_and_mpc_options_need_mpc(options, line) -> None:
    """pydantic's lax mode read True as epsilon 1.0, "yes" as True and "10" as 10; servers and threshold were
    ignored without protocol mpc. Each is now refused in one line."""
    with pytest.raises(ParameterError) as caught:
        SimulationConfig(parties=3, **options)
    assert str(caught.value).startswith(line)


def test_numpy_numbers_and_mpc_servers_are_still_taken() -> None:
    c = SimulationConfig(parties=3, epsilon=[1, np.float64(0.5), 2], delta=np.float32(0.25), repetitions=np.int64(5))
    assert (c.epsilon, c.delta, c.repetitions) == ([1.0, 0.5, 2.0], 0.25, 5)
    c = SimulationConfig(parties=3, protocol="mpc", servers=5, threshold=2)
    assert (c.servers, c.threshold) == (5, 2)
