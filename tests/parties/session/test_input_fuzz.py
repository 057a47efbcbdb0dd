"""Fuzzed text files through the one reading layer (:mod:`mpdp.parties.rounds.text_files`): a ``--config``
TOML, a per-party ``--epsilon`` file and a ``--dataset`` CSV, as bytes on disk (random bytes, or a genuine file
with bytes edited, a byte order mark, Latin-1 text). Each loads, or is one :class:`ParameterError` naming the
option; never another exception. Examples per target: the ``fuzz`` profile (tests/conftest.py; 10^4 with
``MPDP_FUZZ=1``)."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mpdp.parties.cli.args import apply_config
from mpdp.parties.cli.main import build_parser
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.epsilons import parse_mechanisms
from mpdp.protocols.errors import ParameterError

FUZZ = settings(settings.get_profile("fuzz"), suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                      HealthCheck.too_slow])

GENUINE = {
    "config": "epsilon = 0.5\ndelta-slack = 1e-6\nk = 3\n",
    "epsilon": "# per party\n0.5\n1.0, 0.001\ninf\n",
    "dataset": "party,billA,billB\np0,1,0\np1,y,?\np2,n,1\n",
}


@st.composite
def fuzzed(draw: st.DrawFn, kind: str) -> bytes:
    """Random bytes, or the genuine file of ``kind`` with a BOM, re-encoded, or with bytes edited."""
    genuine = GENUINE[kind].encode()
    choice = draw(st.sampled_from(["random", "bom", "latin-1", "utf-16", "edited"]))
    if choice == "random":
        return draw(st.binary(max_size=200))
    if choice == "bom":
        return b"\xef\xbb\xbf" + genuine
    if choice in ("latin-1", "utf-16"):
        return (GENUINE[kind] + "# café\n").encode(choice)
    data = bytearray(genuine)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        data[at:at + draw(st.integers(0, 2))] = draw(st.binary(min_size=0, max_size=3))
    return bytes(data)


@functools.cache  # built once: a parser per example would be most of the fuzz's time
def _compose_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = build_parser("compose")
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return parser, sub.choices["compose"]


@FUZZ
@given(payload=fuzzed("config"))
def test_a_fuzzed_config(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "run.toml"
    path.write_bytes(payload)
    _, compose = _compose_parser()
    try:
        apply_config(compose, ["compose", "--config", str(path)])
    except ParameterError as exc:
        assert "--config" in str(exc) and "\n" not in str(exc).strip()
        event("config: ParameterError")
        return
    event("config: applied")


@FUZZ
@given(payload=fuzzed("epsilon"))
def test_a_fuzzed_epsilon_file(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "eps.txt"
    path.write_bytes(payload)
    try:
        mechanisms = parse_mechanisms(str(path), 0.0, 3, np.random.default_rng(0))
    except ParameterError as exc:
        assert str(exc).startswith("epsilon")
        event("epsilon: ParameterError")
        return
    event("epsilon: loaded")
    assert len(mechanisms) == 3


@FUZZ
@given(payload=fuzzed("dataset"))
def test_a_fuzzed_dataset_file(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "votes.csv"
    path.write_bytes(payload)
    try:
        dataset = load_dataset(str(path))
    except ParameterError:
        event("dataset: ParameterError")
        return
    event("dataset: loaded")
    assert dataset.num_parties >= 1 and len(set(dataset.round_names)) == dataset.num_rounds


@pytest.mark.parametrize("kind", ["bom", "latin-1"])
def test_the_bom_loads_and_latin1_is_one_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "eps.txt"
    text = GENUINE["epsilon"] + "# café\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode() if kind == "bom" else text.encode("latin-1"))
    if kind == "bom":
        assert len(parse_mechanisms(str(path), 0.0, 3, np.random.default_rng(0))) == 3
    else:
        with pytest.raises(ParameterError, match=r"^epsilon=.* in UTF-8 \(byte \d+ is 0xe9"):
            parse_mechanisms(str(path), 0.0, 3, np.random.default_rng(0))


def test_the_genuine_config_applies(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GENUINE["config"].encode())
    parser, compose = _compose_parser()
    apply_config(compose, ["compose", "--config", str(path)])
    args = parser.parse_args(["compose", "--config", str(path)])
    assert (args.epsilon, args.k, args.delta_slack) == ("0.5", 3, 1e-6)
