"""Refusals before a live run starts any process: a script without a ``__main__`` guard.

A live run spawns worker processes; a spawned process re-imports the main script, so a script that calls
:func:`mpdp.simulate` at its top level, outside ``if __name__ == "__main__":``, would start the run again in
every worker. :func:`check_main_guard` finds that case from the call stack and the script's syntax tree and
refuses it with one line, before anything starts: :class:`UnguardedMainError`, which a caller can catch and
which, uncaught, ends the script with that line alone (exit status 1). :func:`run_blocking` runs a live
run's coroutine to its end from blocking code, also inside a running event loop (Jupyter).
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import signal
import sys
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from mpdp.protocols.errors import MpdpError

__all__ = ["UnguardedMainError", "check_main_guard", "run_blocking"]

T = TypeVar("T")


class UnguardedMainError(MpdpError, RuntimeError, SystemExit):
    """A live run called from a script's top level without a ``__main__`` guard.

    An ordinary exception for code that catches it (``except UnguardedMainError``, ``except MpdpError``,
    ``except Exception``); left uncaught, it ends the script as :class:`SystemExit` does: its one line
    ``UnguardedMainError: <message>`` on standard error, exit status 1, no traceback (a script's bug is
    reported, not the library's call stack).

    Attributes:
        code: the line the interpreter prints when nobody catches it (SystemExit's exit "code").
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = f"{type(self).__name__}: {message}"


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    constants = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(constants) == 1


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of the script at ``path`` lies in a top-level ``if __name__ == "__main__":`` block
    (True when the script cannot be read: no refusal on a guess)."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return True
    return any(isinstance(node, ast.If) and _is_main_test(node.test)
               and node.lineno <= line <= (node.end_lineno or node.lineno) for node in tree.body)


def _top_level_line(frame: FrameType | None, main_globals: dict[str, object]) -> int | None:
    """The line the main script's module-level code is executing (None if it is not on the stack)."""
    line = None
    while frame is not None:
        if frame.f_globals is main_globals and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    return line


def check_main_guard(what: str) -> None:
    """Refuse ``what`` when it is reached from a script's top-level code outside a ``__main__`` guard.

    Interactive sessions, notebooks, ``python -c``, a script piped to ``python -`` (its children do not re-run
    it: :mod:`mpdp.parties.session.main_module`) and calls under the guard pass.

    Raises:
        UnguardedMainError: one line naming the script and line and the fix.

    Example:
        >>> check_main_guard("mpdp.simulate")  # a test runner's or a notebook's stack: nothing to refuse
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str):
        return
    line = _top_level_line(sys._getframe(1), vars(main))
    if line is not None and not _guarded(path, line):
        raise UnguardedMainError(
            f"{what} starts worker processes, which re-import the main script {path}: call it under "
            f"`if __name__ == \"__main__\":` (line {line} is outside such a guard)")


#: The stop signals the command line turns into KeyboardInterrupt (parties/cli/signals.py).
_STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def _new_loop() -> asyncio.AbstractEventLoop:
    """A new event loop, made with the stop signals held back: one taken inside the loop's constructor left half
    a loop (no self-pipe yet) whose ``__del__`` printed a traceback ("'_UnixSelectorEventLoop' object has no
    attribute '_ssock'", seen once in the suite's stop-anywhere-in-start-up test). A held signal is delivered
    once the loop is whole."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        return asyncio.new_event_loop()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end and return its value: ``asyncio.run`` it, or, inside a running event
    loop (Jupyter), on a worker thread with its own loop, waiting for the result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        try:
            with asyncio.Runner(loop_factory=_new_loop) as runner:
                return runner.run(coroutine)
        except BaseException:
            coroutine.close()  # a stop before it started: no "coroutine ... was never awaited" (a no-op once run)
            raise
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mpdp-live") as pool:
        return pool.submit(asyncio.run, coroutine).result()
