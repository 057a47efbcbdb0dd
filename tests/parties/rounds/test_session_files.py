"""roster.json and the key files of a deployed session (`mpdp keys`)."""

import json
import math
import os
import stat
from pathlib import Path

import pytest

from mpdp.broker.messages import Announcement
from mpdp.broker.sealed import open_sealed, seal
from mpdp.broker.signing import public_key_of, verify_message
from mpdp.parties.rounds.session_files import (
    coordinator_key_path,
    party_key_path,
    read_private_key,
    read_roster,
    read_server_keys,
    server_key_path,
    write_session,
)
from mpdp.protocols import ParameterError, RandomizedResponse

MECHANISMS = [RandomizedResponse(math.inf), RandomizedResponse(0.5), RandomizedResponse(1.0, 0.1),
              RandomizedResponse(0.0)]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_roster_round_trips_and_keys_are_private(tmp_path: Path) -> None:
    written = write_session(tmp_path, "s-1", MECHANISMS, split=[(0, 1), (2, 3)])
    facts = read_roster(tmp_path / "roster.json")
    assert facts == written and facts.roster.mechanisms == tuple(MECHANISMS)
    document = json.loads((tmp_path / "roster.json").read_text())
    assert set(document) == {"format", "session", "coordinator_public_key", "parties"}
    assert set(document["parties"][0]) == {"id", "epsilon", "delta", "four_output", "public_key"}
    assert document["parties"][0]["epsilon"] == "inf"  # as every other file mpdp writes
    folders = {"coordinator": None, "parties-0-1": (0, 1), "parties-2-3": (2, 3)}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*folders, "roster.json"])
    for folder in folders:
        assert _mode(tmp_path / folder) == 0o700
        for path in (tmp_path / folder).iterdir():
            assert _mode(path) == 0o600
    # each private key is the other half of the roster's public key: a signature verifies
    coordinator = read_private_key(coordinator_key_path(tmp_path / "coordinator"), facts, None)
    end = Announcement.signed(coordinator, session="s-1", kind="end", round=0, repetitions=1)
    assert verify_message(end, facts.coordinator_public_key)
    keys = [read_private_key(party_key_path(tmp_path / f"parties-{g}", i), facts, i)
            for g, ids in (("0-1", (0, 1)), ("2-3", (2, 3))) for i in ids]
    assert len(set(keys)) == 4 and all(len(k) == 32 for k in keys)


def test_no_split_puts_every_key_in_parties(tmp_path: Path) -> None:
    facts = write_session(tmp_path, "s-2", MECHANISMS[:2])
    assert sorted(p.name for p in (tmp_path / "parties").iterdir()) == ["party-0.key", "party-1.key"]
    assert read_private_key(party_key_path(tmp_path / "parties", 1), facts, 1)


def test_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    first = write_session(tmp_path, "s-3", MECHANISMS[:1])
    with pytest.raises(ParameterError, match="--force"):
        write_session(tmp_path, "s-3", MECHANISMS[:1])
    second = write_session(tmp_path, "s-3", MECHANISMS[:1], force=True)
    assert second.roster.public_keys != first.roster.public_keys
    assert read_private_key(party_key_path(tmp_path / "parties", 0), second, 0)
    assert _mode(party_key_path(tmp_path / "parties", 0)) == 0o600


@pytest.mark.parametrize("split", [[(0, 1)], [(0, 1), (1, 2, 3)], [(0, 1), (2, 3, 4)]])
def test_split_must_partition_the_parties(tmp_path: Path, split: list[tuple[int, ...]]) -> None:
    with pytest.raises(ParameterError, match="exactly once"):
        write_session(tmp_path, "s-4", MECHANISMS, split=split)
    assert not (tmp_path / "roster.json").exists()


