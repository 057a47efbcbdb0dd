"""``mpdp verify RUN``: a run that ``mpdp simulate --out RUN`` made is proven with nothing but its folder (the store
keeps the parties' public keys), its parties' own signed answers (per-party connections) and their unsigned answers
in their worker's signed bundles (per-worker connections) alike; one changed byte of one stored answer fails it,
exit code 1, naming the round and the party."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
PARTIES, ROUNDS = 5, 2


def _mpdp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpdp", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=200)


def _change_a_byte(store: Path, round_: int, party: int) -> None:
    with sqlite3.connect(store) as db:
        (payload,) = db.execute("SELECT payload FROM messages WHERE round = ? AND party = ?", (round_, party)).fetchone()
        changed = bytearray(payload)
        changed[-1] ^= 0x01  # a signed answer: its signature; an unsigned one: its last symbol
        db.execute("UPDATE messages SET payload = ? WHERE round = ? AND party = ?", (bytes(changed), round_, party))
    db.close()


@pytest.mark.parametrize(("connections", "why"), [
    ("per-party", "its signature does not verify under the party's key"),
    ("per-worker", "unsigned, and in no stored bundle signed with a worker key the party endorsed")])
def test_a_simulated_run_is_proven_and_a_changed_byte_is_named(tmp_path: Path, connections: str, why: str) -> None:
    out = tmp_path / "run"
    run = _mpdp("simulate", "--parties", str(PARTIES), "--rounds", str(ROUNDS), "--repetitions", "20", "--seed", "5",
                "--broker", "embedded", "--workers", "2", "--connections", connections, "--quiet", "--out", str(out))
    assert run.returncode == 0, run.stderr
    session = json.loads((out / "results.json").read_text())["session"]
    verified = _mpdp("verify", str(out))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout == (f"session {session}: {PARTIES * ROUNDS} answers of {PARTIES} parties over {ROUNDS} "
                               "rounds proven with the keys kept in the store (1 run)\n")
    document = json.loads(_mpdp("verify", str(out / "transcripts.sqlite"), "--session", session, "--json").stdout)
    assert (document["kind"], document["proven"], document["answers"], document["failure"]) == (
        "verify", True, PARTIES * ROUNDS, None)

    _change_a_byte(out / "transcripts.sqlite", 1, 3)
    failed = _mpdp("verify", str(out))
    assert failed.returncode == 1 and failed.stdout == "", failed
    assert failed.stderr == (f"mpdp: verify: session {session} in {out / 'transcripts.sqlite'} is not proven: "
                             f"signature: messages round 1 party 3: {why}\n")
