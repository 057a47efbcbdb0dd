"""The private mosquitto child of a simulation admits only the run's own random login (real processes:
``mpdp simulate`` with its child broker and spawned workers): an anonymous client and a wrong password are
refused while the run goes on, the run completes, and the password appears in no output (``--json``, the
log, results). The run's process records the password it drew to a file for this test only (a wrapper
around :func:`mpdp.broker.passwords.new_password`); the broker is found by PID (the run's mosquitto child)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from mpdp.broker.connectivity import wait_until_accepting
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.ports import LOOPBACK
from mpdp.protocols.errors import TransportError
from tests.calibration import scaled
from tests.integration.test_deploy import ROOT, _finish, _kill_all
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

ROUNDS = 12
#: ``mpdp simulate`` (argv[2:]) with the password of its child broker also written to argv[1]
RECORDING = """
import pathlib, sys
import mpdp.broker.mosquitto as child
from mpdp.parties.cli.main import main
drawn = child.new_password
def recorded():
    password = drawn()
    pathlib.Path(sys.argv[1] + ".new").write_text(password)
    pathlib.Path(sys.argv[1] + ".new").rename(sys.argv[1])  # whole or not at all
    return password
child.new_password = recorded
sys.exit(main(sys.argv[2:]))
"""


def _child_broker(pid: int) -> tuple[int, str] | None:
    """(port, user name) of the mosquitto child of process ``pid`` (from its configuration and password
    file), or None while it has none."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            args = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if Path(args[0].decode()).name == "mosquitto" and b"-c" in args:
                lines = Path(args[args.index(b"-c") + 1].decode()).read_text().splitlines()
                port = next(int(line.split()[1]) for line in lines if line.startswith("listener "))
                passwords = next(line.split()[1] for line in lines if line.startswith("password_file "))
                return port, Path(passwords).read_text().partition(":")[0]
    return None


async def test_the_run_broker_refuses_anonymous_clients_and_the_password_is_never_printed(tmp_path: Path) -> None:
    require_mosquitto()
    secret, out, document, log = tmp_path / "secret", tmp_path / "out", tmp_path / "run.json", tmp_path / "run.log"
    argv = ["simulate", "--parties", "5", "--rounds", str(ROUNDS), "--seed", "4", "--workers", "2",
            "--broker", "mosquitto", "--out", str(out), "--json", str(document)]
    with log.open("wb") as fh:
        run = await asyncio.create_subprocess_exec(sys.executable, "-c", RECORDING, str(secret), *argv, cwd=ROOT,
                                                   stdin=asyncio.subprocess.DEVNULL, stdout=fh,
                                                   stderr=asyncio.subprocess.STDOUT)
    try:
        async with asyncio.timeout(scaled(30)):
            while (found := _child_broker(run.pid)) is None or not secret.exists():
                await asyncio.sleep(0.01)
        port, username = found
        password = secret.read_text()
        assert username.startswith("mpdp-run-") and len(password) == 32
        connect = scaled(3.0)
        login = BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=connect, reconnect_window=0.0, username=username,
                               password=password)
        await wait_until_accepting(login, scaled(20))  # the run's login works, once the child listens
        for stranger in (BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=connect, reconnect_window=0.0),
                         BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=connect, reconnect_window=0.0,
                                        username=username, password=password[::-1])):
            with pytest.raises(TransportError, match="(?i)refused client 'test-login-stranger'.*not authori[sz]ed"):
                async with stranger.connect("test-login-stranger"):
                    pass
        assert run.returncode is None  # refused by the running simulation's broker
        assert await _finish(run, 60) == 0, log.read_text()
    finally:
        await _kill_all([run])
    results = json.loads((out / "results.json").read_text())
    assert len(results["rounds"]) == ROUNDS and results["broker"]["kind"] == "mosquitto"
    assert username in results["broker"]["url"]  # the login's name is no secret; its password is
    printed = [log.read_text(), document.read_text(), *(p.read_text() for p in out.rglob("*.json"))]
    assert all(password not in text for text in printed)
