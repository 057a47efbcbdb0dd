"""``mpdp broker config`` (mpdp.broker.lockdown): the files it writes, checked offline, and a real mosquitto
started from them: logins, TLS, the ACL and the observer's client id."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import ipaddress
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from cryptography import x509

from mpdp.broker.certificates import CertificateAuthority
from mpdp.broker.connectivity import check_connectivity
from mpdp.broker.lockdown import (
    GROUP_FILE,
    OBSERVER,
    Limits,
    acl_text,
    server_user,
    validator_user,
    write_broker_config,
)
from mpdp.broker.passwords import password_line, verify_password_line
from mpdp.broker.settings import PASSWORD_FILE_ENV, BrokerSettings
from mpdp.broker.topics import Topics, new_validator_group
from mpdp.broker.transport import Transport
from mpdp.protocols.errors import ParameterError, TransportError
from tests.calibration import scaled
from tests.mqtt_fixtures import child_mosquitto, locked_mosquitto, read_env_file, serve_locked

SESSION = "lock-1"
HOSTS = {"parties-0-1": [0, 1], "parties-2": [2]}
TOPICS = Topics(SESSION)


def test_password_lines_are_the_format_mosquitto_passwd_writes(tmp_path: Path) -> None:
    """Two ways: our verifier accepts mosquitto_passwd's own line, and our line with its salt is identical."""
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        pytest.skip("mosquitto_passwd not installed")
    file = tmp_path / "passwd"
    subprocess.run([tool, "-b", "-c", str(file), "alice", "s3cret:x"], check=True, capture_output=True)
    line = file.read_text().strip()
    assert verify_password_line(line, "alice", "s3cret:x") and not verify_password_line(line, "alice", "wrong")
    salt = __import__("base64").b64decode(line.split("$")[3])
    assert password_line("alice", "s3cret:x", salt=salt) == line
    with pytest.raises(ParameterError, match="username"):
        password_line("a:b", "x")


def test_the_server_certificate_names_loopback_and_every_host_and_chains_to_the_ca() -> None:
    ca = CertificateAuthority("mpdp CA test", days=2)
    server = x509.load_pem_x509_certificate(ca.server(["broker.example", "10.0.0.7"]).certificate)
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == {"localhost", "broker.example"}
    assert set(names.get_values_for_type(x509.IPAddress)) == {ipaddress.ip_address(a) for a in
                                                              ("127.0.0.1", "::1", "10.0.0.7")}
    client = x509.load_pem_x509_certificate(ca.client("parties-2").certificate)
    for cert in (server, client):
        cert.verify_directly_issued_by(ca.certificate)
    assert client.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "parties-2"
    with pytest.raises(ParameterError, match="days"):
        CertificateAuthority("x", days=0)


def test_each_party_host_writes_only_its_own_parties_topics() -> None:
    text = acl_text(TOPICS, HOSTS, party_decisions=False)
    blocks = {block.splitlines()[0]: set(block.splitlines()[1:]) for block in text.split("\n\n")[1:]}
    assert blocks["user parties-2"] == {f"topic read {TOPICS.rounds}", f"topic read {TOPICS.heartbeat}",
                                        f"topic readwrite {TOPICS.status}", f"topic readwrite {TOPICS.presence}",
                                        f"topic write {TOPICS.party(2)}"}
    assert blocks[f"user {OBSERVER}"] >= {f"topic read {TOPICS.all_parties}", f"topic write {TOPICS.rounds}",
                                         f"topic write {TOPICS.heartbeat}"}
    with_decisions = acl_text(TOPICS, HOSTS, party_decisions=True)
    assert f"topic write {TOPICS.decision(0)}" in with_decisions and f"topic read {TOPICS.transcript}" in with_decisions


def test_each_compute_server_reads_only_its_own_jobs_and_writes_only_its_own_reports() -> None:
    text = acl_text(TOPICS, HOSTS, party_decisions=False, servers=3)
    blocks = {block.splitlines()[0]: set(block.splitlines()[1:]) for block in text.split("\n\n")[1:]}
    assert blocks["user mpc-server-1"] == {f"topic read {TOPICS.mpc_job(1)}", f"topic read {TOPICS.rounds}",
                                           f"topic read {TOPICS.heartbeat}",
                                           f"topic write {TOPICS.mpc_server(1)}"}
    assert blocks[f"user {OBSERVER}"] >= {f"topic write {TOPICS.all_mpc_jobs}", f"topic read {TOPICS.all_mpc_servers}"}
    assert not any("/mpc/" in line for name in HOSTS for line in blocks[f"user {name}"])
    assert "/mpc/" not in acl_text(TOPICS, HOSTS, party_decisions=False)  # no servers: no server grant at all


