"""Spawned helper processes of a run (party workers, validators): start them with SIGINT blocked, stop
them without leaving an orphan, and let a child leave when its parent is gone."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.process import BaseProcess
from types import FrameType

from mpdp.parties.session.main_module import main_file_hidden
from mpdp.protocols.errors import WorkerError

__all__ = ["exit_text", "first_leaf", "spawn", "stop_processes", "watch_parent"]

_POLL = 0.05
_PARENT_POLL = 0.5


#: Signals that stop a run (the CLI hands SIGTERM and SIGHUP to SIGINT's handler: ``mpdp.parties.cli.signals``).
_STOP_SIGNALS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                      if s is not None)


def spawn(target: Callable[..., object], args: tuple[object, ...], name: str, started: list[BaseProcess]) -> None:
    """Start ``target(*args)`` in a spawned daemon process called ``name``, appended to ``started``
    before it starts (so an error in the start still lets the caller stop the others).

    The child starts with SIGINT blocked (a blocked signal mask survives exec, and Python leaves it so):
    a terminal's Ctrl-C reaches only this process, which stops its children in order, instead of every
    child printing a traceback mid-import. It is blocked, not ignored, for the spawn: a Ctrl-C
    meanwhile is delivered after, not lost, and never interrupts a child's start half-way. A SIGINT the
    caller already blocks is one its command ignores (a background job: ``mpdp.parties.cli.signals``):
    the child then starts with it ignored, as it would have inherited it. A stop signal that arrives
    during the start is held until the start is done (:func:`_stop_signals_held`).
    """
    context = multiprocessing.get_context("spawn")
    with _stop_signals_held():
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        ignored = signal.SIGINT in previous and threading.current_thread() is threading.main_thread()
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if ignored else None
        try:
            proc = context.Process(target=target, args=args, name=name, daemon=True)
            started.append(proc)
            with main_file_hidden():  # python - < script.py: the child would try to run "<stdin>"
                proc.start()
        finally:
            if handler is not None:
                signal.signal(signal.SIGINT, handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP (those with a Python handler) are recorded, not handled;
    on exit their handlers come back and each recorded one is raised again, in order.

    ``Process.start`` must not be interrupted between the fork and the end of the child's start data: the
    child then read a half-written pipe and printed multiprocessing's ``EOFError: Ran out of input``
    traceback (2 of 4 ``nohup mpdp simulate ... &`` runs stopped with SIGTERM, issue 20: a background job's
    SIGTERM raised KeyboardInterrupt at once, as its SIGINT is ignored during the start). Handlers, not a
    signal mask: a mask is the calling thread's, and a process-directed signal then goes to another thread
    (the event loop's executor), whose Python handler still runs in this one. Main thread only (elsewhere
    Python runs no handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS}
    replaced = {sig: handler for sig, handler in previous.items() if callable(handler)}
    for sig in replaced:
        signal.signal(sig, hold)
    try:
        yield
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)
        for signum in held:
            signal.raise_signal(signum)


def exit_text(code: int) -> str:
    """A process's exit code in words: ``code 1``, ``code -9 (killed by SIGKILL)``."""
    if code >= 0:
        return f"code {code}"
    try:
        return f"code {code} (killed by {signal.Signals(-code).name})"
    except ValueError:
        return f"code {code} (killed by signal {-code})"


async def stop_processes(procs: Sequence[BaseProcess], grace: float) -> None:
    """Wait up to ``grace`` s for ``procs`` to exit, then terminate, then kill (no orphans), and release them."""
    await _wait(procs, grace)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    await _wait(procs, 3.0)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    await _wait(procs, 3.0)
    for proc in procs:
        if proc.exitcode is not None:
            proc.close()


async def _wait(procs: Sequence[BaseProcess], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(p.is_alive() for p in procs if p.pid is not None) and time.monotonic() < deadline:
        await asyncio.sleep(_POLL)


async def watch_parent(parent: int) -> None:
    """Return never; raise once process ``parent`` is gone (run as a task in a child: it leaves with it).

    Raises:
        WorkerError: the parent process is gone.
    """
    while os.getppid() == parent:
        await asyncio.sleep(_PARENT_POLL)
    raise WorkerError(f"parent process {parent} is gone")


def first_leaf(exc: BaseException) -> BaseException:
    """The first exception that is not a group (task groups nest: worker -> parties -> party); a
    CancelledError raised while another error was handled stands for that error (a process reports the
    cause, never an empty CancelledError)."""
    while True:
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        if not isinstance(exc, asyncio.CancelledError) or exc.__context__ is None:
            return exc
        exc = exc.__context__
