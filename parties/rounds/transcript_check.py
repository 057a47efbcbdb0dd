"""Re-verifying a stored randomized-response transcript offline: each answer the store keeps is proven to come
from its party, with nothing but the store and the roster's public keys.

An answer is proven by one of:

* its own Ed25519 signature under its party's roster key (a signed answer: :mod:`mpdp.broker.wire`, or JSON);
* for the unsigned entry of a simulation worker's answer bundle (:data:`mpdp.broker.wire.UNSIGNED_FORMAT`): a
  stored bundle (the store's ``bundles``) that holds the entry byte for byte under the party's id, whose
  signature verifies (:func:`mpdp.broker.bundle.decode_bundle`, for the session and that worker) under a bundle
  key that the party endorsed: a stored part of that worker's "ready" (``worker_reports``) that lists the party,
  names the key, and carries the party's own valid signature (:meth:`mpdp.broker.messages.WorkerStatus.unsigned`).

So a bundled answer is attributable to its party exactly as the observer accepted it: the party signed the
report naming the worker's key, and the worker's key signed the bundle holding the answer. The answer's own
fields must name the stored row's session, round and party. Both the accepted answers (``messages``) and the
kept second answers (``double_releases``) are checked.

What the store's readers (``mpdp export``, reports, :meth:`mpdp.parties.rounds.store.TranscriptStore.load_round`)
take from a ``messages`` row is not the payload but its columns ``kind``, ``reason``, ``repetitions`` and
``symbols``: each must say what the proven answer says (``symbols`` byte for byte its unpacked symbols, empty for
an abstention), and a row without a payload must be ``absent`` with no reason and no symbols (an absence is the
observer's word: nothing proves it). A kept second answer's ``kind`` must be its answer's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pydantic import ValidationError

from mpdp.broker.bundle import decode_bundle
from mpdp.broker.messages import WorkerStatus, decode_answer
from mpdp.broker.signing import load_public_key, verify_message
from mpdp.broker.wire import WireAnswer
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["verify_transcript"]


def _endorsements(store: TranscriptStore, session: str, public_keys: Sequence[bytes]) -> dict[int, dict[bytes, set[int]]]:
    """Worker -> its bundle key (raw 32 bytes) -> the parties whose own valid signature on a stored part of
    the worker's "ready" names that key (a part that does not parse, of another session or naming no key
    endorses nothing; a listed party whose signature fails, or outside the roster, is left out)."""
    found: dict[int, dict[bytes, set[int]]] = {}
    for worker, text in store.query("SELECT worker, payload FROM worker_reports WHERE session = ?", (session,)):
        try:
            status = WorkerStatus.model_validate_json(text)
        except ValidationError:
            continue
        key = status.bundle_public_key()
        if status.session != session or status.worker != worker or status.state != "ready" or key is None:
            continue
        unsigned = set(status.unsigned(public_keys))
        found.setdefault(worker, {}).setdefault(key, set()).update(p for p in status.parties if p not in unsigned)
    return found


def _bundled(store: TranscriptStore, session: str, public_keys: Sequence[bytes]) -> set[tuple[int, bytes]]:
    """The (party, entry bytes) pairs of the stored bundles that verify under a key the party endorsed."""
    endorsed = _endorsements(store, session, public_keys)
    proven: set[tuple[int, bytes]] = set()
    for worker, payload in store.query("SELECT worker, payload FROM bundles WHERE session = ?", (session,)):
        for key, parties in endorsed.get(worker, {}).items():
            try:
                entries = decode_bundle(bytes(payload), load_public_key(key), session=session, worker=worker)
            except ProtocolViolation:
                continue
            proven.update((party, entry) for party, entry in entries if party in parties)
    return proven


#: A ``messages`` row's columns that readers use besides ``kind``: reason, repetitions, the symbols blob.
Columns = tuple[str | None, int, bytes]
#: A stored row: table, round, party, payload (None: absent), kind, and :data:`Columns` (None for
#: ``double_releases``, which keeps no others).
StoredRow = tuple[str, int, int, bytes | None, str, Columns | None]


def _stored_answers(store: TranscriptStore, session: str, rounds: range) -> Iterator[StoredRow]:
    """Every stored row of ``session`` in ``rounds`` (:data:`StoredRow`), the absent included."""
    span = (session, rounds.start, rounds.stop)
    for round_, party, payload, kind, reason, repetitions, symbols in store.query(
            "SELECT round, party, payload, kind, reason, repetitions, symbols FROM messages WHERE session = ? "
            "AND round >= ? AND round < ? ORDER BY round, party", span):
        yield ("messages", int(round_), int(party), None if payload is None else bytes(payload), str(kind),
               (reason, int(repetitions), bytes(symbols)))
    for round_, party, payload, kind in store.query(
            "SELECT round, party, payload, kind FROM double_releases WHERE session = ? AND round >= ? AND round < ? "
            "ORDER BY round, party", span):
        yield "double_releases", int(round_), int(party), bytes(payload), str(kind), None


def _digits(symbols: bytes) -> str:
    """Symbols as the digits ``mpdp export`` shows (the first 12, then ``...``)."""
    return "".join(map(str, symbols[:12])) + ("..." if len(symbols) > 12 else "")


def _column_mismatch(answer: WireAnswer, kind: str, columns: Columns | None) -> str | None:
    """The first stored column that says otherwise than the proven ``answer``, as ``column COLUMN is STORED but
    the signed answer says PROVEN`` (symbols as digits); None when all agree."""
    pairs: list[tuple[str, object, object]] = [("kind", kind, answer.kind)]
    if columns is not None:
        reason, repetitions, symbols = columns
        pairs += [("reason", reason, answer.reason), ("repetitions", repetitions, answer.repetitions),
                  ("symbols", symbols, answer.symbol_array().tobytes())]
    for column, stored, proven in pairs:
        if stored != proven:
            shown = (_digits(stored), _digits(proven)) if isinstance(stored, bytes) and isinstance(proven, bytes) \
                else (stored, proven)
            return f"column {column} is {shown[0]!r} but the signed answer says {shown[1]!r}"
    return None


def verify_transcript(store: TranscriptStore, session: str, public_keys: Sequence[bytes],
                      rounds: range | None = None) -> int:
    """Prove every stored answer of ``session`` (module docstring).

    Args:
        store: the transcript; session: the session id; public_keys: the roster's raw 32-byte Ed25519 public
            keys, indexed by party id (:attr:`mpdp.parties.rounds.roster.Roster.public_keys`).
        rounds: the round indices (step 1) whose answers to prove, those answered under ``public_keys``
            (:meth:`mpdp.parties.rounds.store.TranscriptStore.roster_keys`: a resumed simulation's runs each
            had their own keys); None: every round.

    Returns:
        The number of answers proven (rows of ``messages`` with a payload, and of ``double_releases``).

    Raises:
        ProtocolViolation: for the first answer not proven, naming its table, round and party: ``schema`` (it
            does not parse, or names another session, round or party than its row), ``unknown-party``,
            ``signature`` (its signature does not verify, or no stored bundle under an endorsed key holds it),
            ``column`` (a stored column says otherwise than the proven answer, naming the column; or a row
            without an answer is not ``absent``).
    """
    keys = [load_public_key(key) for key in public_keys]
    proven: set[tuple[int, bytes]] | None = None  # read at the first unsigned answer
    count = 0
    for table, round_, party, payload, kind, columns in _stored_answers(
            store, session, range(2**62) if rounds is None else rounds):
        where = f"{table} round {round_} party {party}"
        if payload is None:  # the absent (messages only: double_releases.payload is NOT NULL)
            if kind != "absent" or columns is None or columns[0] is not None or columns[2]:
                raise ProtocolViolation("column", f"{where}: kind {kind!r} without a stored answer (only 'absent', "
                                                  "with no reason and no symbols, has none)")
            continue
        try:
            answer = decode_answer(payload)
        except ProtocolViolation as exc:
            raise ProtocolViolation(exc.reason, f"{where}: {exc.detail}") from None
        if (answer.session, answer.round, answer.party) != (session, round_, party):
            raise ProtocolViolation("schema", f"{where}: the answer names session {answer.session!r} round "
                                              f"{answer.round} party {answer.party}")
        if not 0 <= party < len(keys):
            raise ProtocolViolation("unknown-party", where)
        if answer.signature:
            if not verify_message(answer, keys[party]):
                raise ProtocolViolation("signature", f"{where}: its signature does not verify under the party's key")
        else:
            if proven is None:
                proven = _bundled(store, session, public_keys)
            if (party, payload) not in proven:
                raise ProtocolViolation("signature", f"{where}: unsigned, and in no stored bundle signed with a "
                                                     "worker key the party endorsed")
        mismatch = _column_mismatch(answer, kind, columns)
        if mismatch is not None:
            raise ProtocolViolation("column", f"{where}: {mismatch}")
        count += 1
    return count
