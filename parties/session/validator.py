"""One validator process of the observer (:mod:`mpdp.parties.session.validators` starts them and merges).

A validator is the observer's own spawned process with its own MQTT 5 connection (client id
``mpdp-{session}-validator-{index}-{random}``, clean session) subscribed to the shared subscription
:meth:`mpdp.broker.topics.Topics.shared_parties` of the validators' secret group: the broker hands each
party message to one validator of the group. It reads and verifies each message with the engine's own
:meth:`mpdp.parties.rounds.engine.SignedReader.read` (schema, session, roster, topic, signature: the same
code, so the same reasons) and sends the results to the merger over its end of a multiprocessing pipe, in
batches: a :class:`Verified` record per message that passed, a :class:`Rejected` one per message that did
not. Everything that depends on the session's state (the open round, duplicates, repetitions, the
protocol's payload) stays with the merger.

Pipe items: :class:`Report` ``ready`` once subscribed, then lists of records; :class:`Report` ``failed``
with the cause if the validator stops on an error (the broker is gone for good), then exit code 1. A
validator leaves with its parent process (no orphan).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Literal

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import decode_answer
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Delivery, Transport
from mpdp.broker.wire import WireAnswer
from mpdp.parties.rounds.engine import SignedReader
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.session.processes import first_leaf, watch_parent
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["Rejected", "Report", "ValidatorSpec", "Verified", "check_delivery", "forward", "validator_main"]

log = logging.getLogger("mpdp.validator")
#: Records per pipe message at most (a burst is sent in batches of this size; a lull sends what there is).
#: Small enough that a batch of one-repetition messages fits the pipe's buffer (64 KiB on Linux): the
#: merger reads a batch whole, and a batch written in one go never keeps it waiting for the rest.
BATCH = 64


@dataclass(frozen=True, slots=True)
class ValidatorSpec:
    """Everything a validator process needs (picklable: sent to a spawned process).

    Attributes:
        index: the validator's number (in its client id, process name and errors).
        endpoint: the broker (the validator connects with MQTT 5 whatever ``endpoint.protocol`` says).
        session: the session id; roster: the parties' public keys. (Validators serve randomized response:
            its answers are read with :func:`mpdp.broker.messages.decode_answer`.)
        group: the validators' secret shared-subscription group (:func:`mpdp.broker.topics.new_validator_group`;
            not in the repr).
    """

    index: int
    endpoint: BrokerEndpoint
    session: str
    roster: Roster
    group: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class Verified:
    """A party message that passed :meth:`SignedReader.read`: the parsed message, its ``where`` text and
    the topic and payload bytes as received (the merger stores them: the transcript is the audit record)."""

    topic: str
    message: WireAnswer
    where: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class Rejected:
    """A party message that failed :meth:`SignedReader.read`: the reason and the detail to log."""

    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class Report:
    """A validator's own state: ``ready`` (subscribed) or ``failed`` (``detail``: the cause)."""

    state: Literal["ready", "failed"]
    detail: str = ""


def check_delivery(reader: SignedReader, topics: Topics,
                   delivery: Delivery) -> Verified | Rejected:
    """Read and verify one party message as the engine does (:meth:`RoundEngine.handle` and
    :meth:`SignedReader.read`): the record to forward."""
    try:
        message, where = reader.read(decode_answer, delivery.topic, delivery.payload, topics.party_of(delivery.topic),
                                     "round")
    except ProtocolViolation as exc:
        return Rejected(exc.reason, exc.detail[:200])
    return Verified(delivery.topic, message, where, delivery.payload)


async def forward(transport: Transport, check: Callable[[Delivery], Verified | Rejected],
                  send: Callable[[list[Verified | Rejected]], None], batch: int = BATCH) -> None:
    """Check every delivery of ``transport`` and ``send`` the records in batches: at ``batch`` records,
    or as soon as no delivery is waiting (a lull never holds a record back). Runs until cancelled.

    Raises:
        TransportError: the connection is lost for good.
    """
    loop = asyncio.get_running_loop()
    records: list[Verified | Rejected] = []
    scheduled = False

    def flush() -> None:
        nonlocal records, scheduled
        scheduled = False
        if records:
            send(records)
            records = []

    async for delivery in transport.deliveries():
        records.append(check(delivery))
        if len(records) >= batch:
            flush()
        elif not scheduled:  # runs once this loop waits for the next delivery
            scheduled = True
            loop.call_soon(flush)


async def _serve(spec: ValidatorSpec, send: Callable[[object], None], parent: int) -> None:
    topics = Topics(spec.session)
    reader = SignedReader(spec.session, spec.roster)
    endpoint = dataclasses.replace(spec.endpoint, protocol="5")
    client_id = f"mpdp-{spec.session}-validator-{spec.index}-{secrets.token_hex(4)}"
    async with endpoint.connect(client_id) as transport, asyncio.TaskGroup() as tg:
        tg.create_task(watch_parent(parent), name="watch-parent")
        await transport.subscribe(topics.shared_parties(spec.group))
        send(Report("ready"))
        await forward(transport, lambda delivery: check_delivery(reader, topics, delivery), send)


def validator_main(spec: ValidatorSpec, pipe: Connection) -> None:
    """Process entry point (multiprocessing target): serve until terminated; on an error report it on
    ``pipe`` and exit with code 1 (130 on Ctrl-C)."""
    logging.basicConfig(level=logging.WARNING, format=f"mpdp validator {spec.index}: %(message)s")
    try:
        asyncio.run(_serve(spec, pipe.send, os.getppid()))
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:  # noqa: BLE001 - reported on the pipe, the merger names the validator
        first = first_leaf(exc)
        log.error("%s: %s", type(first).__name__, first)
        try:
            pipe.send(Report("failed", f"{type(first).__name__}: {first}"))
        except OSError:
            pass  # the merger is gone
        sys.exit(1)
