"""Stop signals: SIGTERM and SIGHUP take the path of Ctrl-C (SIGINT), so every ``mpdp`` process stops cleanly.

A Ctrl-C unwinds the running command: the asyncio runner cancels its main task, every ``async with``
(the broker child, the worker pool, the transcript store, temporary folders) exits in order, and the
command ends with exit code 130. Python's default for SIGTERM and SIGHUP is to die on the spot, which
left the mosquitto child running (it drops privileges, so the kernel's parent-death signal is cleared),
its temporary folder, the SQLite ``-wal``/``-shm`` files and the workers behind. :func:`stop_like_interrupt`
hands both signals to whatever handles SIGINT at that moment, and :func:`exit_code` reports which signal
stopped the run (128 + its number, the shell's convention).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = ["STOP_SIGNALS", "exit_code", "stop_like_interrupt"]

#: The signals handled like SIGINT (SIGHUP only where the platform has it).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)

_received: list[int] = []


def _forward(signum: int, frame: FrameType | None) -> None:
    """Record ``signum`` and run the current SIGINT handler (asyncio's, which cancels the main task,
    or Python's, which raises KeyboardInterrupt)."""
    _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:  # SIGINT's handler not installed from Python: stop the same way
        raise KeyboardInterrupt


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
