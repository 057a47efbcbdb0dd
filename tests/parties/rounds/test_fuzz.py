"""Bad input everywhere (issue 9 item 6): property-based fuzz of the observer's message handling and of the
roster, key and broker-settings loaders.

Each target runs the ``fuzz`` hypothesis profile (tests/conftest.py: a few hundred examples in the normal
suite, 10^4 with ``MPDP_FUZZ=1``). The laws:

* the observer's loop (:meth:`RoundEngine.handle` inside a real round over a real SQLite store) never raises,
  whatever bytes arrive on whatever topic; every message it does not take is a counted rejection (the
  store's reject counts add up to the engine's); the recorded rows are exactly the parties' genuinely signed
  answers (a fuzzed message is recorded only if it carries a genuine signature over a genuine answer's content);
* the parser and validator (:class:`SignedReader` then the observer's symbol check) turn any bytes into a
  validated message or a :class:`ProtocolViolation` with a reason, never another exception;
* both wire forms of an answer are fuzzed: the binary layout (:mod:`mpdp.broker.wire`, what parties send:
  random bytes after the format byte, byte edits, fields re-packed with other values) and JSON;
* the loaders (roster, key files, broker settings from URL and environment, dataset CSV) turn any file content into their object or one :class:`ParameterError`, never another exception;
  a key file that loads is the private half of the roster's key.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mpdp.broker import wire
from mpdp.broker.messages import Announcement, PartyMessage, decode_answer
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.signing import generate_key_pair, public_key_of, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.engine import SignedReader, open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.session_files import (
    coordinator_key_path,
    party_key_path,
    read_private_key,
    read_roster,
    write_session,
)
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer, mechanism_symbols
from mpdp.parties.session.datasets import parse_csv
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

FUZZ = settings(settings.get_profile("fuzz"), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REPS, SESSION = 3, "fuzz"
TOPICS = Topics(SESSION)
MECHANISMS = (RandomizedResponse(1.0), RandomizedResponse(0.5), RandomizedResponse(2.0, 0.1))
ROSTER, KEYS = Roster.generate(MECHANISMS)
COORDINATOR = generate_key_pair()
SIGNED = tuple(
    PartyMessage.signed(KEYS[p], session=SESSION, round=0, party=p, repetitions=REPS,
                        symbols=np.array([p % 2, 1, 0], np.uint8)) for p in range(3))
#: What the parties send: the binary form; and the same answers as JSON (another form, same signature).
GENUINE = tuple(m.to_wire() for m in SIGNED)
GENUINE_JSON = tuple(m.model_dump_json() for m in SIGNED)
FIELDS = ("version", "session", "round", "party", "kind", "reason", "repetitions", "symbols", "nonce", "signature")
TOPIC_CHOICES = (*[TOPICS.party(p) for p in (0, 1, 2)] * 4, TOPICS.party(7), f"{TOPICS.prefix}/party/x",
                 f"{TOPICS.prefix}/party/-1", Topics("other").party(0), f"{TOPICS.prefix}/elsewhere")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8)


def _edit_fields(draw: st.DrawFn, target: dict[str, Any], names: list[str]) -> None:
    """Replace (by any JSON value) or remove each named field of ``target``."""
    for name in names:
        if draw(st.booleans()):
            target[name] = draw(json_values)
        else:
            target.pop(name, None)


@st.composite
def mutated_json(draw: st.DrawFn) -> bytes:
    """A genuine answer with some fields replaced, removed or added (JSON values of any type)."""
    document: dict[str, Any] = json.loads(GENUINE_JSON[draw(st.integers(0, 2))])
    _edit_fields(draw, document, draw(st.lists(st.sampled_from(FIELDS + ("extra",)), max_size=4)))
    return json.dumps(document, allow_nan=True).encode()


@st.composite
def retyped_field(draw: st.DrawFn) -> bytes:
    """A genuine answer with one field replaced by a value of the right type (reaches the later checks:
    session, unknown party, signature, symbol range)."""
    document: dict[str, Any] = json.loads(GENUINE_JSON[draw(st.integers(0, 2))])
    name = draw(st.sampled_from(["session", "round", "party", "repetitions", "symbols", "nonce", "signature"]))
    document[name] = draw({
        "session": st.sampled_from([SESSION, "other", "fuzz2"]), "round": st.integers(0, 3),
        "party": st.integers(0, 9), "repetitions": st.integers(1, 5),
        "symbols": st.sampled_from([json.loads(g)["symbols"] for g in GENUINE_JSON] + ["AA==", "/w==", "Pw==", ""]),
        "nonce": st.text("0123456789abcdef", min_size=32, max_size=32),
        "signature": st.sampled_from([json.loads(g)["signature"] for g in GENUINE_JSON]),
    }[name])
    return json.dumps(document).encode()


@st.composite
def repacked_binary(draw: st.DrawFn) -> bytes:
    """A genuine binary answer re-packed with one or two fields replaced by values of the right type (reaches
    the later checks), keeping a genuine signature."""
    answer = wire.decode(GENUINE[draw(st.integers(0, 2))])
    fields: dict[str, Any] = {"session": answer.session, "round": answer.round, "party": answer.party,
                              "repetitions": answer.repetitions, "reason": answer.reason, "nonce": answer.nonce,
                              "packed": answer.packed}
    for name in draw(st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=2)):
        fields[name] = draw({
            "session": st.sampled_from([SESSION, "other", "fuzz2", "-x", "a" * 64]),
            "round": st.integers(0, 2**32 - 1) | st.integers(0, 3), "party": st.integers(0, 2**32 - 1) | st.integers(0, 9),
            "repetitions": st.integers(0, 2**32 - 1) | st.integers(0, 5),
            "reason": st.sampled_from([None, "did-not-vote", "budget-exhausted", "Bad", "-x"]),
            "nonce": st.binary(min_size=16, max_size=16),
            "packed": st.sampled_from([wire.decode(g).packed for g in GENUINE] + [b"", b"\x00", b"\xff", b"\x3f"]),
        }[name])
    signature = wire.decode(GENUINE[draw(st.integers(0, 2))]).signature
    return wire.encode_body(**fields) + signature


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with bytes overwritten, inserted or cut (1 to 6 edits)."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(0, len(out) - 1)))
        action = draw(st.sampled_from(["flip", "insert", "cut"]))
        if action == "flip" and out:
            out[at] ^= draw(st.integers(1, 255))
        elif action == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del out[at:at + draw(st.integers(1, 12))]
    return bytes(out)


payloads = (st.binary(max_size=300) | st.binary(max_size=120).map(lambda b: bytes((wire.FORMAT,)) + b)
            | mutated_json() | retyped_field() | repacked_binary()
            | st.sampled_from(GENUINE_JSON).flatmap(lambda g: mutated_bytes(g.encode()))
            | st.sampled_from(GENUINE).flatmap(mutated_bytes)
            | st.sampled_from(GENUINE + tuple(g.encode() for g in GENUINE_JSON)))
messages = st.tuples(st.sampled_from(TOPIC_CHOICES), payloads)


def _content(payload: bytes) -> bytes:
    """The signed content of an answer, whichever form carried it (binary and JSON of one answer: the same)."""
    return decode_answer(payload).signed_bytes()


GENUINE_CONTENT = {_content(g) for g in GENUINE}


async def _round(fuzz: list[tuple[str, bytes]]) -> tuple[Any, TranscriptStore, int]:
    store = TranscriptStore(None)
    store.open_session(SESSION, 3, REPS, ["r0"], mode="simulation (seeded generators)")
    broker = InMemoryBroker()
    observer = Observer(TOPICS, ROSTER, store, function=parse_function("majority"),
                        measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
    async with open_engine(broker, TOPICS, ROSTER, store, COORDINATOR[0], observer, repetitions=REPS,
                           round_timeout=0.5) as engine:
        running = asyncio.create_task(engine.run_round(0, "r0"))
        await asyncio.sleep(0)  # the task opens the round, then awaits the announcement's publication
        for topic, payload in fuzz:
            engine.handle(topic, payload)  # the observer's loop: must never raise
        for party, genuine in enumerate(GENUINE):
            engine.handle(TOPICS.party(party), genuine)
        outcome = await running
        rejected = engine.messages_rejected
    return outcome, store, rejected


@FUZZ
@given(st.lists(messages, max_size=6))
def test_the_observer_loop_survives_any_message_and_records_only_genuine_answers(fuzz: list[tuple[str, bytes]]) -> None:
    outcome, store, rejected = asyncio.run(_round(fuzz))
    with store:
        rows = list(store.messages(SESSION))
        assert sum(store.rejects(SESSION).values()) == rejected  # every rejection counted in the store
        for _, reason in store.rejects(SESSION):
            event(f"round had a rejection: {reason}")
    assert outcome.status == "complete" and outcome.participants.tolist() == [0, 1, 2]
    assert len(rows) == 3
    for row in rows:  # recorded: a genuinely signed answer of that party (maybe re-serialised), nothing else
        payload = row["payload"]
        assert isinstance(payload, bytes)
        message = decode_answer(payload)
        assert message.party == row["party"] and verify_message(message, ROSTER.public_keys[message.party])
        assert _content(payload) in GENUINE_CONTENT


@FUZZ
@given(st.sampled_from(TOPIC_CHOICES), payloads)
def test_the_parser_and_validator_reject_with_a_reason_or_return_a_verified_message(topic: str, payload: bytes) -> None:
    reader = SignedReader(SESSION, ROSTER)
    event("binary form" if payload[:1] == bytes((wire.FORMAT,)) else "JSON or other bytes")
    try:
        message, where = reader.read(decode_answer, topic, payload, TOPICS.party_of(topic), "round")
        symbols = mechanism_symbols(message, ROSTER.mechanisms[message.party], where)
    except ProtocolViolation as exc:
        assert exc.reason in {"topic", "schema", "session", "unknown-party", "signature", "symbol-range"}
        event(f"rejected: {exc.reason}")
        return
    event("accepted (a genuine answer's content)")
    assert verify_message(message, ROSTER.public_keys[message.party]) and message.signed_bytes() in GENUINE_CONTENT
    assert symbols.shape == (REPS,)


def test_the_fuzz_reaches_both_outcomes() -> None:
    """The strategies are not all rejections: genuine answers (either form) pass the validator; a cut byte
    fails it."""
    reader = SignedReader(SESSION, ROSTER)
    for genuine in (GENUINE[1], GENUINE_JSON[1].encode()):
        message, _ = reader.read(decode_answer, TOPICS.party(1), genuine, 1, "round")
        assert message.party == 1
        with pytest.raises(ProtocolViolation) as caught:
            reader.read(decode_answer, TOPICS.party(1), genuine[:-2], 1, "round")
        assert caught.value.reason == "schema"


# -- the loaders ------------------------------------------------------------------------------------------------

@st.composite
def mutated_file(draw: st.DrawFn, original: str) -> bytes:
    """A genuine file with bytes edited, or with fields (of the top level or of one party) edited."""
    if draw(st.booleans()):
        return draw(mutated_bytes(original.encode()))
    document = json.loads(original)
    target = document
    if "parties" in document and draw(st.booleans()):
        target = document["parties"][draw(st.integers(0, len(document["parties"]) - 1))]
    _edit_fields(draw, target, draw(st.lists(st.sampled_from([*target, "extra"]), min_size=1, max_size=3)))
    return json.dumps(document, allow_nan=True).encode()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A session written by ``mpdp keys``'s writer, and its roster as read back."""
    folder = tmp_path_factory.mktemp("session")
    write_session(folder, SESSION, MECHANISMS)
    return folder, read_roster(folder / "roster.json")


