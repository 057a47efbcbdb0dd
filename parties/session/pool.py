"""Worker OS processes (multiprocessing, spawn) as an async context manager that leaves no orphan:
on exit every worker is given a grace period, then terminated, then killed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Self

from mpdp.broker.messages import WorkerStatus
from mpdp.parties.session.processes import spawn, stop_processes
from mpdp.parties.session.worker import WorkerSpec, worker_main
from mpdp.protocols.errors import WorkerError

__all__ = ["WorkerPool"]


def _span(parties: Sequence[int]) -> str:
    if not parties:
        return "no parties"
    if list(parties) == list(range(parties[0], parties[-1] + 1)):
        return f"parties {parties[0]}-{parties[-1]}" if len(parties) > 1 else f"party {parties[0]}"
    return f"{len(parties)} parties"


class WorkerPool:
    """Start one spawned process per :class:`WorkerSpec`; stop them all on exit.

    Args:
        specs: one per worker.
        grace: seconds the workers get to exit on their own (after the end announcement) before
            they are terminated; zero when leaving on an error.
    """

    def __init__(self, specs: Sequence[WorkerSpec], grace: float = 10.0) -> None:
        self._specs = tuple(specs)
        self._grace = grace
        self._procs: list[BaseProcess] = []
        self._stopping = False

    async def __aenter__(self) -> Self:
        for spec in self._specs:
            spawn(worker_main, (spec,), f"mpdp-worker-{spec.index}", self._procs)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop(self._grace if exc_type is None else 0.0)

    @property
    def pids(self) -> list[int | None]:
        """The workers' process ids (for tests and logs)."""
        return [proc.pid for proc in self._procs]

    def parties_of(self, index: int) -> tuple[int, ...]:
        """The party ids run by worker ``index``."""
        return tuple(p.party for p in self._specs[index].parties)

    def dead(self) -> list[str]:
        """One line per worker that exited before the pool was stopped."""
        lines = []
        for spec, proc in zip(self._specs, self._procs, strict=False):  # the started ones
            if not self._stopping and proc.exitcode is not None:
                lines.append(f"worker process {spec.index} ({_span(self.parties_of(spec.index))}) "
                             f"exited with code {proc.exitcode}")
        return lines

    def check(self, failed: Mapping[int, WorkerStatus] | None = None, when: str = "", processes: bool = True) -> None:
        """Raise if a worker reported failure or (``processes``) its process died.

        Raises:
            WorkerError: names each dead/failed worker, its parties, and ``when``.
        """
        lines = self.dead() if processes else []
        for index, status in sorted((failed or {}).items()):
            lines.append(f"worker {index} ({_span(status.parties)}) failed: {status.detail}")
        if lines:
            raise WorkerError("; ".join(lines) + (f" {when}" if when else ""))

    async def stop(self, grace: float) -> None:
        """Wait up to ``grace`` s for the workers to exit, then terminate, then kill (no orphans)."""
        self._stopping = True
        await stop_processes(self._procs, grace)
