"""A foreground run's signal dispositions for the tests that send SIGINT, SIGHUP or SIGTERM.

``nohup python -m pytest ... &`` starts the test run with SIGHUP ignored (nohup) and SIGINT ignored (a
non-interactive shell's background job), and an ignored signal stays ignored across ``fork`` and ``exec``.
The CLI rightly keeps an inherited-ignored SIGINT or SIGHUP without effect (that is what ``nohup`` and ``&``
ask for), so a test that sends one of them must first give the process under test the dispositions of a
terminal's foreground run, whatever the test run inherited: in this process :func:`foreground_signals` (a
fixture), in a child process :func:`foreground_child` (a ``preexec_fn``).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

__all__ = ["FOREGROUND", "foreground_child", "foreground_signals"]

#: Python's dispositions in a foreground process: Ctrl-C raises KeyboardInterrupt, SIGHUP and SIGTERM end it.
FOREGROUND: dict[signal.Signals, Callable[..., Any] | int] = {
    signal.SIGINT: signal.default_int_handler, signal.SIGHUP: signal.SIG_DFL, signal.SIGTERM: signal.SIG_DFL}


@pytest.fixture
def foreground_signals() -> Iterator[None]:
    """This process's SIGINT, SIGHUP and SIGTERM as :data:`FOREGROUND` for the test; the previous ones after."""
    previous = {sig: signal.signal(sig, handler) for sig, handler in FOREGROUND.items()}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: not installed from Python (cannot be put back), left as the test left it
                signal.signal(sig, handler)


def foreground_child() -> None:
    """``preexec_fn`` of a child the test sends SIGINT or SIGHUP: both at their default (the interpreter it
    executes then installs KeyboardInterrupt for SIGINT, as in a terminal)."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
