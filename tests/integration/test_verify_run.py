"""``mpdp verify RUN``: a run that ``mpdp simulate --out RUN`` made is proven with nothing but its folder (the store
keeps the parties' public keys), its parties' own signed answers (per-party connections) and their unsigned answers
in their worker's signed bundles (per-worker connections) alike; one changed byte of one stored answer fails it,
exit code 1, naming the round and the party. So do what mpdp export and the reports read besides the payloads: a
flipped bit in the symbols column, a deleted answer, a decision row of a round that decided set to "no decision"
(each exit code 1, named); the run untouched passes (exit code 0)."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mpdp.parties.session.verify import NOT_PROVEN

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
PARTIES, ROUNDS = 5, 2


AGREE = f"the stored symbols, round records and decision rows agree with them; not proven: {NOT_PROVEN}\n"


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
                               "rounds proven with the keys kept in the store (1 run)\n" + AGREE)
    document = json.loads(_mpdp("verify", str(out / "transcripts.sqlite"), "--session", session, "--json").stdout)
    assert (document["kind"], document["proven"], document["answers"], document["failure"]) == (
        "verify", True, PARTIES * ROUNDS, None)
    assert document["not_proven"] == NOT_PROVEN

    _change_a_byte(out / "transcripts.sqlite", 1, 3)
    failed = _mpdp("verify", str(out))
    assert failed.returncode == 1 and failed.stdout == "", failed
    assert failed.stderr == (f"mpdp: verify: session {session} in {out / 'transcripts.sqlite'} is not proven: "
                             f"signature: messages round 1 party 3: {why}\n")


def test_what_export_reads_is_checked_against_the_proven_answers(tmp_path: Path) -> None:
    """The newcomer's reproduction: ``mpdp simulate --parties 5 --rounds 3 --repetitions 1 --seed 1``, then one
    stored row edited with sqlite3 (a copy each time); mpdp export shows the edited symbol, mpdp verify names it."""
    out = tmp_path / "run"
    run = _mpdp("simulate", "--parties", "5", "--rounds", "3", "--repetitions", "1", "--seed", "1", "--broker",
                "embedded", "--quiet", "--out", str(out))
    assert run.returncode == 0, run.stderr
    session = json.loads((out / "results.json").read_text())["session"]
    untouched = _mpdp("verify", str(out))
    assert (untouched.returncode, untouched.stdout) == (0, f"session {session}: 15 answers of 5 parties over 3 rounds "
                                                           "proven with the keys kept in the store (1 run)\n" + AGREE)
    with sqlite3.connect(out / "transcripts.sqlite") as db:
        (symbol,), = db.execute("SELECT symbols FROM messages WHERE round = 0 AND party = 0").fetchall()
        statuses = [status for (status,) in db.execute("SELECT status FROM rounds ORDER BY round")]
    db.close()
    assert statuses == ["complete"] * 3  # every round decided: its decisions are outputs, never -1
    flipped = bytes([1 - symbol[0]])
    for change, parameters, failure in (
            ("UPDATE messages SET symbols = ? WHERE round = 0 AND party = 0", (flipped,),
             f"column: messages round 0 party 0: column symbols is '{flipped[0]}' but the signed answer says "
             f"'{symbol[0]}'"),
            ("DELETE FROM messages WHERE round = 1 AND party = 2", (),
             "missing: round 1 party 2: the round record lists it in participants but messages holds no stored answer"),
            ("UPDATE decisions SET decision = -1 WHERE round = 2", (),
             "decisions: decisions round 2 repetition 0: -1, an output (>= 0) expected")):
        copy = tmp_path / f"copy-{len(failure)}"
        shutil.copytree(out, copy)
        with sqlite3.connect(copy / "transcripts.sqlite") as db:
            db.execute(change, parameters)
        db.close()
        if "symbols" in change:  # what the newcomer saw: export shows the edited bit
            exported = _mpdp("export", str(copy), "--out", str(copy / "t.csv"))
            assert exported.returncode == 0, exported.stderr
            with (copy / "t.csv").open() as fh:
                row = next(r for r in csv.DictReader(fh) if (r["round"], r["party"]) == ("0", "0"))
            assert row["symbol"] == str(flipped[0])
        failed = _mpdp("verify", str(copy))
        assert (failed.returncode, failed.stdout) == (1, ""), failed
        assert failed.stderr == (f"mpdp: verify: session {session} in {copy / 'transcripts.sqlite'} is not proven: "
                                 f"{failure}\n")
