"""The files of a deployed session: ``mpdp keys`` writes them, ``mpdp party`` and ``mpdp observe`` read them.

::

    DIR/roster.json                      public: the session id, each party's id, epsilon, delta and
                                         Ed25519 public key, the coordinator's public key
    DIR/coordinator/coordinator.key      the coordinator's private key (signs round announcements)
    DIR/parties/party-{i}.key            party i's private key; with a split, one directory per range
                                         (DIR/parties-0-217/, DIR/parties-218-434/), one per host
    DIR/server-{i}/server-{i}.key        --protocol mpc: compute server i's private keys (X25519 opens the
                                         shares sealed to it, Ed25519 signs its releases), one per host;
                                         the roster's ``mpc`` section pins the servers' public keys, their
                                         MPyC addresses (host:port) and the threshold T

Key files are JSON (:class:`KeyFile`), mode 0600 in directories of mode 0700, and are refused when
group or others can read them. No private bit is in any of these files. Keys are raw 32-byte Ed25519
keys (RFC 8032) in base64; a key file names its session and party, and is checked against the
roster's public key when it is read.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, Self

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, ValidationError, model_validator

from mpdp.broker.mpc_messages import MAX_SERVERS
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, public_key_of
from mpdp.broker.topics import SESSION_PATTERN, check_session
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.staged_dir import staged_dir
from mpdp.parties.rounds.text_files import read_text_file
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = [
    "KeyFile",
    "MpcServersFile",
    "PartyEntry",
    "RosterFile",
    "ServerEntry",
    "ServerKeyPair",
    "ServerRoster",
    "SessionRoster",
    "coordinator_key_path",
    "party_key_path",
    "read_private_key",
    "read_roster",
    "read_server_keys",
    "server_key_path",
    "write_session",
]

ROSTER_NAME = "roster.json"
_KEY = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{43}=$")]  # 32 bytes in base64
_PRIVATE_DIR, _PRIVATE_FILE = 0o700, 0o600
_ADDRESS = r"^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$"  # an MPyC party address host:port (IPv4 or name)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")


#: A privacy level in a file: a JSON number, or ``"inf"`` as in every other file mpdp writes (read back
#: as a float; ``"Infinity"``, which earlier versions wrote, is read too).
_EPSILON = Annotated[float, Field(ge=0), PlainSerializer(lambda v: "inf" if math.isinf(v) else v,
                                                         return_type=float | str, when_used="json")]


class PartyEntry(_File):
    """One party in ``roster.json``: its id, its randomized response and its public key."""

    id: Annotated[int, Field(ge=0)]
    epsilon: _EPSILON
    delta: Annotated[float, Field(ge=0, lt=1)]
    four_output: bool
    public_key: _KEY


class ServerEntry(_File):
    """One compute server in ``roster.json`` (``--protocol mpc``): its id, its MPyC address and public keys."""

    id: Annotated[int, Field(ge=0)]
    address: Annotated[str, Field(pattern=_ADDRESS)]
    sealing_public_key: _KEY
    signing_public_key: _KEY


class MpcServersFile(_File):
    """The ``mpc`` section of ``roster.json``: the m compute servers (ids 0..m-1 in order) and T, 2T < m."""

    threshold: Annotated[int, Field(ge=0)]
    servers: Annotated[tuple[ServerEntry, ...], Field(min_length=1, max_length=MAX_SERVERS)]

    @model_validator(mode="after")
    def _ids_and_threshold(self) -> Self:
        if [s.id for s in self.servers] != list(range(len(self.servers))):
            raise ValueError(f"server ids must be 0..{len(self.servers) - 1} in order")
        if 2 * self.threshold >= len(self.servers):
            raise ValueError(f"threshold {self.threshold} needs 2T < m = {len(self.servers)}")
        return self


class RosterFile(_File):
    """``roster.json``: everything public about a session. Party ids are 0..k-1 in order; ``mpc`` lists
    the compute servers of a ``--protocol mpc`` session (None for randomized response)."""

    format: Literal["mpdp-roster/v1"] = "mpdp-roster/v1"
    session: Annotated[str, Field(pattern=SESSION_PATTERN)]
    coordinator_public_key: _KEY
    parties: Annotated[tuple[PartyEntry, ...], Field(min_length=1)]
    mpc: MpcServersFile | None = None

    @model_validator(mode="after")
    def _ids_in_order(self) -> Self:
        ids = [p.id for p in self.parties]
        first: dict[int, int] = {}  # party id -> its first entry (a list search per entry took minutes at 10^5)
        for position, party in enumerate(ids):
            if party in first:
                raise ValueError(f"party id {party} appears twice (entries {first[party]} and {position}); "
                                 f"party ids must be 0..{len(ids) - 1} in order")
            first[party] = position
            if party != position:
                raise ValueError(f"entry {position} has party id {party}; party ids must be 0..{len(ids) - 1} in order")
        keys: dict[str, int] = {}
        for entry in self.parties:
            if keys.setdefault(entry.public_key, entry.id) != entry.id:
                raise ValueError(f"parties {keys[entry.public_key]} and {entry.id} have the same public key (each "
                                 "party needs its own: a holder of one would speak for both)")
        return self


class KeyFile(_File):
    """A private key file: whose key it is (session, role, party) and the raw key in base64."""

    format: Literal["mpdp-key/v1"] = "mpdp-key/v1"
    session: Annotated[str, Field(pattern=SESSION_PATTERN)]
    role: Literal["party", "coordinator", "server"]
    party: Annotated[int, Field(ge=0)] | None = None
    server: Annotated[int, Field(ge=0)] | None = None
    private_key: _KEY
    sealing_key: _KEY | None = None


@dataclass(frozen=True, slots=True)
class ServerRoster:
    """The compute servers of a deployed mpc session, as pinned in the roster.

    Attributes:
        threshold: T, the colluding servers the sharing tolerates (2T < m).
        addresses: m MPyC addresses ``host:port``, server order.
        sealing_keys: m raw 32-byte X25519 public keys (the parties seal share i to key i).
        signing_keys: m raw 32-byte Ed25519 public keys (server i's releases verify with key i).
    """

    threshold: int
    addresses: tuple[str, ...]
    sealing_keys: tuple[bytes, ...]
    signing_keys: tuple[bytes, ...]

    @property
    def servers(self) -> int:
        """m."""
        return len(self.addresses)

    def to_file(self) -> MpcServersFile:
        """The ``mpc`` section of ``roster.json``."""
        return MpcServersFile(threshold=self.threshold, servers=tuple(
            ServerEntry(id=i, address=a, sealing_public_key=_b64(x), signing_public_key=_b64(e))
            for i, (a, x, e) in enumerate(zip(self.addresses, self.sealing_keys, self.signing_keys, strict=True))))


@dataclass(frozen=True, slots=True)
class ServerKeyPair:
    """What compute server ``server`` holds privately: raw X25519 (``sealing``) and Ed25519 (``signing``)
    private keys (not in the repr)."""

    server: int
    sealing: bytes = field(repr=False)
    signing: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class SessionRoster:
    """A session's public facts as objects.

    Attributes:
        session: the session id (topics ``mpdp/{session}/...``, the store key).
        roster: the parties' mechanisms and raw public keys.
        coordinator_public_key: raw 32-byte Ed25519 key that signs the round announcements.
        servers: the compute servers of an mpc session; None for randomized response.
    """

    session: str
    roster: Roster
    coordinator_public_key: bytes
    servers: ServerRoster | None = None

    @property
    def protocol(self) -> str:
        """The session's protocol by its roster: ``"mpc"`` when it lists compute servers, else ``"rr"``."""
        return "rr" if self.servers is None else "mpc"

    def to_file(self) -> RosterFile:
        """The pydantic form written as ``roster.json``."""
        return RosterFile(
            session=self.session, coordinator_public_key=_b64(self.coordinator_public_key),
            parties=tuple(
                PartyEntry(id=i, epsilon=m.epsilon, delta=m.delta, four_output=m.num_symbols == 4,
                           public_key=_b64(key))
                for i, (m, key) in enumerate(zip(self.roster.mechanisms, self.roster.public_keys, strict=True))
            ),
            mpc=None if self.servers is None else self.servers.to_file(),
        )


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _raw(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def party_key_path(directory: Path | str, party: int) -> Path:
    """Where party ``party``'s key file is inside a key directory."""
    return Path(directory) / f"party-{party}.key"


def server_key_path(directory: Path | str, server: int) -> Path:
    """Where compute server ``server``'s key file is inside the ``mpdp keys`` output directory."""
    return Path(directory) / f"server-{server}" / f"server-{server}.key"


def coordinator_key_path(directory: Path | str) -> Path:
    """Where the coordinator's key file is inside a key directory."""
    return Path(directory) / "coordinator.key"


#: The entries :func:`write_session` makes in its directory: what ``force`` replaces (other entries are kept).
_ENTRY = re.compile(r"roster\.json|coordinator|parties(-[0-9,-]+)?|server-[0-9]+")


def _private_dir(path: Path) -> Path:
    """Make the directory ``path``, mode 0700 whatever the umask; returns it."""
    path.mkdir(mode=_PRIVATE_DIR, parents=True)
    os.chmod(path, _PRIVATE_DIR)
    return path


def _write_private(path: Path, key: KeyFile) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE_FILE)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        os.fchmod(fh.fileno(), _PRIVATE_FILE)
        fh.write(key.model_dump_json(exclude=None if key.role == "server" else {"server", "sealing_key"}) + "\n")


def write_session(
    out: Path | str, session: str, mechanisms: Sequence[RandomizedResponse],
    split: Sequence[Sequence[int]] | None = None, force: bool = False, *,
    servers: Sequence[str] = (), threshold: int = 0, progress: Callable[[int], None] | None = None,
) -> SessionRoster:
    """Make fresh key pairs for every party and the coordinator and write the session's files, whole or not at
    all (:func:`mpdp.parties.rounds.staged_dir.staged_dir`): stopped or failed half-way, ``out`` is as before.

    Args:
        out: the directory (created if missing).
        session: the session id.
        mechanisms: party i's randomized response, k of them.
        split: party id groups that partition 0..k-1, one key directory per group
            (``parties-A-B``); None puts every party key in ``parties/``.
        force: replace the files of an earlier ``write_session`` in ``out`` (all of them: no earlier key stays);
            other files in ``out`` are kept.
        servers: ``--protocol mpc``: the m compute servers' MPyC addresses ``host:port`` (fresh X25519 and
            Ed25519 key pairs each, one key directory per server); empty for randomized response.
        threshold: T of the mpc sharing, 2T < m.
        progress: called with the number of party key files written so far, after each one.

    Returns:
        The session's public facts (as written to ``out/roster.json``).

    Raises:
        ParameterError: a bad session id, groups that do not partition the parties, a bad mpc server set, or
            ``out`` a file, not writable, or holding anything without ``force``.
    """
    check_session(session)
    k = len(mechanisms)
    groups = [tuple(range(k))] if split is None else [tuple(g) for g in split]
    if sorted(i for g in groups for i in g) != list(range(k)):
        raise ParameterError("--split", ";".join(format_ranges(g) for g in groups),
                             f"ranges that cover parties 0..{k - 1} exactly once")
    with staged_dir(out, "--out", force, lambda entry: _ENTRY.fullmatch(entry) is not None) as folder:
        roster, private_keys = Roster.generate(mechanisms)
        coordinator_private, coordinator_public = generate_key_pair()
        sealing = [generate_x25519_key_pair() for _ in servers]
        signing = [generate_key_pair() for _ in servers]
        server_roster = None if not servers else ServerRoster(
            threshold, tuple(servers), tuple(public for _, public in sealing), tuple(public for _, public in signing))
        if server_roster is not None:
            try:
                server_roster.to_file()
            except ValidationError as exc:
                raise ParameterError("--servers", f"{len(servers)} servers, threshold {threshold}",
                                     "host:port addresses and a threshold T with 2T < m",
                                     hint=_first_error(exc)) from None
        facts = SessionRoster(session, roster, coordinator_public, server_roster)
        for i, ((x25519, _), (ed25519, _)) in enumerate(zip(sealing, signing)):
            key = KeyFile(session=session, role="server", server=i, private_key=_b64(ed25519),
                          sealing_key=_b64(x25519))
            _private_dir(folder / f"server-{i}")
            _write_private(server_key_path(folder, i), key)
        _write_private(coordinator_key_path(_private_dir(folder / "coordinator")),
                       KeyFile(session=session, role="coordinator", private_key=_b64(coordinator_private)))
        written = 0
        for group in groups:
            directory = _private_dir(folder / ("parties" if split is None else f"parties-{format_ranges(group)}"))
            for party in group:
                key = KeyFile(session=session, role="party", party=party, private_key=_b64(private_keys[party]))
                _write_private(party_key_path(directory, party), key)
                written += 1
                if progress is not None:
                    progress(written)
        (folder / ROSTER_NAME).write_text(facts.to_file().model_dump_json(indent=1, exclude_none=True) + "\n",
                                          encoding="utf-8")
    return facts


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(map(str, first['loc'])) or 'file'}: {first['msg']}"