def test_secrets_are_private_files_and_a_second_run_needs_force(tmp_path: Path) -> None:
    config = write_broker_config(tmp_path, SESSION, HOSTS, names=["broker.example"])
    assert config.config == tmp_path / "broker" / "mosquitto.conf"
    for name in ("passwd", "acl", "server.key"):
        assert stat.S_IMODE((tmp_path / "broker" / name).stat().st_mode) == 0o600, name
    for folder in config.clients.values():
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in folder.iterdir()} == dict.fromkeys(
            ("ca.crt", "client.crt", "client.key", "password", "broker.env"), 0o600)
    env = read_env_file(config.clients["parties-2"] / "broker.env")
    assert env["MPDP_BROKER_URL"] == "mqtts://broker.example:8883" and env["MPDP_BROKER_USERNAME"] == "parties-2"
    assert (config.clients["parties-2"] / "password").read_text() == env["MPDP_BROKER_PASSWORD"]
    assert env["MPDP_BROKER_CERT"] == str((config.clients["parties-2"] / "client.crt").resolve())
    lines = (tmp_path / "broker" / "passwd").read_text().splitlines()
    assert [line.split(":")[0] for line in lines] == [OBSERVER, *HOSTS]
    assert verify_password_line(lines[2], "parties-2", env["MPDP_BROKER_PASSWORD"])
    with pytest.raises(ParameterError, match="--force"):
        write_broker_config(tmp_path, SESSION, HOSTS)
    with pytest.raises(ParameterError, match="disjoint"):
        write_broker_config(tmp_path / "x", SESSION, {"a": [0, 1], "b": [1]})
    with pytest.raises(ParameterError, match="mpdp-"):
        write_broker_config(tmp_path / "y", SESSION, {"mpdp-a": [0]})
    with pytest.raises(ParameterError, match="servers"):
        write_broker_config(tmp_path / "z", SESSION, {"mpc-server-0": [0]}, servers=1)
    with pytest.raises(ParameterError, match="compute servers in 0..31"):
        write_broker_config(tmp_path / "w", SESSION, HOSTS, servers=32)


def test_each_compute_server_gets_its_own_login_on_the_party_listener(tmp_path: Path) -> None:
    config = write_broker_config(tmp_path, SESSION, HOSTS, servers=2, party_port=9001, observer_port=9002)
    assert config.servers == ("mpc-server-0", "mpc-server-1") == tuple(server_user(i) for i in range(2))
    lines = (tmp_path / "broker" / "passwd").read_text().splitlines()
    assert [line.split(":")[0] for line in lines] == [OBSERVER, *HOSTS, *config.servers]
    for i, name in enumerate(config.servers):
        env = read_env_file(config.clients[name] / "broker.env")
        assert env["MPDP_BROKER_URL"] == "mqtts://127.0.0.1:9001" and env["MPDP_BROKER_USERNAME"] == name
        assert verify_password_line(lines[3 + i], name, env["MPDP_BROKER_PASSWORD"])
        assert stat.S_IMODE(config.clients[name].stat().st_mode) == 0o700


