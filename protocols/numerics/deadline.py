"""Run a function in a worker process that is killed at a wall-clock deadline.

For library code that does not always honour its own time limit: HiGHS 1.12 (vendored by scipy 1.17)
builds IPX's starting basis -- LU factorizations that can take minutes -- without looking at its clock
(ERGO-Code/HiGHS#3120, fixed upstream by #3185 after scipy's copy), so a 0.5 s ``time_limit`` ran 74-126 s.
A process can be stopped wherever it is.

The worker is a plain ``python -c`` subprocess (not multiprocessing: that imports the caller's main
module again in the child, which breaks scripts and notebooks-as-scripts without a ``__main__`` guard,
and may not start children from a daemonic session worker). It imports :data:`PRELOAD` once, then
answers pickled ``(fn, args)`` requests on its stdin with pickled ``(ok, value)`` on its stdout (its own
prints go to stderr). An idle worker is kept for the next call, so a call costs the pickling of its
arguments and result; a worker killed at a deadline is replaced at the next call. An idle worker ends when
its stdin closes (this process exits); a busy one when a watchdog thread sees this process gone (its parent
pid changed, checked every :data:`WATCHDOG_INTERVAL` s; HiGHS releases the GIL while it solves), so a
SIGKILLed caller leaves no LP running. Their start (~1-2 s: Python and scipy) is not counted in the deadline.
POSIX only (``select`` on pipes), like the rest of the deployment (mosquitto, fork servers).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["PRELOAD", "WATCHDOG_INTERVAL", "call_before", "serve"]

T = TypeVar("T")
#: Modules a worker imports before it says it is ready: those of the functions run through it.
PRELOAD = ("mpdp.protocols.decision.worst_case",)
#: Seconds between a worker's checks that the process that started it is alive.
WATCHDOG_INTERVAL = 0.2
_STARTUP_SECONDS = 300.0  # a worker that has not imported PRELOAD by then is taken for dead
_idle: list[_Worker] = []
_idle_lock = threading.Lock()


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from mpdp.protocols.numerics.deadline import serve; serve({os.getpid()})"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # the caller's import path: the same mpdp
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
        self.read(_STARTUP_SECONDS)  # its "ready"

    def ask(self, fn: Callable[..., Any], args: tuple[Any, ...], seconds: float) -> tuple[bool, Any]:
        assert self.process.stdin is not None
        pickle.dump((fn, args), self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.flush()
        return self.read(seconds)

    def read(self, seconds: float) -> tuple[bool, Any]:
        """The next answer within ``seconds``; raises TimeoutError or ChildProcessError (worker gone)."""
        stdout = self.process.stdout
        assert stdout is not None
        if not select.select([stdout], [], [], max(seconds, 0.0))[0]:
            raise TimeoutError(f"stopped at the {seconds:g} s time limit")
        try:
            answer: tuple[bool, Any] = pickle.load(stdout)
        except EOFError:
            raise ChildProcessError(f"the worker process ended without an answer (exit code "
                                    f"{self.process.wait()})") from None
        return answer

    def close(self, grace: float = 0.0) -> None:
        """End the worker: its stdin closed, killed after ``grace`` seconds, reaped; pipes closed."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


def call_before(fn: Callable[..., T], args: tuple[Any, ...], seconds: float) -> T:
    """``fn(*args)`` computed in a worker process, killed (SIGKILL) ``seconds`` after the request is sent.

    Args:
        fn: a module-level function (picklable), its arguments and result picklable.
        seconds: wall-clock seconds allowed (> 0).

    Returns:
        what ``fn`` returned.

    Raises:
        TimeoutError: the deadline passed first (the worker is killed and reaped).
        ChildProcessError: the worker ended without an answer (killed by the OS, e.g. out of memory).
        Exception: whatever ``fn`` raised, re-raised here.
    """
    with _idle_lock:
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    try:
        ok, value = worker.ask(fn, args, seconds)
    except BaseException:
        worker.close()
        raise
    with _idle_lock:
        _idle.append(worker)
    if not ok:
        raise value
    result: T = value
    return result


def serve(parent: int) -> None:
    """A worker's loop: import :data:`PRELOAD`, say ready, then answer requests until stdin closes; the
    process exits (code 1) as soon as ``parent`` (the pid of the process that started it) is gone, even
    in the middle of a request (:func:`_watch`).

    SIGINT is ignored: an interrupt is for the process that started the worker. A terminal's Ctrl-C and
    Jupyter's interrupt (sent to the kernel's whole process group, also before every kernel shutdown) reach the
    worker too; the caller then closes or kills it (:func:`call_before`), or exits and closes its stdin, so the
    worker ends without a ``KeyboardInterrupt`` traceback on the shared standard error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(parent,), name="deadline-watchdog", daemon=True).start()
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what the functions print goes to stderr, not into the answers
    sys.stdout = sys.stderr
    for module in PRELOAD:
        __import__(module)
    pickle.dump((True, None), answers)
    answers.flush()
    while True:
        try:
            fn, args = pickle.load(sys.stdin.buffer)
        except EOFError:
            return
        try:
            answer: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # re-raised by the caller
            answer = (False, exc)
        try:
            pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
            answers.flush()
        except BrokenPipeError:  # the caller died mid-request (a stopped sweep's pool): nobody to answer
            os._exit(1)


def _watch(parent: int) -> None:
    """End this process when its parent is no longer ``parent`` (it died: the orphan was re-parented, to init
    or a subreaper), checked every :data:`WATCHDOG_INTERVAL` seconds; ``os._exit`` ends it whatever the
    main thread is running."""
    while os.getppid() == parent:
        time.sleep(WATCHDOG_INTERVAL)
    os._exit(1)


@atexit.register
def _close_idle() -> None:
    """Idle workers end on their closed stdin; reaped here so none outlives this process."""
    with _idle_lock:
        workers = _idle[:]
        _idle.clear()
    for worker in workers:
        worker.close(grace=5.0)