@FUZZ
@given(data=st.data())
def test_the_roster_loader(files: tuple[Path, Any], data: st.DataObject) -> None:
    folder, _ = files
    original = (folder / "roster.json").read_text()
    payload = data.draw(st.binary(max_size=400) | mutated_file(original))
    target = folder / "fuzzed-roster.json"
    target.write_bytes(payload)
    try:
        facts = read_roster(target)
    except ParameterError as exc:
        assert "--roster" in str(exc)
        event("roster: ParameterError")
        return
    event("roster: loaded")
    assert facts.roster.k >= 1 and len(facts.coordinator_public_key) == 32


@FUZZ
@given(data=st.data(), party=st.sampled_from([1, 2, None]))
def test_the_key_loader(files: tuple[Path, Any], data: st.DataObject, party: int | None) -> None:
    folder, facts = files
    original = party_key_path(folder / "parties", 1).read_text()
    target = folder / "fuzzed.key"
    target.write_bytes(data.draw(st.binary(max_size=300) | mutated_file(original)))
    os.chmod(target, 0o600)
    try:
        private = read_private_key(target, facts, party)
    except ParameterError as exc:
        assert "--keys" in str(exc)
        event("key: ParameterError")
        return
    event("key: loaded")
    expected = facts.coordinator_public_key if party is None else facts.roster.public_keys[party]
    assert public_key_of(private) == expected  # a key that loads is the private half of the roster's key


