"""The parties' workers on a Dask distributed cluster (``mpdp simulate --executor dask://HOST:PORT``, issue 23).

Each :class:`mpdp.parties.session.worker.WorkerSpec` becomes one long-running Dask task
(:func:`serve_on_dask`) that runs :func:`mpdp.parties.session.worker.serve_parties` in an event loop of
its own; it leaves the Dask worker's thread pool at once (:func:`distributed.secede`, the documented way for
a task that waits for a long time), so a Dask worker hosts several of them. The tasks are placed on the
cluster's workers in turn (spec ``i`` on worker ``i mod n``, workers sorted by address), so two workers
host the parties of a two-worker run. The parties reach the broker by URL: every Dask worker connects to
the same ``mqtt://`` broker the observer uses (or ``--party-broker``); a broker this process starts
(embedded, or a mosquitto child on loopback) cannot be reached from another machine:
:func:`mpdp.parties.rounds.executor.check_executor` refuses it before anything starts. The observer stays in this process.

The results are the same bit for bit as a local run with the same seed: each party draws from its own
:class:`numpy.random.SeedSequence` child (:mod:`mpdp.parties.rounds.seeds`), carried in its spec, whatever
process or machine runs it.

:class:`DaskWorkerPool` has the interface of :class:`mpdp.parties.session.pool.WorkerPool` the runner
uses: a task that ends (an error, or no error before the session's end) is known at once (its future's
callback wakes the event loop); on exit the pool waits ``grace`` seconds for the tasks to end on the end
announcement, then sets a Dask :class:`distributed.Event` that each task watches (its parties stop within a
second) and cancels the futures.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from mpdp.broker.messages import WorkerStatus
from mpdp.parties.rounds.executor import dask_address, dask_client
from mpdp.parties.session.pool import party_span
from mpdp.parties.session.processes import first_leaf
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import ParameterError, WorkerError

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = ["DaskWorkerPool", "serve_on_dask"]

_STOP_POLL = 0.5  # seconds between a task's looks at its stop event


def serve_on_dask(spec: WorkerSpec, stop_event: str) -> str:
    """The Dask task of one worker spec: serve its parties until the session ends (or the Dask event
    ``stop_event`` is set); return the Dask worker's address.

    Raises:
        WorkerError: the parties failed (one line: the first error), or the run stopped them.
    """
    from distributed import Event, get_worker, secede

    secede()  # a long-running task: it leaves the worker's thread pool (Dask's docs, "Launch Tasks from Tasks")
    address = str(get_worker().address)
    stop = Event(stop_event)

    async def serve() -> None:
        async def stopped() -> None:
            while not await asyncio.to_thread(stop.wait, _STOP_POLL):
                pass
            raise WorkerError(f"worker {spec.index} on Dask worker {address}: stopped by the run")

        async with asyncio.TaskGroup() as group:
            watcher = group.create_task(stopped(), name="dask-stop")
            await serve_parties(spec)
            watcher.cancel()

    try:
        asyncio.run(serve())
    except BaseException as exc:  # noqa: BLE001 - one line for the observer, not a group from a thread
        first = first_leaf(exc)
        raise WorkerError(f"{type(first).__name__}: {first}") from None
    return address


class DaskWorkerPool:
    """The workers of ``specs`` as tasks on the Dask cluster at ``executor`` (module docstring); the interface
    of :class:`mpdp.parties.session.pool.WorkerPool`.

    Raises:
        ParameterError: (on enter) no scheduler at ``executor``, the Dask extra missing, or a cluster without
            workers.
    """

    def __init__(self, specs: Sequence[WorkerSpec], executor: str, grace: float = 10.0) -> None:
        self._specs = tuple(specs)
        self._executor = executor
        dask_address(executor)  # a malformed address fails here
        self._grace = grace
        self._client: Client | None = None
        self._futures: list[Future[Any]] = []
        self._stop_name = f"mpdp-stop-{secrets.token_hex(8)}"
        self._stopping = False
        #: worker spec index -> the Dask worker's address it was placed on
        self.placed: dict[int, str] = {}
        #: worker spec index -> the Dask worker's address that ran it to the end (filled by :meth:`stop`)
        self.ran: dict[int, str] = {}

    async def __aenter__(self) -> Self:
        # every call of the synchronous client runs off this event loop (the scheduler may share it: a test's)
        self._client = await asyncio.to_thread(dask_client, self._executor)
        try:
            await asyncio.to_thread(self._submit, self._client)
        except BaseException:
            await self._close()
            raise
        return self

    def _submit(self, client: Client) -> None:
        """Place each spec on the cluster's workers in turn (sorted by address) and submit it."""
        workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
        if not workers:
            raise ParameterError("executor", self._executor, "a Dask cluster with at least one worker")
        for spec in self._specs:
            where = workers[spec.index % len(workers)]
            self.placed[spec.index] = where
            self._futures.append(client.submit(serve_on_dask, spec, self._stop_name, key=f"{self._stop_name}-{spec.index}",
                                               workers=[where], pure=False))

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop(self._grace if exc_type is None else 0.0)

    def on_exit(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` in the running event loop once a task has ended (once per task, until :meth:`stop`)."""
        loop = asyncio.get_running_loop()

        def ended(_: object) -> None:
            if not self._stopping:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(callback)

        for future in self._futures:
            future.add_done_callback(ended)

    @property
    def pids(self) -> list[int | None]:
        """No local process ids: the workers are Dask tasks."""
        return [None] * len(self._specs)

    def parties_of(self, index: int) -> tuple[int, ...]:
        """The party ids run by worker ``index``."""
        return tuple(p.party for p in self._specs[index].parties)

    def exited(self) -> list[int]:
        """The indices of the workers whose task has ended (before :meth:`stop`)."""
        if self._stopping:
            return []
        return [spec.index for spec, future in zip(self._specs, self._futures, strict=False) if future.done()]

    def _ending(self, index: int) -> str | None:
        future = self._futures[index] if index < len(self._futures) else None
        if self._stopping or future is None or not future.done():
            return None
        if future.status == "error":
            return f"{future.exception()}"
        return "its task ended" if future.status == "finished" else f"its task was {future.status}"

    def problems(self, failed: Mapping[int, WorkerStatus] | None = None, processes: bool = True) -> list[str]:
        """One line per worker that reported failure or (``processes``) whose task ended before the pool was
        stopped, naming the worker, its parties, its Dask worker and the cause."""
        failed = failed or {}
        lines = []
        for i, spec in enumerate(self._specs):
            where = f"worker {spec.index} ({party_span(self.parties_of(spec.index))}) on Dask worker {self.placed.get(i)}"
            ending, status = self._ending(i), failed.get(spec.index)
            if status is not None:
                lines.append(f"{where} failed: {status.detail}")
            elif ending is not None and processes:
                lines.append(f"{where} ended: {ending}")
        return lines

    def check(self, failed: Mapping[int, WorkerStatus] | None = None, when: str = "", processes: bool = True) -> None:
        """Raise if a worker reported failure or (``processes``) its task ended (:meth:`problems`).

        Raises:
            WorkerError: names each worker, its parties, its Dask worker, the cause, and ``when``.
        """
        lines = self.problems(failed, processes)
        if lines:
            raise WorkerError("; ".join(lines) + (f" {when}" if when else ""))

    async def stop(self, grace: float) -> None:
        """Wait up to ``grace`` s for the tasks to end, then stop their parties (the stop event) and cancel them."""
        self._stopping = True
        deadline = time.monotonic() + grace
        while not all(f.done() for f in self._futures) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for spec, future in zip(self._specs, self._futures, strict=False):
            if future.status == "finished":
                self.ran[spec.index] = await asyncio.to_thread(future.result)
        await self._close()

    async def _close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return

        def close() -> None:
            from distributed import Event

            with contextlib.suppress(Exception):  # a scheduler gone meanwhile: nothing left to stop
                if not all(f.done() for f in self._futures):
                    Event(self._stop_name, client=client).set()
                    _wait_done(self._futures, 3.0)
                client.cancel(self._futures)
                Event(self._stop_name, client=client).clear()
            client.close()

        await asyncio.to_thread(close)


def _wait_done(futures: Sequence[Future[Any]], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not all(f.done() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.05)
