"""SIGTERM and SIGHUP take Ctrl-C's path inside ``stop_like_interrupt`` (the real processes are in
tests/integration/test_signals.py). Each test starts from a foreground run's dispositions, whatever the test
run inherited (``nohup pytest &`` ignores SIGHUP and SIGINT), and sets the ignored ones it is about."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest

from mpdp.parties.cli import signals
from mpdp.parties.session.processes import spawn
from tests.calibration import scaled
from tests.signal_dispositions import foreground_child, foreground_signals

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.usefixtures(foreground_signals.__name__)


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


def test_a_background_job_unwinds_its_event_loop_in_order() -> None:
    """``mpdp ... &`` ignores SIGINT, so ``asyncio.run`` installed no handler of its own and a SIGTERM raised
    KeyboardInterrupt inside the loop: ``asyncio.run`` then cancelled every task at once, the embedded
    broker's under it (pages of amqtt errors after the run's one line). Now the main task alone is
    cancelled and unwinds while the other tasks still run; SIGINT still has no effect."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    seen: list[bool] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        other = asyncio.create_task(asyncio.sleep(30))  # the broker's tasks
        # ignored (sent to this thread: the test runner's other threads do not block it, the CLI has none)
        loop.call_later(0.05, signal.pthread_kill, threading.main_thread().ident, signal.SIGINT)
        loop.call_later(0.3, os.kill, os.getpid(), signal.SIGTERM)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.01)
            seen.append(not other.done())  # still running while the main task unwinds
            other.cancel()
            raise

    try:
        with pytest.raises(KeyboardInterrupt), signals.stop_like_interrupt():
            asyncio.run(main())
        assert seen == [True] and signals.exit_code() == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        signal.signal(signal.SIGINT, before)


def _report_sigint(path: str) -> None:
    """A spawned child's SIGINT disposition, written to ``path``."""
    Path(path).write_text("ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "handled")


def test_a_background_jobs_workers_ignore_sigint_as_it_does(tmp_path: Path) -> None:
    """A terminal's Ctrl-C reaches a background job's whole process group: its workers ignore SIGINT as the
    job does (they ended with code 130 mid-round once the job's SIGINT was blocked, not ignored)."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for ignored in (True, False):
            if not ignored:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            started: list[BaseProcess] = []
            with signals.stop_like_interrupt():
                spawn(_report_sigint, (str(tmp_path / f"{ignored}"),), "probe", started)
                started[0].join(30)
            assert started[0].exitcode == 0
            assert (tmp_path / f"{ignored}").read_text() == ("ignored" if ignored else "handled")
    finally:
        signal.signal(signal.SIGINT, before)


class _SignalOnPickle:
    """An argument of a spawned child whose pickling, inside ``Process.start`` in this process, sends
    this process ``sig``: a stop signal that arrives in the middle of a worker's start."""

    def __init__(self, sig: signal.Signals) -> None:
        self.sig = sig

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        os.kill(os.getpid(), self.sig)
        return int, (0,)


def _report_started(path: str, _token: int) -> None:
    """A spawned child that has started: it writes ``started`` to ``path``."""
    Path(path).write_text("started")


@pytest.mark.parametrize("background", [True, False], ids=["background", "foreground"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_during_a_workers_start_waits_for_the_start(sig: signal.Signals, background: bool,
                                                                   tmp_path: Path) -> None:
    """A stop signal that arrives while a worker is being started (``nohup mpdp simulate ... &`` then
    ``kill -TERM``) stops the run once the worker has started, never half-way: a background job's SIGTERM
    raised KeyboardInterrupt inside ``Process.start``, and a child whose start data was cut off printed
    multiprocessing's ``EOFError: Ran out of input`` traceback (2 of 4 trials). The child here starts in
    full (it writes its file), and the signal still stops this process, named by its exit code."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if background else signal.default_int_handler)
    started: list[BaseProcess] = []
    try:
        with pytest.raises(KeyboardInterrupt), signals.stop_like_interrupt():
            spawn(_report_started, (str(tmp_path / "child"), _SignalOnPickle(sig)), "probe", started)
        assert signals.exit_code() == 128 + sig
        started[0].join(60)
        assert started[0].exitcode == 0 and (tmp_path / "child").read_text() == "started"
    finally:
        for proc in started:
            if proc.is_alive():
                proc.kill()
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_stop_signal_inside_exec_of_a_string_exits_with_its_own_code(sig: signal.Signals) -> None:
    """A stop signal while scipy is imported (its ``array_api_compat`` runs ``exec`` of strings) exited 130, killed
    by SIGINT at the interpreter's exit, in 2 of 40 trials: CPython took the plain KeyboardInterrupt that passed
    through the exec'd code for an unhandled Ctrl-C. The handlers raise StopSignal, which it does not."""
    probe = subprocess.run([sys.executable, "-m", "tests.parties.cli.stop_in_exec", sig.name], cwd=ROOT,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=scaled(60),
                           preexec_fn=foreground_child)
    assert probe.returncode == 128 + sig, (probe.returncode, probe.stderr)  # was -2 (killed by SIGINT)
    assert probe.stderr == ""


def test_a_stop_signal_is_a_keyboard_interrupt_naming_its_signal() -> None:
    assert isinstance(signals.StopSignal(signal.SIGTERM), KeyboardInterrupt)
    assert (signals.StopSignal(signal.SIGTERM).signum, str(signals.StopSignal(signal.SIGHUP))) == (15, "SIGHUP")


def test_a_stop_signal_during_an_import_stops_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Raised inside an import, the interrupt could be turned into another error by a compiled module's
    initialization (scipy's HiGHS wrapper: ``ImportError: initialization failed``, exit 1): the signal is delivered
    again until the import is done, and stops the command there."""
    (tmp_path / "slow_module_of_the_test.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(0.3)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    imported = []
    with pytest.raises(signals.StopSignal), signals.stop_like_interrupt():
        import slow_module_of_the_test  # type: ignore[import-not-found]  # noqa: F401, PLC0415

        imported.append(sys.modules["slow_module_of_the_test"].DONE)
        time.sleep(scaled(5))  # the signal comes again here, after the import
    assert imported == [True] and signals.exit_code() == 143
    sys.modules.pop("slow_module_of_the_test", None)


def test_a_stop_signal_inside_asyncio_before_its_handler_waits_for_asyncio(tmp_path: Path) -> None:
    """Inside asyncio's code while no asyncio handler is installed (``asyncio.run`` making its loop: a StopSignal
    raised in the loop's constructor left a half-made loop whose ``__del__`` printed a traceback), the signal
    is put off until asyncio's code is left, here the end of ``run_until_complete``."""
    finished = []

    async def work() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(0.3)
        finished.append(True)

    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(signals.StopSignal), signals.stop_like_interrupt():
            loop.run_until_complete(work())
            time.sleep(scaled(5))  # out of asyncio: the signal comes again here
    finally:
        loop.close()
    assert finished == [True] and signals.exit_code() == 143
