"""Spawned helper processes of a run (party workers, validators): start them with SIGINT blocked, stop
them without leaving an orphan, and let a child leave when its parent is gone."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.process import BaseProcess

from mpdp.protocols.errors import WorkerError

__all__ = ["exit_text", "first_leaf", "spawn", "stop_processes", "watch_parent"]

_POLL = 0.05
_PARENT_POLL = 0.5


def spawn(target: Callable[..., object], args: tuple[object, ...], name: str, started: list[BaseProcess]) -> None:
    """Start ``target(*args)`` in a spawned daemon process called ``name``, appended to ``started``
    before it starts (so an error in the start still lets the caller stop the others).

    The child starts with SIGINT blocked (a blocked signal mask survives exec, and Python leaves it so):
    a terminal's Ctrl-C reaches only this process, which stops its children in order, instead of every
    child printing a traceback mid-import. It is blocked, not ignored, for the spawn: a Ctrl-C
    meanwhile is delivered after, not lost, and never interrupts a child's start half-way. A SIGINT the
    caller already blocks is one its command ignores (a background job: ``mpdp.parties.cli.signals``):
    the child then starts with it ignored, as it would have inherited it.
    """
    context = multiprocessing.get_context("spawn")
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    ignored = signal.SIGINT in previous and threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if ignored else None
    try:
        proc = context.Process(target=target, args=args, name=name, daemon=True)
        started.append(proc)
        proc.start()
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
