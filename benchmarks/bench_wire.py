"""The party answer's hot path, per message: the binary wire form with PyNaCl against the JSON form with
``cryptography`` (the path before issue 13), both measured in this run.

Printed, per message of R repetitions (1 and 1,000): bytes on the wire; the party's sign + encode (JSON, the
pydantic ``PartyMessage.signed(...).to_wire()``, and the direct :func:`mpdp.broker.wire.sign_answer` the party
uses); the
observer's parse + signature check (:meth:`SignedReader.read` with :func:`mpdp.broker.messages.decode_answer`,
against pydantic's ``model_validate_json`` plus ``cryptography``'s Ed25519 verify of the canonical JSON);
the raw Ed25519 verify of each library; and one round of k = 1,000 messages written to SQLite with one
``executemany`` against one ``execute`` per message (the store before).

Run: python benchmarks/bench_wire.py [N]   (N messages per figure, default 2,000)
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from mpdp.broker.messages import PartyMessage, decode_answer
from mpdp.broker.packing import pack_symbols
from mpdp.broker.signing import PLACEHOLDER_SIGNATURE, canonical_bytes, load_private_key, load_public_key
from mpdp.broker.topics import Topics
from mpdp.broker.wire import sign_answer
from mpdp.parties.rounds.engine import SignedReader
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import MessageRows, RecordedMessage, TranscriptStore
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

SESSION = "bench-00000000"


def per_call(fn: Callable[[], object], n: int) -> float:
    """Best of 3 runs of ``n`` calls: microseconds per call."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / n * 1e6


def json_signed(old_key: Ed25519PrivateKey, repetitions: int, symbols: np.ndarray) -> str:
    """The party's JSON answer as before: a version-1 model signed by ``cryptography`` over canonical JSON."""
    draft = PartyMessage.model_validate({
        "version": 1, "session": SESSION, "round": 3, "party": 7, "kind": "symbols", "repetitions": repetitions,
        "symbols": pack_symbols(symbols),
        "nonce": os.urandom(16).hex(), "signature": PLACEHOLDER_SIGNATURE})
    signature = base64.b64encode(old_key.sign(canonical_bytes(draft))).decode()
    return draft.model_copy(update={"signature": signature}).model_dump_json()


def store_round(k: int, bulk: bool) -> float:
    """Seconds to write one round of ``k`` messages in one transaction."""
    with tempfile.TemporaryDirectory() as folder:
        with TranscriptStore(Path(folder) / "t.sqlite") as store:
            store.open_session(SESSION, k, 1, ["r"], mode="simulation (seeded generators)")
            messages = tuple(RecordedMessage(p, "symbols", None, np.array([p % 2], np.uint8), os.urandom(100))
                             for p in range(k))
            start = time.perf_counter()
            with store.transaction() as db:
                if bulk:
                    MessageRows(1, messages).write(db, SESSION, 0, time.time())
                else:  # before: one INSERT per message
                    for m in messages:
                        db.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                                   (SESSION, 0, m.party, m.kind, m.reason, 1, m.symbols.tobytes(), m.payload,
                                    time.time()))
            return time.perf_counter() - start


def main(n: int) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)")
    private = os.urandom(32)
    old_key = Ed25519PrivateKey.from_private_bytes(private)
    old_public: Ed25519PublicKey = old_key.public_key()
    roster = Roster((RandomizedResponse(1.0),) * 8, tuple(old_public.public_bytes_raw() for _ in range(8)))
    reader, topic = SignedReader(SESSION, roster), Topics(SESSION).party(7)
    new_key, new_public = load_private_key(private), load_public_key(old_public.public_bytes_raw())
    print(f"{'figure (per message)':<44} {'R=1':>10} {'R=1000':>10}")
    rows: dict[str, list[str]] = {}
    for repetitions in (1, 1000):
        symbols = np.random.default_rng(0).integers(0, 2, repetitions).astype(np.uint8)
        text = json_signed(old_key, repetitions, symbols)
        binary = PartyMessage.signed(private, session=SESSION, round=3, party=7, repetitions=repetitions,
                                     symbols=symbols).to_wire()

        def old_read() -> None:
            message = PartyMessage.model_validate_json(text)
            old_public.verify(base64.b64decode(message.signature), canonical_bytes(message))

        def old_sign() -> None:
            json_signed(old_key, repetitions, symbols)

        figures = {
            "bytes: JSON (before)": float(len(text)), "bytes: binary": float(len(binary)),
            "sign+encode, JSON + cryptography (before) us": per_call(old_sign, n),
            "sign+encode, binary + PyNaCl, pydantic us": per_call(lambda: PartyMessage.signed(
                new_key, session=SESSION, round=3, party=7, repetitions=repetitions, symbols=symbols).to_wire(), n),
            "sign+encode, binary + PyNaCl, direct us": per_call(lambda: sign_answer(
                new_key, session=SESSION, round=3, party=7, repetitions=repetitions, symbols=symbols).to_wire(), n),
            "parse+verify, JSON + cryptography (before) us": per_call(old_read, n),
            "parse+verify, binary + PyNaCl (read) us": per_call(
                lambda: reader.read(decode_answer, topic, binary, 7, "round"), n),
            "raw verify, cryptography us": per_call(
                lambda: old_public.verify(binary[-64:], b"mpdp/party-message/v2\n" + binary[:-64]), n),
            "raw verify, PyNaCl us": per_call(
                lambda: new_public.verify(b"mpdp/party-message/v2\n" + binary[:-64], binary[-64:]), n),
        }
        for name, value in figures.items():
            rows.setdefault(name, []).append(f"{value:10.1f}")
    for name, values in rows.items():
        print(f"{name:<44} {' '.join(values)}")
    loop, bulk = min(store_round(1000, False) for _ in range(3)), min(store_round(1000, True) for _ in range(3))
    print(f"SQLite, one round of k=1000: one execute per message (before) {loop * 1e3:.1f} ms, "
          f"executemany {bulk * 1e3:.1f} ms ({loop / bulk:.1f}x)")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
