"""MQTT topics of one session, all under ``mpdp/{session}/``::

    mpdp/{session}/rounds          round announcements (coordinator -> parties), then the end
    mpdp/{session}/heartbeat       the coordinator's heartbeats (read once per party process, not per party)
    mpdp/{session}/party/{id}      party ``id``'s broadcast (one message per round)
    mpdp/{session}/bundle/{w}      simulation worker ``w``'s bundles of its parties' answers, each bundle signed
                                   by the worker's key, which its parties endorsed (``--connections per-worker``:
                                   :mod:`mpdp.broker.bundle`)
    mpdp/{session}/status          worker status (ready / failed), control plane only
    mpdp/{session}/presence        party hosts' signed presence claims (host <-> host: one live host per party)
    mpdp/{session}/curator/release the curator's released outputs (curator protocol only)
    mpdp/{session}/mpc/job/{i}     a deployed mpc round's job for compute server i (coordinator -> server)
    mpdp/{session}/mpc/server/{i}  compute server i's signed reports (ready, releases; server -> coordinator)
    mpdp/{session}/transcript      a closed round's recorded transcript (observer -> parties)
    mpdp/{session}/decision/{id}   party ``id``'s own decisions of f for that round

The observer's validator processes read the party topics on the MQTT 5 shared subscription
``$share/{group}/mpdp/{session}/party/+`` (:meth:`Topics.shared_parties`): the broker hands each message to
one member of the group. The group name is a secret (:func:`new_validator_group`, 128 random bits): a
client that joins a group takes its share of the answers, and mosquitto 2.0 lets any login join a group
and then drops the answers the ACL denies it (they reach no validator), so only the validators may know it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from mpdp.protocols.errors import ParameterError

__all__ = ["SESSION_PATTERN", "Topics", "check_session", "check_validator_group", "new_validator_group"]

#: A session id: letters, digits, ``_ . -``; no MQTT wildcard or level separator.
SESSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_SESSION = re.compile(SESSION_PATTERN)
_GROUP = re.compile(r"^mpdp-v-[0-9a-f]{32}$")


def new_validator_group() -> str:
    """A fresh secret shared-subscription group name for the observer's validators: ``mpdp-v-`` and 128
    random bits in hex (:mod:`secrets`)."""
    return f"mpdp-v-{secrets.token_hex(16)}"


def check_validator_group(group: str) -> str:
    """Return ``group`` or raise :class:`ParameterError` unless it is a name :func:`new_validator_group` gives
    (a guessable name would let another client join the group and take a share of the answers)."""
    if not isinstance(group, str) or not _GROUP.match(group):
        raise ParameterError("validator group", "<hidden>" if isinstance(group, str) else group,
                             "mpdp-v- and 32 hex digits (a secret of `mpdp broker config --validators N`)")
    return group


def check_session(session: str) -> str:
    """Return ``session`` or raise :class:`ParameterError` unless it matches ``SESSION_PATTERN``."""
    if not isinstance(session, str) or not _SESSION.match(session):
        raise ParameterError(
            "session", session, "1-64 characters from A-Z a-z 0-9 _ . - (starting with a letter or digit)"
        )
    return session


@dataclass(frozen=True, slots=True)
class Topics:
    """The topic names of one session.

    Raises:
        ParameterError: a session id outside ``SESSION_PATTERN``.
    """

    session: str

    def __post_init__(self) -> None:
        check_session(self.session)

    @property
    def prefix(self) -> str:
        return f"mpdp/{self.session}"

    @property
    def rounds(self) -> str:
        """Round announcements and the end-of-session message."""
        return f"{self.prefix}/rounds"

    @property
    def heartbeat(self) -> str:
        """The coordinator's heartbeats (its sign of life between announcements)."""
        return f"{self.prefix}/heartbeat"

    @property
    def status(self) -> str:
        """Worker status messages."""
        return f"{self.prefix}/status"

    @property
    def presence(self) -> str:
        """Party hosts' signed presence claims (:mod:`mpdp.broker.presence`)."""
        return f"{self.prefix}/presence"

    @property
    def release(self) -> str:
        """The curator's releases (curator protocol)."""
        return f"{self.prefix}/curator/release"

    def mpc_job(self, server: int) -> str:
        """Compute server ``server``'s jobs (a deployed mpc session)."""
        return f"{self.prefix}/mpc/job/{int(server)}"

    @property
    def all_mpc_jobs(self) -> str:
        """The filter matching every compute server's job topic."""
        return f"{self.prefix}/mpc/job/+"

    def mpc_server(self, server: int) -> str:
        """Compute server ``server``'s signed reports (a deployed mpc session)."""
        return f"{self.prefix}/mpc/server/{int(server)}"

    @property
    def all_mpc_servers(self) -> str:
        """The filter matching every compute server's report topic."""
        return f"{self.prefix}/mpc/server/+"

    def mpc_server_of(self, topic: str) -> int | None:
        """The server index in a report topic of this session, or None for any other topic."""
        return self._id_under(topic, "mpc/server")

    @property
    def transcript(self) -> str:
        """Closed rounds' transcripts, signed by the coordinator (party decisions)."""
        return f"{self.prefix}/transcript"

    def decision(self, party: int) -> str:
        """Party ``party``'s decisions topic."""
        return f"{self.prefix}/decision/{int(party)}"

    @property
    def all_decisions(self) -> str:
        """The subscription filter matching every party's decisions topic."""
        return f"{self.prefix}/decision/+"

    def decision_party_of(self, topic: str) -> int | None:
        """The party id in a decisions topic of this session, or None for any other topic."""
        return self._id_under(topic, "decision")

    def party(self, party: int) -> str:
        """Party ``party``'s broadcast topic."""
        return f"{self.prefix}/party/{int(party)}"

    @property
    def all_parties(self) -> str:
        """The subscription filter matching every party topic."""
        return f"{self.prefix}/party/+"

    def shared_parties(self, group: str) -> str:
        """The shared subscription (MQTT 5 ``$share``) of every party topic for the validator group ``group``
        (a secret, :func:`new_validator_group`): each message goes to one validator of the group.

        Raises:
            ParameterError: ``group`` is not a name of :func:`new_validator_group`.
        """
        return f"$share/{check_validator_group(group)}/{self.all_parties}"

    def party_of(self, topic: str) -> int | None:
        """The party id in a party topic of this session, or None for any other topic."""
        return self._id_under(topic, "party")

    def bundle(self, worker: int) -> str:
        """Simulation worker ``worker``'s topic of answer bundles (:mod:`mpdp.broker.bundle`)."""
        return f"{self.prefix}/bundle/{int(worker)}"

    @property
    def all_bundles(self) -> str:
        """The subscription filter matching every worker's bundle topic."""
        return f"{self.prefix}/bundle/+"

    def bundle_worker_of(self, topic: str) -> int | None:
        """The worker index in a bundle topic of this session, or None for any other topic."""
        return self._id_under(topic, "bundle")

    def _id_under(self, topic: str, level: str) -> int | None:
        head, _, tail = topic.rpartition("/")
        if head != f"{self.prefix}/{level}" or not tail.isdigit() or (tail != "0" and tail[0] == "0"):
            return None
        return int(tail)
