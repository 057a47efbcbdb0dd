"""Run a curator-protocol session end to end (the central model, to compare with randomized response).

::

    open_broker(settings)
     └─ CuratorStore(store_path)               SQLite: ciphertexts and releases, resumable
         └─ serve_observer(Curator(...))       subscribed before any party exists
             └─ WorkerPool(specs)              the same worker processes, parties are CuratorParty
                  for each round: announce (fresh X25519 key) -> sealed ballots -> curator opens,
                  draws the central mechanism's outputs, records, publishes the release
                  announce the end

It takes the same :class:`mpdp.parties.session.runner.RunConfig` as the randomized-response run: ``mechanisms``
give each party's privacy level (one (epsilon, delta) for all: the curator's mechanism is
(epsilon, delta)-DP for every vote), ``function`` must be the majority (``passed``), ``measure`` and
``rule_factory`` are not used. Keys: each party's Ed25519 key goes only to its worker; the curator's
Ed25519 public key goes to every party (they ignore announcements signed by anyone else).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time


from mpdp.broker.launch import open_broker
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.outcome import CuratorRunOutcome, ReleaseOutcome
from mpdp.parties.curator.party import CuratorParty
from mpdp.parties.curator.store import CuratorStore
from mpdp.parties.rr.observer import serve_observer
from mpdp.parties.rr.party import secure_sampler
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.seeds import SeedTree
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.session.runner import (
    ProgressCallback,
    RunConfig,
    surfacing_errors,
    wait_ready,
    worker_specs,
)
from mpdp.protocols.errors import ParameterError

__all__ = ["curator_privacy_level", "run_curator", "run_curator_async"]


def curator_privacy_level(config: RunConfig) -> tuple[float, float]:
    """The (epsilon, delta) of the curator's mechanism for ``config``.

    Raises:
        ParameterError: a function other than the majority (the optimal mechanism of 001 is for
            binary functions; names the alternative), or parties with different privacy levels.
    """
    if config.function.name != "majority":
        raise ParameterError("function", config.function.name,
                             "majority (or passed) for the curator protocol: its optimal mechanism is "
                             "for a binary function", hint="other functions: --protocol rr")
    if config.rule_factory is not None:
        raise ParameterError("rule_factory", config.rule_factory, "None: the curator has no decision rule")
    levels = sorted({(m.epsilon, m.delta) for m in config.mechanisms})
    if len(levels) != 1:
        raise ParameterError("epsilon", f"{len(levels)} different (epsilon, delta) levels",
                             "one epsilon and one delta for every party in the curator protocol",
                             hint="per-party levels: --protocol rr")
    return levels[0]


async def _release_rounds(config: RunConfig, curator: Curator, pool: WorkerPool | None, store: CuratorStore,
                          recorded: frozenset[int], progress: ProgressCallback | None) -> list[ReleaseOutcome]:
    outcomes: list[ReleaseOutcome] = []
    for index, name in enumerate(config.round_names):
        if index in recorded:
            outcomes.append(store.load_release(config.session, index))
        else:
            outcomes.append(await curator.run_round(index, name))
            if pool is not None:
                pool.check(curator.failed_workers, f"during round {index} ({name!r}); rounds 0-{index} are in "
                                                   f"{config.store_path}")
        if progress is not None:
            progress(len(outcomes), sum(o.messages_received for o in outcomes))
    return outcomes


async def run_curator_async(config: RunConfig, progress: ProgressCallback | None = None) -> CuratorRunOutcome:
    """Run the curator-protocol session of ``config`` (see the module docstring).

    Returns:
        The :class:`CuratorRunOutcome` (every round, also in the store at ``config.store_path``).

    Raises:
        ParameterError: see :func:`curator_privacy_level`; a session stored with other parameters.
        TransportError: the broker is unreachable or went away.
        WorkerError: a worker died or failed.
    """
    return await surfacing_errors(_run(config, progress))


async def _run(config: RunConfig, progress: ProgressCallback | None) -> CuratorRunOutcome:
    start = time.perf_counter()
    epsilon, delta = curator_privacy_level(config)
    if config.secure:
        secure_sampler()  # fail before anything starts
    tree = None if config.secure else SeedTree.from_seed(config.seed)
    curator_seed = None if tree is None else tree.curator()
    roster, private_keys = Roster.generate(config.mechanisms)
    signing_private, signing_public = generate_key_pair()
    topics = Topics(config.session)
    rounds_total = len(config.round_names)
    async with open_broker(config.broker) as endpoint:
        with CuratorStore(config.store_path) as store:
            recorded = store.open_curator_session(config.session, config.k, config.repetitions,
                                                  config.round_names, epsilon, delta)
            curator = Curator(endpoint, topics, roster, store, signing_private, repetitions=config.repetitions,
                              round_timeout=config.round_timeout, seed=curator_seed)
            async with serve_observer(curator):
                if len(recorded) == rounds_total:
                    outcomes = await _release_rounds(config, curator, None, store, recorded, progress)
                else:
                    specs = [dataclasses.replace(spec, party_class=CuratorParty)
                             for spec in worker_specs(config, endpoint, private_keys, signing_public, None)]
                    async with WorkerPool(specs) as pool:
                        await wait_ready(curator, pool, len(specs), config.ready_timeout)
                        outcomes = await _release_rounds(config, curator, pool, store, recorded, progress)
                        await curator.announce_end(rounds_total)
                wall = time.perf_counter() - start
    return CuratorRunOutcome(
        broker_kind=endpoint.kind, broker_url=endpoint.url, wall_time=wall, rounds=tuple(outcomes),
        session=config.session, store_path=config.store_path,
        seed_entropy=None if tree is None else tree.seed,
    )


def run_curator(config: RunConfig, progress: ProgressCallback | None = None) -> CuratorRunOutcome:
    """Synchronous :func:`run_curator_async` (calls ``asyncio.run``; for the CLI edge)."""
    return asyncio.run(run_curator_async(config, progress))