def read_roster(path: Path | str) -> SessionRoster:
    """Read ``roster.json``.

    Raises:
        ParameterError: a missing or unreadable file, or one that is not a valid roster (the first
            problem is named; also fields valid alone but not together, e.g. four_output false with delta > 0).
    """
    file = Path(path)
    text = read_text_file(file, "--roster", "roster.json written by `mpdp keys`")
    try:
        parsed = RosterFile.model_validate_json(text)
    except ValidationError as exc:
        raise ParameterError("--roster", str(file), "a roster.json written by `mpdp keys`",
                             hint=_first_error(exc)) from None
    try:
        mechanisms = tuple(RandomizedResponse(p.epsilon, p.delta, p.four_output) for p in parsed.parties)
        roster = Roster(mechanisms, tuple(_raw(p.public_key) for p in parsed.parties))
    except ParameterError as exc:  # fields valid one by one, not together (four_output false with delta > 0)
        raise ParameterError("--roster", str(file), "a roster.json written by `mpdp keys`", hint=str(exc)) from None
    servers = None if parsed.mpc is None else ServerRoster(
        parsed.mpc.threshold, tuple(s.address for s in parsed.mpc.servers),
        tuple(_raw(s.sealing_public_key) for s in parsed.mpc.servers),
        tuple(_raw(s.signing_public_key) for s in parsed.mpc.servers))
    return SessionRoster(parsed.session, roster, _raw(parsed.coordinator_public_key), servers)


