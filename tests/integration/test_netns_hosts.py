"""Many hosts, really apart (issue 13 item 4): Linux network namespaces joined by veth pairs. The broker
(mosquitto) and the observer (`mpdp observe`) live in one namespace, two party hosts (`mpdp party`) in two
others, each reaching the broker only over its own veth link; a small House-style deployment (`mpdp keys
--split`) completes. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's `ip`: skipped with the
reason otherwise. Every namespace, and every process in it, is removed even when the test fails."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mpdp.broker.mosquitto import CONFIG_TEMPLATE, render_config
from mpdp.broker.settings import find_mosquitto
from mpdp.parties.rounds.store import TranscriptStore
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import ROOT, VOTES, K, R, _finish, _kill_all
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
SUBNET = "10.213"  # 10.213.{1,2}.0/24: one link per party host, the broker's side is .1


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@contextlib.contextmanager
def _namespaces(tag: str) -> Iterator[dict[str, str]]:
    """Namespaces ``broker``, ``host1``, ``host2`` (names returned) with veth links broker<->host{1,2};
    on exit every process left in them is killed and the namespaces (and so the links) are deleted."""
    names = {role: f"mpdp-{tag}-{role}" for role in ("broker", "host1", "host2")}
    made: list[str] = []
    try:
        for name in names.values():
            _ip("netns", "add", name)
            made.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
        for n in (1, 2):
            near, far = f"mp{tag}b{n}", f"mp{tag}h{n}"
            _ip("link", "add", near, "netns", names["broker"], "type", "veth", "peer", "name", far,
                "netns", names[f"host{n}"])
            for ns, dev, addr in ((names["broker"], near, f"{SUBNET}.{n}.1/24"), (names[f"host{n}"], far, f"{SUBNET}.{n}.2/24")):
                _ip("-n", ns, "addr", "add", addr, "dev", dev)
                _ip("-n", ns, "link", "set", dev, "up")
        yield names
    finally:
        for name in made:
            pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, timeout=10).stdout
            for pid in pids.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


def _require_netns() -> None:
    if shutil.which("ip") is None:
        pytest.skip("iproute2's `ip` not installed (apt-get install iproute2)")
    probe = f"mpdp-probe-{secrets.token_hex(3)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if made.returncode != 0:
        pytest.skip(f"cannot create network namespaces here (needs root / CAP_SYS_ADMIN): {made.stderr.strip()}")
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)


async def _start_in(ns: str, *args: str, log: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "MPDP_BROKER_URL": ""}
    with log.open("wb") as fh:
        return await asyncio.create_subprocess_exec(
            "ip", "netns", "exec", ns, *args, cwd=ROOT, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=fh, stderr=asyncio.subprocess.STDOUT,
        )


async def _running(log: Path, proc: asyncio.subprocess.Process, seconds: float) -> None:
    """Wait until ``log`` says ``running`` (TimeoutError after ``seconds``, an idle machine's bound, scaled)."""
    async with asyncio.timeout(scaled(seconds)):
        while "running" not in log.read_text(errors="replace"):
            assert proc.returncode is None, log.read_text()
            await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_broker_and_observer_in_one_namespace_party_hosts_in_two_others(tmp_path: Path) -> None:
    require_mosquitto()
    _require_netns()
    mpdp = (sys.executable, "-m", "mpdp")
    session = f"ns-{tmp_path.name[-10:].replace('_', '')}"
    keys, out, votes = tmp_path / "keys", tmp_path / "out", tmp_path / "votes.csv"
    votes.write_text(VOTES)
    config = tmp_path / "mosquitto.conf"
    config.write_text(render_config(CONFIG_TEMPLATE.read_text(), 1883, host="0.0.0.0") + "log_type information\n")
    procs: list[asyncio.subprocess.Process] = []
    with _namespaces(secrets.token_hex(2)) as ns:
        try:
            procs.append(await asyncio.create_subprocess_exec(
                *mpdp, "keys", "--parties", str(K), "--epsilon", "inf", "--split", "0-4", "--split", "5-8",
                "--session", session, "--out", str(keys), cwd=ROOT))
            assert await _finish(procs[-1], 15) == 0
            procs.append(await _start_in(ns["broker"], str(find_mosquitto()), "-c", str(config),
                                         log=tmp_path / "mosquitto.log"))
            await _running(tmp_path / "mosquitto.log", procs[-1], 10)
            procs.append(await _start_in(
                ns["broker"], *mpdp, "observe", "--roster", str(keys / "roster.json"), "--keys",
                str(keys / "coordinator"), "--dataset-rounds", str(votes), "--function", "passed", "--broker",
                "mqtt://127.0.0.1:1883", "--out", str(out), "--wait-parties", scaled_arg(30), "--round-timeout", scaled_arg(15),
                log=tmp_path / "observe.log"))
            for n, (parties, split) in enumerate((("0-4", "parties-0-4"), ("5-8", "parties-5-8")), start=1):
                procs.append(await _start_in(
                    ns[f"host{n}"], *mpdp, "party", "--roster", str(keys / "roster.json"), "--dataset", str(votes),
                    "--keys", str(keys / split), "--parties", parties, "--broker", f"mqtt://{SUBNET}.{n}.1:1883",
                    log=tmp_path / f"host{n}.log"))
            codes = [await _finish(p, 60) for p in procs[2:]]
        finally:
            await _kill_all(procs)
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("observe", "host1", "host2")}
    assert codes == [0, 0, 0], logs
    assert len(json.loads((out / "decisions.json").read_text())["rounds"]) == R
    with TranscriptStore(out / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        assert all(store.load_round(session, r).status == "complete" for r in range(R))
        seen = collections.Counter((m["round"], m["party"]) for m in store.messages(session))
    assert seen == {(r, p): 1 for r in range(R) for p in range(K)}
    leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
    assert session not in leftover and not any(name in leftover for name in ns.values())
