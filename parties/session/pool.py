"""Worker OS processes (multiprocessing, spawn) as an async context manager that leaves no orphan:
on exit every worker is given a grace period, then terminated, then killed. While they run, the event
loop watches each process's sentinel (a descriptor readable once the process has ended), so a worker that
dies, even by SIGKILL, is known at once (:meth:`WorkerPool.on_exit`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Self

from mpdp.broker.messages import WorkerStatus
from mpdp.parties.session.processes import exit_text, spawn, stop_processes
from mpdp.parties.session.worker import WorkerSpec, worker_main
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.numerics.cost import noun

__all__ = ["WorkerPool", "party_span"]

_REAP_POLL = 0.005  # seconds between looks at the exit code of a process whose sentinel closed


def party_span(parties: Sequence[int]) -> str:
    """``parties 3-7``, ``party 3``, ``5 parties`` (not one range), ``no parties``."""
    if not parties:
        return "no parties"
    if list(parties) == list(range(parties[0], parties[-1] + 1)):
        return f"parties {parties[0]}-{parties[-1]}" if len(parties) > 1 else f"party {parties[0]}"
    return f"{len(parties)} {noun(len(parties), 'party', 'parties')}"


class WorkerPool:
    """Start one spawned process per :class:`WorkerSpec`; stop them all on exit.

    Args:
        specs: one per worker; taken one at a time as each worker is spawned, and not kept (a
            :class:`mpdp.parties.session.worker.WorkerSpecs` builds each then: one worker's parties in memory
            at once).
        grace: seconds the workers get to exit on their own (after the end announcement) before
            they are terminated; zero when leaving on an error.
    """

    def __init__(self, specs: Sequence[WorkerSpec], grace: float = 10.0) -> None:
        self._specs = specs
        #: worker -> its party ids: what the pool keeps of the specs once they are sent (taken when needed)
        self._parties: list[tuple[int, ...] | None] = [None] * len(specs)
        self._grace = grace
        self._procs: list[BaseProcess] = []
        self._stopping = False
        self._watched: list[int] = []  # the sentinels the event loop watches

    async def __aenter__(self) -> Self:
        # the parties' specs (their keys, seeds and bits: ~700 bytes a party, 0.7 GB at 10^6) live in the
        # workers only; this process keeps each worker's index and party ids, one worker's specs at a time
        sent: list[WorkerSpec] = []
        for i in range(len(self._specs)):
            spec = self._specs[i]
            self._parties[i] = tuple(p.party for p in spec.parties)
            sent.append(dataclasses.replace(spec, parties=()))
            spawn(worker_main, (spec,), f"mpdp-worker-{spec.index}", self._procs)
            del spec
        self._specs = tuple(sent)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop(self._grace if exc_type is None else 0.0)

    def on_exit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` in the running event loop as soon as a worker process has ended and its exit
        code is known (once per process, until :meth:`stop`): the loop watches each process's sentinel, no
        polling (the sentinel closes as the process exits, a moment before its exit code can be read)."""
        loop = asyncio.get_running_loop()

        def reaped(proc: BaseProcess) -> None:
            if self._stopping:
                return
            if proc.exitcode is None:
                loop.call_later(_REAP_POLL, reaped, proc)
            else:
                callback()

        def ended(proc: BaseProcess) -> None:
            self._unwatch(loop, proc.sentinel)
            reaped(proc)

        for proc in self._procs:
            self._watched.append(proc.sentinel)
            loop.add_reader(proc.sentinel, ended, proc)

    def _unwatch(self, loop: asyncio.AbstractEventLoop, sentinel: int) -> None:
        loop.remove_reader(sentinel)
        self._watched.remove(sentinel)

    @property
    def pids(self) -> list[int | None]:
        """The workers' process ids (for tests and logs)."""
        return [proc.pid for proc in self._procs]

    def parties_of(self, index: int) -> tuple[int, ...]:
        """The party ids run by worker ``index``."""
        parties = self._parties[index]
        if parties is None:  # not spawned yet
            parties = self._parties[index] = tuple(p.party for p in self._specs[index].parties)
        return parties

    def exited(self) -> list[int]:
        """The indices of the workers whose process has ended (before :meth:`stop`)."""
        if self._stopping:
            return []
        return [spec.index for spec, proc in zip(self._specs, self._procs, strict=False) if proc.exitcode is not None]

    def problems(self, failed: Mapping[int, WorkerStatus] | None = None, processes: bool = True) -> list[str]:
        """One line per worker that reported failure (``failed``, by worker index: its cause, and its exit code
        if its process exited) and, with ``processes``, per worker whose process exited before the pool was
        stopped without a report (its exit code); each names the worker and its parties."""
        failed = failed or {}
        lines = []
        for i, spec in enumerate(self._specs):
            code = self._procs[i].exitcode if i < len(self._procs) and not self._stopping else None
            status = failed.get(spec.index)
            if status is not None:
                where = f"worker {spec.index} ({party_span(status.parties)})"
                lines.append(f"{where} failed: {status.detail}" if code is None
                             else f"{where} failed: {status.detail}; its process exited with {exit_text(code)}")
            elif code is not None and processes:
                lines.append(f"worker process {spec.index} ({party_span(self.parties_of(spec.index))}) exited with "
                             f"{exit_text(code)} without reporting a cause")
        return lines

    def check(self, failed: Mapping[int, WorkerStatus] | None = None, when: str = "", processes: bool = True) -> None:
        """Raise if a worker reported failure or (``processes``) its process died (:meth:`problems`).

        Raises:
            WorkerError: names each dead/failed worker, its parties, its exit code, its cause, and ``when``.
        """
        lines = self.problems(failed, processes)
        if lines:
            raise WorkerError("; ".join(lines) + (f" {when}" if when else ""))

    async def stop(self, grace: float) -> None:
        """Wait up to ``grace`` s for the workers to exit, then terminate, then kill (no orphans)."""
        self._stopping = True
        loop = asyncio.get_running_loop()
        for sentinel in list(self._watched):
            self._unwatch(loop, sentinel)
        await stop_processes(self._procs, grace)