def _read_key_file(file: Path, whose: str) -> KeyFile:
    """A key file's content (ParameterError: unreadable, readable by others, malformed)."""
    try:
        mode = file.stat().st_mode
        text = file.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError("--keys", str(file), f"the readable key file of {whose}", hint=str(exc)) from exc
    if stat.S_IMODE(mode) & 0o077:
        raise ParameterError("--keys", str(file), "a key file only its owner can read (chmod 600)",
                             hint=f"mode {stat.S_IMODE(mode):o}")
    try:
        return KeyFile.model_validate_json(text)
    except ValidationError as exc:
        raise ParameterError("--keys", str(file), "a key file written by `mpdp keys`",
                             hint=_first_error(exc)) from None


def read_server_keys(path: Path | str, facts: SessionRoster) -> ServerKeyPair:
    """Read a compute server's key file (``mpdp keys --protocol mpc``) and check it against the roster.

    Returns:
        The server's index and raw X25519 and Ed25519 private keys.

    Raises:
        ParameterError: a roster without compute servers; the file missing, unreadable, readable by others,
            malformed, another session's or role's; or keys that are not the private halves of the roster's
            public keys of that server.
    """
    file = Path(path)
    if facts.servers is None:
        raise ParameterError("--roster", facts.session, "the roster of an mpc session (mpdp keys --protocol mpc)",
                             hint="this session's roster lists no compute servers")
    key = _read_key_file(file, "a compute server")
    if (key.session, key.role) != (facts.session, "server") or key.server is None or key.sealing_key is None:
        raise ParameterError("--keys", str(file), f"a compute server's key of session {facts.session!r}",
                             hint=f"it is {key.role} of session {key.session!r}")
    index, servers = key.server, facts.servers
    signing, sealing = _raw(key.private_key), _raw(key.sealing_key)
    try:
        matches = index < servers.servers and public_key_of(signing) == servers.signing_keys[index] and (
            X25519PrivateKey.from_private_bytes(sealing).public_key().public_bytes_raw() == servers.sealing_keys[index])
    except (ValueError, binascii.Error):
        matches = False
    if not matches:
        raise ParameterError("--keys", str(file), f"the private keys of server {index}'s public keys in the roster")
    return ServerKeyPair(index, sealing, signing)