def test_the_genuine_files_load(files: tuple[Path, Any]) -> None:
    folder, facts = files
    assert public_key_of(read_private_key(coordinator_key_path(folder / "coordinator"), facts, None)) == \
        facts.coordinator_public_key


schemes = st.sampled_from(["mqtt", "mqtts", "ws", "wss", "tcp", "http", "", "embedded", "mosquitto", "auto"])
url_text = st.one_of(
    st.text(max_size=60),
    st.builds(lambda s, user, host, port, path: f"{s}://{user}{host}{port}{path}", schemes,
              st.sampled_from(["", "u:p@", "u@", ":p@", "@", "a:b:c@"]),
              st.sampled_from(["127.0.0.1", "localhost", "[::1]", "", "h" * 300, "exa mple", "é.com"]),
              st.sampled_from(["", ":1883", ":0", ":65536", ":-1", ":x", ":"]),
              st.sampled_from(["", "/", "/mqtt", "/a?b#c", "/%zz"])))
environments = st.dictionaries(st.sampled_from(["MPDP_BROKER_USERNAME", "MPDP_BROKER_PASSWORD", "MPDP_BROKER_URL",
                                                "MPDP_BROKER_CAFILE", "MPDP_BROKER_PROTOCOL"]),
                               st.text(max_size=30), max_size=3)


