"""SIGTERM and SIGHUP take Ctrl-C's path inside ``stop_like_interrupt`` (the real processes are in
tests/integration/test_signals.py)."""

from __future__ import annotations

import os
import signal

import pytest

from mpdp.parties.cli import signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_raises_keyboard_interrupt_and_names_itself(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    with pytest.raises(KeyboardInterrupt), signals.stop_like_interrupt():
        os.kill(os.getpid(), sig)
    assert signals.exit_code() == 128 + sig
    assert signal.getsignal(sig) is before  # the previous handler is back


def test_an_ignored_signal_stays_ignored() -> None:  # `nohup mpdp ...`
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals.stop_like_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
        assert signals.exit_code() == 130  # nothing received: a plain Ctrl-C's code
    finally:
        signal.signal(signal.SIGHUP, before)