def read_private_key(path: Path | str, facts: SessionRoster, party: int | None) -> bytes:
    """Read one private key file and check it against the roster.

    Args:
        path: the key file.
        facts: the session's roster.
        party: the party whose key it must be, or None for the coordinator's.

    Returns:
        The raw 32-byte Ed25519 private key.

    Raises:
        ParameterError: missing or unreadable; readable by group or others (chmod 600); malformed;
            another session's, role's or party's key; or not the private half of the roster's key.
    """
    file = Path(path)
    if party is not None and not 0 <= party < facts.roster.k:
        raise ParameterError("party", party, f"a party id of the roster, 0..{facts.roster.k - 1}")
    whose = "the coordinator" if party is None else f"party {party}"
    key = _read_key_file(file, whose)
    role = "coordinator" if party is None else "party"
    if (key.session, key.role, key.party) != (facts.session, role, party):
        raise ParameterError("--keys", str(file), f"the key of {whose} in session {facts.session!r}",
                             hint=f"it is {'the coordinator' if key.role == 'coordinator' else f'{key.role} {key.party}'}'s "
                                  f"key of session {key.session!r}")
    private = _raw(key.private_key)
    expected = facts.coordinator_public_key if party is None else facts.roster.public_keys[party]
    try:
        matches = public_key_of(private) == expected
    except (ValueError, binascii.Error):
        matches = False
    if not matches:
        raise ParameterError("--keys", str(file), f"the private key of {whose}'s public key in the roster")
    return private