@FUZZ
@given(url_text | st.none(), environments, st.sampled_from([None, "3.1.1", "5", "4", ""]))
def test_the_broker_settings_loader(url: str | None, environ: dict[str, str], protocol: str | None) -> None:
    try:
        found = BrokerSettings.from_url(url, environ, protocol=protocol)
    except ParameterError:
        event("settings: ParameterError")
        return
    event(f"settings: {found.kind}")
    assert found.kind in ("auto", "mosquitto", "embedded", "external")
    if found.kind == "external":
        assert found.host and found.port is not None and 1 <= found.port <= 65535


def test_an_announcement_is_no_answer() -> None:
    """A coordinator-signed announcement sent on a party topic: a schema rejection, not an answer."""
    announcement = Announcement.signed(COORDINATOR[0], session=SESSION, kind="round", round=0, repetitions=REPS)
    try:
        SignedReader(SESSION, ROSTER).read(decode_answer, TOPICS.party(0), announcement.to_wire(), 0, "round")
    except ProtocolViolation as exc:
        assert exc.reason == "schema"
    else:
        raise AssertionError("an announcement was read as an answer")


csv_cells = st.sampled_from(["1", "0", "y", "n", "?", "", "Y", " 1", "x", "2", "name", "\ufeff", '"', "\n", ",", "é"])
csv_text = st.text(max_size=200) | st.lists(st.lists(csv_cells, min_size=1, max_size=5), max_size=6).map(
    lambda rows: "\n".join(",".join(row) for row in rows))


@FUZZ
@given(csv_text, st.sampled_from([None, True, False]))
def test_the_dataset_loader(text: str, label_column: bool | None) -> None:
    try:
        dataset = parse_csv(text, "fuzzed.csv", label_column)
    except ParameterError:
        event("dataset: ParameterError")
        return
    event("dataset: loaded")
    assert dataset.num_parties >= 1 and dataset.num_rounds >= 1


def test_a_roster_whose_fields_disagree_names_the_file(files: tuple[Path, Any]) -> None:
    """Found by the fuzz: four_output false with delta > 0 was a ParameterError naming neither file nor party."""
    folder, _ = files
    document = json.loads((folder / "roster.json").read_text())
    document["parties"][2]["four_output"] = False  # party 2 has delta 0.1
    target = folder / "disagreeing-roster.json"
    target.write_text(json.dumps(document))
    with pytest.raises(ParameterError, match="--roster=.*disagreeing-roster.json.*four_output"):
        read_roster(target)
