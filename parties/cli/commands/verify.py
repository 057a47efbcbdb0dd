"""``mpdp verify RUN``: a run's stored transcript checked offline, every stored answer proven to come from its party.

RUN is a run's folder (``mpdp simulate --out RUN``, ``mpdp observe --out RUN``) or its transcripts.sqlite. Each
answer the store keeps (accepted, and second answers kept as proof of a double release) must carry its party's
valid Ed25519 signature, or, sent unsigned in a simulation worker's bundle, lie byte for byte in a stored bundle
signed with a worker key that the party endorsed in its own signed "ready" report; its fields must name the
stored session, round and party. The public keys are those the store keeps of each run (simulate and observe
record them), or with --roster those of a roster.json that mpdp keys wrote.

What mpdp export and the reports read besides the signed answers is checked against them: each stored row's
kind, reason, repetitions and symbols columns must say what its proven answer says (a row without an answer must
be absent); each round record must list as answering or abstaining exactly the parties whose proven answers do,
with the status they give; its decision rows must be repetitions 0..R-1, -1 for an undecided round and an output
(>= 0) for a decided one. Not proven: which output each decided repetition holds (the decision rule's mechanisms
and generator are not stored), absences (nothing is signed for them: an answer deleted along with its party's
place in the round record's participants, set down as absent, is not seen), and the received/rejected counts.

Exit code 0: every stored answer is proven and all of the above agrees; 1: not (the first problem is named: its
table, its round index from 0 as in mpdp export, its party or repetition, the column, and why: signature,
schema, unknown-party, column, missing, round-record, decisions); 2: no transcript, a session not stored, a
roster of another session, or a store that keeps no keys and no --roster.
"""

from __future__ import annotations

import argparse
import sys

from mpdp.parties.cli.args import emit, option_names, plain_text

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp simulate --parties 5 --rounds 2 --repetitions 3 --out run/ && mpdp verify run/
      session sim-8dcd351779b0: 10 answers of 5 parties over 2 rounds proven with the keys kept in the
      store (1 run)
      the stored symbols, round records and decision rows agree with them; not proven: which output each
      decided repetition holds (...), absences, and the received/rejected counts (exit code 0)
  a changed byte of one stored answer:
      mpdp: verify: session sim-8dcd351779b0 in run/transcripts.sqlite is not proven: signature: messages
      round 1 party 4: its signature does not verify under the party's key      (exit code 1)
  a flipped bit in the symbols column that mpdp export reads:
      ... is not proven: column: messages round 0 party 0: column symbols is '0' but the signed answer
      says '1'                                                                  (exit code 1)
  a deleted answer row:
      ... is not proven: missing: round 0 party 2: the round record lists it in participants but messages
      holds no stored answer                                                    (exit code 1)
  mpdp verify run/transcripts.sqlite --session sim-8dcd351779b0 --json | jq .proven
  mpdp verify deployment/ --roster keys/roster.json     # an observe --out folder, the roster of mpdp keys
"""

def _run(args: argparse.Namespace) -> int:
    from mpdp.parties.session.verify import NOT_PROVEN, verify_run
    from mpdp.protocols.numerics.cost import noun

    with option_names(run=("RUN", args.run_path), session="--session", roster="--roster"):
        result = verify_run(args.run_path, args.session, args.roster)
    emit(args, {"store": str(result.store), "session": result.session, "parties": result.parties,
                "rounds": result.rounds, "keys": result.keys, "answers": result.answers, "proven": result.proven,
                "failure": result.failure, "not_proven": NOT_PROVEN})
    if result.failure is not None:
        print(f"mpdp: verify: session {result.session} in {result.store} is not proven: {result.failure}",
              file=sys.stderr)
        return 1
    print(f"session {result.session}: {result.answers:,} {noun(result.answers, 'answer')} of {result.parties:,} "
          f"{noun(result.parties, 'party', 'parties')} over {result.rounds:,} {noun(result.rounds, 'round')} proven "
          f"with {result.keys}\nthe stored symbols, round records and decision rows agree with them; not proven: "
          f"{NOT_PROVEN}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``verify`` sub-command."""
    p = subparsers.add_parser("verify", description=plain_text(__doc__), epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_path", metavar="RUN", help="a run's --out folder (holds transcripts.sqlite) or the .sqlite file")
    p.add_argument("--session", metavar="ID", help="the session to verify (default: the store's only one)")
    p.add_argument("--roster", metavar="FILE", help="a roster.json (mpdp keys) whose public keys hold for every "
                                                    "round (default: the keys the store keeps)")
    p.set_defaults(run=_run)
