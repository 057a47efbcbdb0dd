"""``python -m tests.parties.cli.stop_in_exec SIGNAL``: a stop signal delivered inside code run by ``exec`` of a
string, as scipy's imports run some, under the CLI's handlers (``stop_like_interrupt`` and ``starting``); exits
with :func:`mpdp.parties.cli.signals.exit_code`. Run with ``-m``: only then does CPython (3.11) kill a process whose
plain KeyboardInterrupt passed through such code with SIGINT at its exit, whatever code it exits with."""

from __future__ import annotations

import sys

from mpdp.parties.cli import signals

if __name__ == "__main__":
    with signals.stop_like_interrupt(), signals.starting():
        try:
            exec(f"import os, signal, time\nos.kill(os.getpid(), signal.{sys.argv[1]})\ntime.sleep(30)")  # noqa: S102
        except KeyboardInterrupt:
            sys.exit(signals.exit_code())
    sys.exit(1)  # the signal did not stop it
