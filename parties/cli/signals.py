"""Stop signals: SIGTERM and SIGHUP take the path of Ctrl-C (SIGINT), so every ``mpdp`` process stops cleanly.

A Ctrl-C unwinds the running command: the asyncio runner cancels its main task, every ``async with``
(the broker child, the worker pool, the transcript store, temporary folders) exits in order, and the
command ends with exit code 130. Python's default for SIGTERM and SIGHUP is to die on the spot, which
left the mosquitto child running (it drops privileges, so the kernel's parent-death signal is cleared),
its temporary folder, the SQLite ``-wal``/``-shm`` files and the workers behind. :func:`stop_like_interrupt`
hands both signals to whatever handles SIGINT at that moment, and :func:`exit_code` reports which signal
stopped the run (128 + its number, the shell's convention).

Where SIGINT's handler is Python's own (no event loop runs), a stop signal raises :class:`StopSignal`, a
KeyboardInterrupt of its own class, and so does a Ctrl-C while the command starts (:func:`starting`); never in the
middle of an import: a signal that arrives during one is delivered again :data:`RETRY` seconds later, until no
import is under way; likewise inside asyncio's own code while ``asyncio.run`` has not installed its SIGINT handler
yet (or has removed it), for :data:`ASYNCIO_WAIT` seconds at most: raised inside the event loop's constructor, it
left a half-made loop whose ``__del__`` printed a traceback at exit. Two things went wrong when the exception was raised at any point of the start-up, most of it
imports (scipy's, seconds):

- a plain KeyboardInterrupt that passes through code run by ``exec`` of a string (scipy's ``array_api_compat``
  clones numpy's namespace so) makes CPython (3.11) mark the interrupt as unhandled, and at the exit of
  ``python -m mpdp`` it kills itself with SIGINT, whatever exit code the command returned: a SIGTERM while scipy
  was imported exited 130 instead of 143 (2 of 40 trials; CPython marks only that exact class, not a subclass);
- an exception raised inside the initialization of a compiled module is turned into another by some of them
  (scipy's HiGHS wrapper: ``ImportError: initialization failed``, a traceback and exit 1).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

__all__ = ["ASYNCIO_WAIT", "RETRY", "STOP_SIGNALS", "StopSignal", "exit_code", "starting", "stop_like_interrupt"]

#: The signals handled like SIGINT (SIGHUP only where the platform has it).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)

#: Seconds after which a stop signal that arrived during an import is delivered again.
RETRY = 0.02
#: Seconds a stop signal that arrived inside asyncio, before ``asyncio.run`` installed its SIGINT handler (or
#: after it removed it), waits for that handler or for the end of asyncio's code at most, then is raised there.
ASYNCIO_WAIT = 2.0

_received: list[int] = []
#: signal -> when it was first put off (monotonic seconds), while it is
_put_off: dict[int, float] = {}
#: asyncio's source folder (the standard library's), without importing it
_ASYNCIO = os.path.join(os.path.dirname(os.__file__), "asyncio", "")


class StopSignal(KeyboardInterrupt):  # noqa: N818 - a KeyboardInterrupt, caught as one
    """The KeyboardInterrupt of a stop signal (SIGINT, SIGTERM or SIGHUP) raised by this module's handlers: its own
    class, so that CPython never takes it for an unhandled Ctrl-C (module docstring).

    Args:
        signum: the signal that stopped the command.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _inside(frame: FrameType | None) -> str | None:
    """``import`` when an import is under way in ``frame`` or a frame that called it (importlib's frames are on the
    stack), else ``asyncio`` when asyncio's code is, else None."""
    where = None
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib._bootstrap"):
            return "import"
        if name.startswith(_ASYNCIO):
            where = "asyncio"
        frame = frame.f_back
    return where


def _stop(signum: int, frame: FrameType | None) -> None:
    """Raise :class:`StopSignal` for ``signum``, recorded; during an import, or inside asyncio (for at most
    :data:`ASYNCIO_WAIT` seconds), send ``signum`` to this process again in :data:`RETRY` seconds instead (module
    docstring)."""
    where, now = _inside(frame), time.monotonic()
    if where == "import" or (where == "asyncio" and now - _put_off.setdefault(signum, now) < ASYNCIO_WAIT):
        timer = threading.Timer(RETRY, os.kill, (os.getpid(), signum))
        timer.daemon = True
        timer.start()
        return
    _put_off.pop(signum, None)
    _received.append(signum)
    raise StopSignal(signum)


def _forward(signum: int, frame: FrameType | None) -> None:
    """Run the current SIGINT handler (asyncio's, which cancels the main task), ``signum`` recorded; where SIGINT's
    handler is Python's own, :func:`_interrupt` or none from Python, :func:`_stop`."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler not in (signal.default_int_handler, _interrupt):
        _received.append(signum)
        handler(signal.SIGINT, frame)
    else:
        _stop(signum, frame)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT while the command starts: :func:`_stop` (Python's handler would raise a plain KeyboardInterrupt,
    also in the middle of an import)."""
    _stop(signum, frame)


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Within the block (the command's imports and parsing, before any event loop), a Ctrl-C raises
    :class:`StopSignal` instead of a plain KeyboardInterrupt (module docstring); Python's handler comes back on
    exit, so that ``asyncio.run`` installs its own (it does only over Python's). A SIGINT that is ignored, or
    handled otherwise, is left as it is."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def _sigint_blocked_not_ignored() -> Iterator[None]:
    """An ignored SIGINT (a background job, ``cmd &``, ignores it) is blocked instead within the block,
    with Python's handler installed: SIGINT still has no effect, but ``asyncio.run`` sees Python's handler
    and installs its own, which a forwarded SIGTERM or SIGHUP then runs (the main task is cancelled and
    every ``async with`` exits in the loop). Without it KeyboardInterrupt was raised inside the event loop
    and ``asyncio.run`` cancelled the embedded broker's tasks under it: pages of amqtt errors after the
    run's one line. A SIGINT pending at the end is discarded (ignored again before it is unblocked). The
    mask is this thread's: the CLI enters this block before it starts any thread, and threads inherit it."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def stop_like_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP stop this process as SIGINT does; the previous handlers
    come back on exit. Main thread only. A signal the process inherited as ignored (``nohup`` ignores
    SIGHUP, a background job SIGINT) stays without effect."""
    _received.clear()
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(sig, _forward)
    try:
        with _sigint_blocked_not_ignored():
            yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: a handler not installed from Python, left as it is
                signal.signal(sig, handler)


def exit_code() -> int:
    """The exit code of an interrupted run: 128 + the number of the first stop signal received
    (143 for SIGTERM, 129 for SIGHUP), or 130 when it was SIGINT."""
    return 128 + (_received[0] if _received else signal.SIGINT)