def test_the_password_can_come_from_a_file_as_container_secrets_do(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("from-a-file\n")
    settings = BrokerSettings.from_url("mqtts://u@h", {PASSWORD_FILE_ENV: str(secret)})
    assert settings.password is not None and settings.password.get_secret_value() == "from-a-file"
    with pytest.raises(ParameterError, match=PASSWORD_FILE_ENV):
        BrokerSettings.from_url("mqtts://u@h", {PASSWORD_FILE_ENV: str(tmp_path / "missing")})


async def _next(transport, seconds: float = 5.0) -> tuple[str, bytes]:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(seconds):
        async for delivery in transport.deliveries():
            return delivery.topic, delivery.payload
    raise AssertionError("no delivery")


# paho-mqtt 2.2 leaves the TLS socket of a failed handshake (the foreign CA) to the garbage collector
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_wrong_password_no_certificate_and_plain_tcp_are_refused(tmp_path: Path) -> None:
    other_ca = tmp_path / "other-ca.crt"
    other_ca.write_bytes(CertificateAuthority("someone else").certificate_pem)
    async with locked_mosquitto(tmp_path / "broker", SESSION, HOSTS) as broker:
        host = broker.endpoint("parties-2")
        async with host.connect("mpdp-test-good"):
            pass
        refused = {
            "wrong password": dataclasses.replace(host, password="wrong"),
            "another host's password": dataclasses.replace(host, password=broker.env("parties-0-1")["MPDP_BROKER_PASSWORD"]),
            "no password": dataclasses.replace(host, username=None, password=None),
            # the broker drops this connection before any CONNACK: the client gives up at its timeout
            "plain TCP to the TLS listener": dataclasses.replace(host, scheme="mqtt", cafile=None, certfile=None,
                                                                 keyfile=None, timeout=1.0, reconnect_window=0.0),
            "a CA that did not sign the broker": dataclasses.replace(host, cafile=str(other_ca)),
        }
        for what, endpoint in refused.items():
            with pytest.raises(TransportError):
                async with endpoint.connect("mpdp-test-bad"):
                    pytest.fail(f"{what}: connected")
    gc.collect()  # that socket's warning here, where it is expected, not in a later test


@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
async def test_a_missing_or_foreign_client_certificate_is_named_at_once(
        tmp_path: Path, protocol: str, capfd: pytest.CaptureFixture[str]) -> None:
    # TLS 1.3: the broker's CERTIFICATE_REQUIRED alert comes after the handshake, in paho's read loop;
    # the connect fails on it at once (it used to wait for its 10 s timeout) and is not retried
    foreign = CertificateAuthority("someone else").client("parties-2")
    (tmp_path / "foreign.crt").write_bytes(foreign.certificate)
    (tmp_path / "foreign.key").write_bytes(foreign.key)
    async with locked_mosquitto(tmp_path / "broker", SESSION, HOSTS) as broker:
        bare = dataclasses.replace(broker.endpoint("parties-2"), certfile=None, keyfile=None, timeout=10.0,
                                   reconnect_window=1.0, protocol=protocol)
        capfd.readouterr()
        started = time.monotonic()
        with pytest.raises(TransportError) as info:
            await check_connectivity(bare)
        elapsed = time.monotonic() - started
        # a certificate of another CA: the broker's UNKNOWN_CA alert, named too
        with pytest.raises(TransportError, match="the broker does not know the CA of this client's certificate"):
            await check_connectivity(dataclasses.replace(bare, certfile=str(tmp_path / "foreign.crt"),
                                                         keyfile=str(tmp_path / "foreign.key")))
        assert time.monotonic() - started < 6.0
    assert elapsed < 3.0, elapsed
    message = str(info.value)
    assert message.startswith(f"the MQTT broker at {bare.url} refused client 'mpdp-check-")
    assert message.endswith("': the broker requires a client certificate: pass --cert/--key "
                            "(or $MPDP_BROKER_CERT/$MPDP_BROKER_KEY)")
    assert "\n" not in message
    assert capfd.readouterr() == ("", "")  # nothing from paho or aiomqtt besides the error


@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
async def test_a_party_cannot_publish_for_another_host_or_read_party_topics(tmp_path: Path, protocol: str) -> None:
    async with locked_mosquitto(tmp_path, SESSION, HOSTS) as broker:
        observer, host_a, host_b = (dataclasses.replace(broker.endpoint(name), protocol=protocol)
                                    for name in (OBSERVER, "parties-0-1", "parties-2"))
        async with observer.connect(f"mpdp-{SESSION}-observer", persistent=True) as watch, \
                host_a.connect("mpdp-test-a") as a, host_b.connect("mpdp-test-b") as b:
            await watch.subscribe(TOPICS.all_parties, TOPICS.status)
            with contextlib.suppress(TransportError):  # refused (MQTT 5), or granted and never delivered
                await a.subscribe(TOPICS.all_parties, "#")
            for topic in (TOPICS.party(2), TOPICS.rounds, TOPICS.transcript, f"mpdp/{SESSION}/party/7"):
                with contextlib.suppress(TransportError):  # MQTT 5: a refusing PUBACK
                    await a.publish(topic, b"forged")
            await a.publish(TOPICS.party(0), b"own")  # after the forgeries, on the same connection (in order)
            assert await _next(watch) == (TOPICS.party(0), b"own")
            await b.publish(TOPICS.party(2), b"b's own")
            assert await _next(watch) == (TOPICS.party(2), b"b's own")
            for transport in (watch, a):  # nothing else reached the observer; party A read nothing
                with pytest.raises(TimeoutError):
                    await _next(transport, 0.5)


async def test_nobody_else_can_use_the_observer_client_id(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with locked_mosquitto(tmp_path, SESSION, HOSTS) as broker:
        observer, host_a = broker.endpoint(OBSERVER), broker.endpoint("parties-0-1")
        on_observer_listener = dataclasses.replace(host_a, port=observer.port)
        caplog.set_level(logging.WARNING, logger="mpdp.transport")
        async with observer.connect(f"mpdp-{SESSION}-observer", persistent=True) as watch:
            await watch.subscribe(TOPICS.all_parties)
            # ids without the mpdp- prefix are refused on either listener
            for endpoint in (host_a, on_observer_listener):
                with pytest.raises(TransportError, match="refused"):
                    async with endpoint.connect(OBSERVER):
                        pass
            # on the observer's listener the id becomes the user name: parties-0-1, not the observer
            client_id = f"mpdp-{SESSION}-observer"
            async with on_observer_listener.connect(client_id) as intruder, host_a.connect(client_id) as other:
                for transport in (intruder, other):
                    await transport.publish(TOPICS.party(1), client_id.encode())
                    assert await _next(watch) == (TOPICS.party(1), client_id.encode())
        assert not [r for r in caplog.records if "lost the connection" in r.getMessage()]
        # the observer offline: its persistent session outlives the intruders and keeps what arrives meanwhile
        async with on_observer_listener.connect(client_id, persistent=True), host_a.connect(client_id) as other:
            await other.publish(TOPICS.party(0), b"while the observer was away")
        async with observer.connect(f"mpdp-{SESSION}-observer", persistent=True) as watch:
            assert await _next(watch) == (TOPICS.party(0), b"while the observer was away")


async def test_with_persistence_the_observers_queue_survives_a_broker_killed_and_restarted(tmp_path: Path) -> None:
    """``mpdp broker config --persistence DIR``: an answer the broker acknowledged while the observer was away
    is delivered to it by the broker restarted after a SIGKILL (saved every second; without persistence it is
    lost and the observer re-announces the round)."""
    data = tmp_path / "data"
    data.mkdir()
    async with locked_mosquitto(tmp_path / "config", SESSION, HOSTS, persistence=data) as broker:
        observer, host = broker.endpoint(OBSERVER), broker.endpoint("parties-0-1")
        assert f"persistence_location {data}/" in (tmp_path / "config" / "broker" / "mosquitto.conf").read_text()
        async with observer.connect(f"mpdp-{SESSION}-observer", persistent=True) as away:
            await away.subscribe(TOPICS.all_parties)
        async with host.connect(f"mpdp-{SESSION}-host") as publisher:
            await publisher.publish(TOPICS.party(0), b"answered before the outage")
        published = time.time()
        async with asyncio.timeout(scaled(10)):  # saved at the next second's autosave
            while not (data / "mosquitto.db").exists() or (data / "mosquitto.db").stat().st_mtime <= published:
                await asyncio.sleep(0.05)
        os.kill(child_mosquitto(host.port), signal.SIGKILL)
    async with serve_locked(tmp_path / "config", "parties-0-1") as again:
        async with again.endpoint(OBSERVER).connect(f"mpdp-{SESSION}-observer", persistent=True) as back:
            assert await _next(back, scaled(5)) == (TOPICS.party(0), b"answered before the outage")


async def test_queues_and_packets_are_bounded(tmp_path: Path) -> None:
    """A client offline with a persistent session gets at most max_queued_messages on its return; a packet
    over max_packet_size never reaches anyone (and costs its sender the connection)."""
    limits = Limits(max_queued_messages=5, max_packet_size=4096)
    async with locked_mosquitto(tmp_path, SESSION, HOSTS, limits=limits) as broker:
        observer, host = broker.endpoint(OBSERVER), broker.endpoint("parties-2")
        client_id = f"mpdp-{SESSION}-observer"
        async with observer.connect(client_id, persistent=True) as watch:
            await watch.subscribe(TOPICS.all_parties)
        async with host.connect("mpdp-test-flood") as flood:
            for i in range(20):
                await flood.publish(TOPICS.party(2), f"{i}".encode())
        async with observer.connect(client_id, persistent=True) as watch:
            got = [(await _next(watch))[1] for _ in range(limits.max_queued_messages)]
            with pytest.raises(TimeoutError):
                await _next(watch, 0.5)
        assert got == [f"{i}".encode() for i in range(5)]
        async with observer.connect(client_id) as watch, \
                dataclasses.replace(host, reconnect_window=0.0, timeout=1.0).connect("mpdp-test-big") as big:
            await watch.subscribe(TOPICS.all_parties)
            with contextlib.suppress(TransportError, TimeoutError):  # never acknowledged: the broker hung up
                async with asyncio.timeout(1):
                    await big.publish(TOPICS.party(2), b"x" * 8192)
            with pytest.raises(TimeoutError):
                await _next(watch, 0.5)


async def test_parties_cannot_reach_server_topics_and_no_server_reads_another_servers_jobs(tmp_path: Path) -> None:
    """Three compute servers' logins: what a party host or a server publishes to a topic not its own never
    arrives, and a server subscribed to another server's jobs gets none of them."""
    async with locked_mosquitto(tmp_path, SESSION, HOSTS, servers=3) as broker:
        observer, party = broker.endpoint(OBSERVER), broker.endpoint("parties-0-1")
        server0, server1 = broker.endpoint(server_user(0)), broker.endpoint(server_user(1))
        async with observer.connect(f"mpdp-{SESSION}-mpc") as coordinator, party.connect("mpdp-test-p") as p, \
                server0.connect("mpdp-test-s0") as s0, server1.connect("mpdp-test-s1") as s1:
            await coordinator.subscribe(TOPICS.all_mpc_servers)
            await s0.subscribe(TOPICS.mpc_job(0), TOPICS.rounds)
            for transport, topics in ((s1, (TOPICS.mpc_job(1), TOPICS.mpc_job(0), TOPICS.all_mpc_jobs)),
                                      (p, (TOPICS.all_mpc_jobs, TOPICS.all_mpc_servers))):
                for topic in topics:
                    with contextlib.suppress(TransportError):  # refused (MQTT 5), or granted and never delivered
                        await transport.subscribe(topic)
            for transport, topic in ((p, TOPICS.mpc_job(0)), (p, TOPICS.mpc_server(0)), (s1, TOPICS.mpc_server(0)),
                                     (s1, TOPICS.mpc_job(0)), (s0, TOPICS.mpc_job(1))):
                with contextlib.suppress(TransportError):  # MQTT 5: a refusing PUBACK
                    await transport.publish(topic, b"forged")
            for i in (0, 1):
                await coordinator.publish(TOPICS.mpc_job(i), f"job {i}".encode())
            await s0.publish(TOPICS.mpc_server(0), b"report 0")
            assert await _next(s0) == (TOPICS.mpc_job(0), b"job 0")
            assert await _next(s1) == (TOPICS.mpc_job(1), b"job 1")
            assert await _next(coordinator) == (TOPICS.mpc_server(0), b"report 0")
            for transport in (coordinator, p, s0, s1):  # nothing else reached anyone
                with pytest.raises(TimeoutError):
                    await _next(transport, 0.5)


async def test_only_the_validators_know_their_secret_group_and_no_other_login_takes_an_answer(tmp_path: Path) -> None:
    """Issue 22: no anonymous client; the group is a secret written only into the validators' folders (and the
    ACL); the two validators split the answers (each to exactly one). A party host or a compute server that
    joins the old well-known group, a guessed one or the plain topic takes nothing from them: every answer
    still reaches a validator. (mosquitto 2.0 grants another login's subscription to the validators' own
    group and drops the answers it assigns to it: a client that knew the name would make answers disappear.)"""
    async with locked_mosquitto(tmp_path, SESSION, HOSTS, validators=2, servers=1) as broker:
        v0, v1 = (dataclasses.replace(broker.endpoint(validator_user(i)), protocol="5") for i in range(2))
        host, server = (dataclasses.replace(broker.endpoint(n), protocol="5") for n in ("parties-0-1", server_user(0)))
        assert v0.port == broker.endpoint(OBSERVER).port != host.port
        group = (tmp_path / "clients" / validator_user(0) / GROUP_FILE).read_text()
        assert group == (tmp_path / "clients" / validator_user(1) / GROUP_FILE).read_text()
        assert re.fullmatch(r"mpdp-v-[0-9a-f]{32}", group)
        holders = sorted(str(f.relative_to(tmp_path)) for f in tmp_path.rglob("*") if f.is_file() and group in f.read_text(
            errors="replace"))
        assert holders == ["broker/acl", f"clients/{validator_user(0)}/{GROUP_FILE}", f"clients/{validator_user(1)}/{GROUP_FILE}"]
        anonymous = dataclasses.replace(v0, username=None, password=None)
        with pytest.raises(TransportError):
            async with anonymous.connect("mpdp-test-anonymous"):
                pytest.fail("an anonymous client connected")
        async with v0.connect("mpdp-test-v0") as a, v1.connect("mpdp-test-v1") as b, \
                host.connect("mpdp-test-thief") as thief, server.connect("mpdp-test-s") as s, \
                host.connect("mpdp-test-sender") as sender:
            await a.subscribe(TOPICS.shared_parties(group))
            await b.subscribe(TOPICS.shared_parties(group))

            async def deliver(count: int, transports: dict[str, Transport]) -> dict[str, list[bytes]]:
                sent = [f"answer {i}".encode() for i in range(count)]
                for payload in sent:
                    await sender.publish(TOPICS.party(0), payload)
                received: dict[str, list[bytes]] = {name: [] for name in transports}

                async def collect(name: str, transport: Transport) -> None:
                    with contextlib.suppress(TimeoutError):
                        while True:
                            received[name].append((await _next(transport, scaled(1.5)))[1])

                await asyncio.gather(*(collect(name, t) for name, t in transports.items()))
                got = [p for name in ("a", "b") for p in received[name]]
                assert len(got) == len(set(got)) and set(got) <= set(sent)
                return received

            first = await deliver(40, {"a": a, "b": b})
            assert sorted(first["a"] + first["b"]) == sorted(f"answer {i}".encode() for i in range(40))
            assert first["a"] and first["b"]  # both validators take part
            for transport, guess in ((thief, "mpdp-validators"), (s, new_validator_group())):
                for topic in (f"$share/{guess}/{TOPICS.all_parties}", TOPICS.all_parties):
                    with contextlib.suppress(TransportError):  # refused, or granted and never delivered
                        await transport.subscribe(topic)
            second = await deliver(40, {"a": a, "b": b, "thief": thief, "s": s})
            assert second["thief"] == second["s"] == []  # no answer reaches another login
            assert sorted(second["a"] + second["b"]) == sorted(f"answer {i}".encode() for i in range(40))  # none lost


@pytest.mark.parametrize("name", ["bad host", "broker_1.example", "-lead.example", "x" * 64 + ".org", "a..b", ""])
def test_a_host_that_is_no_address_nor_host_name_is_refused(tmp_path: Path, name: str) -> None:
    """``--host 'bad host'`` went into the certificate and every broker.env; the hosts then failed for 10 min
    on "Name or service not known". Refused, naming the option and the value, and nothing is written."""
    with pytest.raises(ParameterError, match=re.escape(f"--host={name!r} is not allowed: an IP address or a DNS host")):
        write_broker_config(tmp_path / "out", SESSION, HOSTS, names=[name])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["broker.example.org", "mosquitto", "10.0.0.7", "fd00::1", "b-1.example."])
def test_addresses_and_host_names_are_taken(tmp_path: Path, name: str) -> None:
    config = write_broker_config(tmp_path, SESSION, HOSTS, names=[name])
    assert all(name in (directory / "broker.env").read_text() for directory in config.clients.values())
