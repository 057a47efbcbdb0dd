"""The folder of one live run (``mpdp simulate``): nothing is kept in memory only.

Every run has a folder: ``out`` when given (one run per folder, :func:`mpdp.parties.cli.args.fresh_output_dir`),
else a new ``mpdp-run-XXXX`` under the temporary directory (:func:`tempfile.mkdtemp`; named on standard error
at the start unless quiet, never deleted). The transcript store there (``transcripts.sqlite``) holds each round once it
is decided; ``results.json`` is written at the start (``run.status`` ``running``) and again at the end:
``complete`` with every round's results, or ``failed`` / ``interrupted`` with the error and each round's
status. ``resume=True`` (``mpdp simulate --resume --out DIR``) continues the session of a folder's
``results.json`` when the inputs are the same (:meth:`RunFolder.previous`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.reports.documents import to_json_text
from mpdp.parties.api.config_checks import budget_of
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.parties.session.epsilons import canonical_epsilon_spec
from mpdp.parties.session.output_paths import fresh_output_dir, output_dir
from mpdp.protocols.errors import ParameterError

__all__ = ["RESULTS", "STORE", "PreviousRun", "RunFolder", "RunStatus", "data_digest"]

RESULTS = "results.json"
STORE = "transcripts.sqlite"
#: ``run.status`` of ``results.json``.
RunStatus = Literal["running", "complete", "failed", "interrupted"]
#: The one input a resumed run may change.
_MAY_CHANGE = frozenset({"round_timeout"})


def data_digest(bits: NDArray[np.int8], parties: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 (hex) of a run's votes (int8 (k, R)) and its parties' (epsilon, delta): what a resumed run
    must find unchanged besides its inputs (a CSV or epsilon file edited in between)."""
    digest = hashlib.sha256(np.ascontiguousarray(bits, dtype=np.int8).tobytes())
    digest.update(json.dumps([[p["epsilon"], p["delta"]] for p in parties]).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class PreviousRun:
    """What a folder's ``results.json`` says of the run to resume.

    Attributes:
        path: the folder. session: its session id. seed: its root seed. inputs: its inputs. digest:
        :func:`data_digest` of its votes and parties. document: the whole ``results.json``, as read.
    """

    path: Path
    session: str
    seed: int
    inputs: dict[str, Any]
    digest: str
    document: dict[str, Any]

    @property
    def complete(self) -> bool:
        """The run's ``results.json`` is its final one (``run.status`` ``complete``): nothing to run or write,
        once its store holds every round."""
        return bool(self.document["run"].get("status") == "complete")

    @classmethod
    def read(cls, out: str | Path | None, force: bool) -> PreviousRun:
        """The run in folder ``out`` (``resume=True``).

        Raises:
            ParameterError: no ``out``, or ``force`` too; ``out`` without a readable ``results.json`` of a
                simulation; its transcript store damaged (``PRAGMA quick_check``).
        """
        if out is None:  # keywords here; the command line names its flags (mpdp.parties.cli.errors.flag_named)
            raise ParameterError("resume", True, "with out=DIR, the folder of the run to continue (named when the run "
                                 "started)")
        if force:
            raise ParameterError("force", True, "False with resume=True (force starts the run afresh)")
        if not (Path(out) / RESULTS).is_file():  # nothing is created for a folder that holds no run
            raise ParameterError("out", os.fspath(out), f"a run's folder holding its {RESULTS} (nothing to resume "
                                 "there): the folder named when the run started, or resume=False")
        if (Path(out) / STORE).exists():
            check_store_file(Path(out) / STORE)  # a damaged transcript: one line, and nothing is written
        path = output_dir(out, "out") / RESULTS
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return cls(path.parent, str(document["session"]), int(document["seed"]), dict(document["inputs"]),
                       str(document["run"]["data"]), document)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ParameterError("out", str(path), f"the {RESULTS} of an mpdp simulate run",
                                 hint=f"unreadable: {str(exc)[:200]}") from None

    def check(self, inputs: Mapping[str, Any], digest: str) -> None:
        """Refuse to continue with other inputs (all but ``round_timeout``) or another :func:`data_digest`.

        An input written in several ways is compared by the value it stands for (:data:`_VALUES`): ``--epsilon 1``,
        ``1.00``, ``1e0`` and ``epsilon=1.0`` are one epsilon.

        Raises:
            ParameterError: names each input that changed, with its recorded and its new value.
        """
        given = json.loads(to_json_text(dict(inputs)))
        changed = [f"{key}: {_shown(self.inputs.get(key))} -> {_shown(given.get(key))}"
                   for key in sorted(set(self.inputs) | set(given)) if key not in _MAY_CHANGE
                   and _value(key, self.inputs.get(key)) != _value(key, given.get(key))]
        if self.digest != digest:
            changed.append("the votes or the parties' epsilon/delta (their SHA-256 differs)")
        if changed:
            raise ParameterError("resume", True, f"the inputs of the run in {self.path} (only round_timeout may "
                                 "change)", hint="changed: " + "; ".join(changed), message=(
                                     f"cannot resume the run in {self.path}: its inputs changed (only round_timeout "
                                     f"may change): {'; '.join(changed)}; resume with the recorded inputs, or start "
                                     "a new run in another folder"))


def _value(key: str, value: Any) -> Any:
    """What input ``key``'s recorded (JSON) ``value`` stands for, to compare: its canonical form
    (:data:`_VALUES`), or the value itself (also when it does not parse: then compared as written)."""
    canonical = _VALUES.get(key)
    if canonical is None or value is None:
        return value
    try:
        return canonical(value)
    except (ParameterError, TypeError, ValueError):
        return value


def _budget_pair(value: Any) -> tuple[float, float]:
    budget = budget_of(value)
    assert budget is not None  # None is compared as itself
    return budget.epsilon, budget.delta


#: The inputs a user may write in several ways, each with its canonical form: ``epsilon`` (a number or
#: ``LO:HI``, :func:`mpdp.parties.session.epsilons.canonical_epsilon_spec`) and ``budget`` (``"2,1e-5"`` or
#: ``(2.0, 0.00001)``: the pair of floats).
_VALUES: dict[str, Callable[[Any], Any]] = {
    "epsilon": lambda value: canonical_epsilon_spec(value) if isinstance(value, str) else value,
    "budget": _budget_pair,
}


def _shown(value: Any) -> str:
    """An input's value as a user wrote it: text bare (``1.0``, ``house-votes-84``), the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True)
class RunFolder:
    """One run's folder.

    Attributes:
        path: the folder. temporary: made under the temporary directory (no ``out`` given).
    """

    path: Path
    temporary: bool

    @classmethod
    def open(cls, out: str | Path | None, force: bool, resume: bool, files: Sequence[str],
             announce: bool = True) -> RunFolder:
        """``out`` checked as one run's folder (``files``: a run's files, refused there unless ``force``, or
        kept with ``resume``), or with ``out`` None a new temporary one, named on standard error
        (``announce``; the result and ``results.json`` name it always).

        Raises:
            ParameterError: ``out`` not a writable directory, or holding another run's ``files`` (neither
                ``force`` nor ``resume``).
        """
        if out is not None:
            return cls(output_dir(out, "out") if resume else fresh_output_dir(out, "out", files, force), False)
        path = Path(tempfile.mkdtemp(prefix="mpdp-run-"))
        if announce:
            print(f"mpdp: this run's files (transcript, {RESULTS}) are in {path}", file=sys.stderr)
        return cls(path, True)

    @property
    def store(self) -> Path:
        """The run's SQLite transcript store."""
        return self.path / STORE

    @property
    def resume_hint(self) -> str:
        """How to continue this folder's run."""
        return (f"the same inputs and --out {self.path} --resume (mpdp simulate), or out={str(self.path)!r}, "
                "resume=True (mpdp.simulate)")

    def round_statuses(self, session: str, round_names: Sequence[str]) -> list[dict[str, Any]]:
        """Each round's status as the store has it: ``complete``, ``timeout``, ``failed``, or ``not run``."""
        statuses: dict[int, str] = {}
        if self.store.exists():
            with TranscriptStore(self.store) as store:
                statuses = {int(r): str(s) for r, s in store.query(
                    "SELECT round, status FROM rounds WHERE session = ?", (session,))}
        return [{"round": i, "name": name, "status": statuses.get(i, "not run")} for i, name in enumerate(round_names)]

    def messages_recorded(self, session: str) -> int:
        """The messages the store's decided rounds of ``session`` received (0 without a store): where a
        resumed run's progress starts."""
        if not self.store.exists():
            return 0
        with TranscriptStore(self.store) as store:
            return int(store.query("SELECT COALESCE(SUM(messages_received), 0) FROM rounds WHERE session = ?",
                                   (session,))[0][0])

    def run_section(self, status: RunStatus, session: str, round_names: Sequence[str], digest: str,
                    error: str | None = None) -> dict[str, Any]:
        """The ``run`` object of ``results.json``: status, folder, each round's status, the error, how to
        continue (when not complete), and the data digest a resumed run checks."""
        rounds = self.round_statuses(session, round_names)
        decided = [r["round"] for r in rounds if r["status"] != "not run"]
        return {"status": status, "folder": str(self.path), "error": error,
                "rounds_decided": len(decided), "rounds": rounds,
                "resume": None if status == "complete" else self.resume_hint, "data": digest}

    def write(self, document: Mapping[str, Any]) -> Path:
        """Write ``results.json`` whole or not at all (a temporary file renamed over it)."""
        path = self.path / RESULTS
        partial = path.with_name(f".{RESULTS}.partial")
        partial.write_text(to_json_text(dict(document), indent=2) + "\n", encoding="utf-8")
        os.replace(partial, path)
        return path

    def stopped(self, section: Mapping[str, Any]) -> str | None:
        """One line for a run that stopped (``section``: its :meth:`run_section`): where its rounds are
        and how to continue; None when it decided no round (its error alone is the one line to print)."""
        decided = [r["round"] + 1 for r in section["rounds"] if r["status"] != "not run"]  # 1-based, as the
        if not decided:  # progress and the tables count
            return None
        return (f"mpdp: the run {section['status']}: rounds {format_ranges(decided)} of {len(section['rounds'])} "
                f"are in {self.store} ({RESULTS}: {section['status']}); to continue: {self.resume_hint}")

    def discard_if_empty(self, section: Mapping[str, Any]) -> bool:
        """Remove a temporary folder whose run decided no round (``section``: its :meth:`run_section`): it
        holds nothing to resume or read. Returns True when it was removed; a folder given as ``out`` stays."""
        if not self.temporary or any(r["status"] != "not run" for r in section["rounds"]):
            return False
        shutil.rmtree(self.path, ignore_errors=True)
        return True