def test_bad_key_files_are_refused(tmp_path: Path) -> None:
    facts = write_session(tmp_path / "a", "s-5", MECHANISMS[:2])
    other = write_session(tmp_path / "b", "s-6", MECHANISMS[:2])
    key0 = party_key_path(tmp_path / "a" / "parties", 0)
    with pytest.raises(ParameterError, match="party 1 in session 's-5'"):
        read_private_key(key0, facts, 1)
    with pytest.raises(ParameterError, match="coordinator in session"):
        read_private_key(key0, facts, None)
    with pytest.raises(ParameterError, match="it is party 0's key of session 's-6'"):
        read_private_key(party_key_path(tmp_path / "b" / "parties", 0), facts, 0)
    with pytest.raises(ParameterError, match="it is the coordinator's key of session 's-6'"):  # not "coordinator None"
        read_private_key(coordinator_key_path(tmp_path / "b" / "coordinator"), facts, None)
    with pytest.raises(ParameterError, match="private key of party 0's public key"):
        forged = other.to_file().model_copy(update={"session": "s-5"})
        read_private_key(key0, read_roster(_write(tmp_path / "forged.json", forged.model_dump_json())), 0)
    with pytest.raises(ParameterError, match="0..1"):
        read_private_key(key0, facts, 2)
    with pytest.raises(ParameterError, match="readable key file of party 0"):
        read_private_key(tmp_path / "missing.key", facts, 0)
    os.chmod(key0, 0o640)
    with pytest.raises(ParameterError, match="chmod 600"):
        read_private_key(key0, facts, 0)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_bad_rosters_are_refused(tmp_path: Path) -> None:
    write_session(tmp_path, "s-7", MECHANISMS[:2])
    document = json.loads((tmp_path / "roster.json").read_text())
    cases = {
        "bits: Extra inputs": {**document, "bits": [1, 0]},
        "entry 0 has party id 1; party ids must be 0..1": {**document, "parties": document["parties"][::-1]},
        "party id 0 appears twice \\(entries 0 and 1\\)": {**document, "parties": [document["parties"][0]] * 2},
        "parties 0 and 1 have the same public key": {**document, "parties": [
            document["parties"][0], {**document["parties"][1], "public_key": document["parties"][0]["public_key"]}]},
        "delta: Input should be less than 1": {**document, "parties": [{**document["parties"][0], "delta": 1.0}, document["parties"][1]]},
        "public_key: String should match": {**document, "parties": [{**document["parties"][0], "public_key": "abc"}, document["parties"][1]]},
    }
    for i, (needle, bad) in enumerate(cases.items()):
        with pytest.raises(ParameterError, match=needle):
            read_roster(_write(tmp_path / f"bad-{i}.json", json.dumps(bad)))
    with pytest.raises(ParameterError, match="readable roster.json"):
        read_roster(tmp_path / "nothing.json")


def test_an_mpc_roster_pins_the_servers_and_their_keys(tmp_path: Path) -> None:
    addresses = ["127.0.0.1:20001", "127.0.0.1:20002", "s2.example:11365"]
    facts = write_session(tmp_path, "mpc-1", MECHANISMS[1:2] * 4, servers=addresses, threshold=1)
    back = read_roster(tmp_path / "roster.json")
    assert back == facts and back.protocol == "mpc" and read_roster(tmp_path / "roster.json").servers == facts.servers
    assert back.servers is not None and back.servers.addresses == tuple(addresses) and back.servers.threshold == 1
    for i in range(3):
        keys = read_server_keys(server_key_path(tmp_path, i), back)
        assert keys.server == i and _mode(server_key_path(tmp_path, i)) == 0o600
        # the private keys are the roster's: a sealed share opens, a signature verifies
        ciphertext = seal(back.servers.sealing_keys[i], b"share", context=b"c", associated_data=b"a")
        assert open_sealed(keys.sealing, *ciphertext, context=b"c", associated_data=b"a") == b"share"
        assert public_key_of(keys.signing) == back.servers.signing_keys[i]
    # another server's key file, a party's key file, an rr roster: refused
    swapped = json.loads(server_key_path(tmp_path, 0).read_text())
    os.chmod(_write(tmp_path / "swapped.key", json.dumps({**swapped, "server": 1})), 0o600)
    with pytest.raises(ParameterError, match="private keys of server 1"):
        read_server_keys(tmp_path / "swapped.key", back)
    with pytest.raises(ParameterError, match="compute server's key"):
        read_server_keys(party_key_path(tmp_path / "parties", 0), back)
    rr = write_session(tmp_path / "rr", "rr-1", MECHANISMS[:2])
    assert rr.protocol == "rr" and rr.servers is None
    with pytest.raises(ParameterError, match="roster of an mpc session"):
        read_server_keys(server_key_path(tmp_path, 0), rr)


@pytest.mark.parametrize(("addresses", "threshold"), [(["127.0.0.1:1"] * 2, 1), (["no-port"], 0), (["a:1"], 1)])
def test_an_mpc_roster_needs_an_honest_majority_and_addresses(tmp_path: Path, addresses: list[str],
                                                              threshold: int) -> None:
    with pytest.raises(ParameterError, match="--servers"):
        write_session(tmp_path, "mpc-2", MECHANISMS[:2], servers=addresses, threshold=threshold)
    assert not (tmp_path / "roster.json").exists()
