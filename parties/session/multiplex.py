"""A worker's parties on one MQTT connection, served by one task (``mpdp simulate --connections per-worker``).

Each party keeps its own :class:`mpdp.parties.rounds.answering.PartyLoop`: its verification of each
announcement, its freshness and order checks, its privacy policy and ledger, its key and its topic. What
the parties of a worker share is the connection and the event loop's work: one subscription, one read per
incoming message, and no task, queue or timeout per party (at 10^5 parties those cost more than the answers).

* A round or end announcement (or anything that does not verify, so that every party counts its refusal)
  is handed to every party's :meth:`PartyLoop.handle`, at most ``concurrency`` at a time: each answer is
  drawn, signed and published with its PUBACK awaited, and the bound keeps the event loop reading PUBACKs in
  between (as the per-party answer gate does).
* The parties share one :class:`mpdp.parties.rounds.liveness.ObserverClock` (the lead's, the worker's
  first party, unless the worker gave them its own: :meth:`PartyLoop.share_clock`), and the lead's
  silence limit (idle timeout, observer grace) stands for the worker's: no heartbeat is handed to 50,000
  parties. The worker feeds the clock on a connection of its own; a clock that is the lead's own is fed
  here: the lead subscribed to the heartbeats, and one task reads the connection and hands them to the
  lead at once, another hands the rest to the parties, so the clock keeps running while 50,000 parties
  answer a round for minutes. The reading stops at the coordinator's signed end: the parties still busy
  with earlier messages finish them, then take the end.
* A message on the protocol's other topics (the transcript, when parties decide f) goes to every party.
* A copy of a message already handed to the parties (the same bytes on the same topic: the broker redelivers
  what a busy worker acknowledged late) is skipped, logged at DEBUG: every party handled those bytes already,
  in order, and would refuse the copy (a replay by its sequence, or for the original's reason), so none
  answers twice or draws afresh. At 10^6 parties each redelivered round announcement cost 500,000 signature
  checks per worker, ~10 times in one round. A re-announcement is signed afresh (a new sequence): not a copy,
  it reaches every party, and each re-sends its recorded answer.

A message the parties refuse (a forgery, a replay: :attr:`PartyLoop.rejections`) is counted by each, and
logged once by the worker (rate-limited per reason, :class:`mpdp.parties.rounds.rejections.RejectLog`) with
the number of its parties that refused it, not once per party (50,000 identical lines).

With ``bundle`` (a simulation whose observer reads bundles) the parties' answers go out in bundles of up to
:data:`mpdp.parties.session.bundling.BUNDLE_SIZE` on the worker's bundle topic, each answer still the
party's own message (unsigned: the bundle's signature authenticates it), each bundle signed once with the worker's
bundle key (:mod:`mpdp.broker.bundle`):
one MQTT message, one PUBACK and one signature check at the observer per bundle.

The worker reports each party's error with its id (``on_error``) before it ends the others. Deployments keep
one connection per party host; this is a simulation device.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Delivery, Transport
from mpdp.parties.rounds.answering import PartyLoop
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.session.bundling import BUNDLE_SIZE, AnswerBundler
from mpdp.protocols.numerics.cost import noun

__all__ = ["BUNDLED_CONCURRENCY", "MULTIPLEX_CONCURRENCY", "serve_multiplexed"]

log = logging.getLogger("mpdp.party")

#: Parties of a worker answering (and awaiting their PUBACK) at once on the shared connection.
MULTIPLEX_CONCURRENCY = 64
#: The same when the answers go in bundles: two bundles' worth. The parties that start together all answer in
#: the event loop's turn before any bundle is sent, so a bound far above the bundle size holds the first bundle
#: back until every party of the worker answered, and the observer idles meanwhile (1000 parties, 2 workers:
#: 4 x 128 put the first answer 320 ms after the announcement, 2 x 64 about 55 ms, rounds 590 -> 310-410 ms; with
#: the answers unsigned and drawn in batches, 2 x 256 is best: bundling.BUNDLE_SIZE).
BUNDLED_CONCURRENCY = 2 * BUNDLE_SIZE

Loop = PartyLoop[Any]
ErrorReport = Callable[[int, Exception], Awaitable[None]]


async def serve_multiplexed(loops: Sequence[Loop], connector: Connector, client_id: str, *,
                            on_ready: Callable[[], None], on_error: ErrorReport,
                            concurrency: int = MULTIPLEX_CONCURRENCY,
                            bundle: tuple[Topics, int, PrivateKey] | None = None) -> None:
    """Serve every party of ``loops`` (all of one session and protocol) on one connection until the end
    announcement.

    Args:
        loops: the parties' loops, not running (their :meth:`PartyLoop.run` is not called).
        connector: the broker; ``client_id``: the shared connection's client id.
        on_ready: called once per party when the connection is subscribed.
        on_error: awaited with a party's id and its error before the error ends the worker.
        concurrency: parties handling one message at once.
        bundle: (the session's topics, this worker's index, its bundle key, named in its signed "ready"): send the parties' answers in bundles on the
            worker's bundle topic (:class:`mpdp.parties.session.bundling.AnswerBundler`, whose size sets
            the concurrency: :data:`BUNDLED_CONCURRENCY`); None: one message per answer.

    Raises:
        ExceptionGroup: of a TransportError (the broker went away for good, or the lead party's silence ran
            out), or of a party's own error (after ``on_error``).
    """
    if not loops:
        return
    lead = loops[0]
    for loop in loops[1:]:
        loop.share_clock(lead.clock)
    work: asyncio.Queue[Delivery] = asyncio.Queue()  # what every party handles, in arrival order
    refusals = _Refusals(loops)

    async def read(transport: Transport) -> None:
        """Read the connection: a heartbeat to the lead at once (the clock runs while the others answer a
        round for minutes), the rest to :func:`answer`, up to the coordinator's signed end: the coordinator
        falls silent then, while the parties may still be busy with what came before it."""
        lead.start_clock()
        handed: set[bytes] = set()  # digests of the messages handed to the parties (module docstring)
        while True:
            delivery = await lead.receive(transport)
            if lead.is_heartbeat(delivery):
                tally: _Tally = {}
                await _handled(lead, transport, delivery, tally)
                refusals.report(tally, 1)
                continue
            digest = _digest(delivery)
            if digest in handed:
                log.debug("a copy of a message on %s the parties handled already: skipped", delivery.topic)
                continue
            handed.add(digest)
            work.put_nowait(delivery)
            if lead.is_end(delivery):
                return

    async def answer(transport: Transport, reader: asyncio.Task[None]) -> None:
        live = list(loops)
        while live and not (reader.done() and work.empty()):  # after the end nothing more comes
            delivery = await work.get()
            tally: _Tally = {}
            try:
                ended = await _each(live, transport, delivery, on_error, concurrency, tally)
            finally:
                refusals.report(tally, len(live))
            live = [loop for loop in live if loop not in ended]
        reader.cancel()  # every party is done, or the session is (a party that refused the end counted why)

    async with connector.connect(client_id) as transport, contextlib.AsyncExitStack() as stack:
        publisher: Transport = transport
        if bundle is not None:
            bundler = await stack.enter_async_context(AnswerBundler(transport, *bundle))
            publisher = bundler
            concurrency = max(concurrency, BUNDLED_CONCURRENCY)
        await transport.subscribe(*dict.fromkeys(f for loop in loops for f in loop.filters))
        for _ in loops:
            on_ready()
        async with asyncio.TaskGroup() as group:
            reader = group.create_task(read(transport), name="multiplex-read")
            group.create_task(answer(publisher, reader), name="multiplex-answer")


def _digest(delivery: Delivery) -> bytes:
    """16 bytes that tell one message (topic and payload) from another."""
    hashed = hashlib.blake2b(delivery.topic.encode(), digest_size=16)
    hashed.update(b"\0")
    hashed.update(delivery.payload)
    return hashed.digest()


#: reason -> (parties that refused one message for it, the first one's detail)
_Tally = dict[str, tuple[int, str]]


class _Refusals:
    """The worker's log of the messages its parties refused (module docstring): each party's own
    :class:`RejectLog` made quiet (it still counts), one line per message and reason here."""

    def __init__(self, loops: Sequence[Loop]) -> None:
        for loop in loops:
            loop.rejections.quiet = True
        self._log = RejectLog(log, f"parties {format_ranges(loop.party for loop in loops)}")

    def report(self, tally: _Tally, parties: int) -> None:
        """Log what ``parties`` parties refused of one message (``tally``: by :func:`_handled`)."""
        for reason, (count, detail) in tally.items():
            self._log.reject(reason, f"{detail} (refused by {count} of {parties} {noun(parties, 'party', 'parties')})")


async def _handled(loop: Loop, transport: Transport, delivery: Delivery, tally: _Tally) -> bool:
    """``loop.handle(transport, delivery)``; a refusal is added to ``tally``."""
    before = loop.rejections.last  # a new tuple at each rejection
    done = await loop.handle(transport, delivery)
    after = loop.rejections.last
    if after is not None and after is not before:
        reason, detail = after
        count, first = tally.get(reason, (0, detail))
        tally[reason] = (count + 1, first)
    return done


async def _each(loops: Sequence[Loop], transport: Transport, delivery: Delivery, on_error: ErrorReport,
                concurrency: int, tally: _Tally) -> set[Loop]:
    """Hand ``delivery`` to every loop, ``concurrency`` at a time (that many tasks draining one iterator),
    tallying their refusals; the loops that ended."""
    pending: Iterator[Loop] = iter(loops)
    ended: set[Loop] = set()

    async def drain() -> None:
        for loop in pending:
            try:
                if await _handled(loop, transport, delivery, tally):
                    ended.add(loop)
            except Exception as exc:
                await on_error(loop.party, exc)
                raise

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(loops))):
            group.create_task(drain())
    return ended
