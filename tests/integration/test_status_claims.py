"""A party host cannot report ready for parties it does not hold (real processes: `mpdp keys`, an `mpdp party`
host for parties 0-4, `mpdp observe`, a real mosquitto). The test, holding host a's keys, claims parties 5-8
"ready" as host a could: signed with party 0's key (the old single signature), and with each of its own keys
standing in for 5-8. The observer rejects both claims (`signature`, naming parties 5-8), waits for them in
vain and exits 2 naming them; it never opens a round."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, WorkerStatus
from mpdp.broker.topics import Topics
from mpdp.broker.transport import next_delivery
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster
from tests.calibration import scaled_arg
from tests.integration.test_deploy import _finish, _ready_seen
from tests.integration.test_party_restart import watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def test_a_host_cannot_claim_parties_it_does_not_hold(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"clm-{tmp_path.name[-10:].replace('_', '')}"
    topics = Topics(session)
    async with watched_deployment(mosquitto, tmp_path, session, 2) as (deployment, seen):
        facts = read_roster(deployment.keys / "roster.json")
        own = [read_private_key(party_key_path(deployment.keys / "parties-0-4", p), facts, p) for p in range(5)]
        signers = ([own[0]] * 4, own[1:])  # what host a holds, standing in for parties 5-8
        host = await deployment.host("a", 1)
        await _ready_seen(mosquitto, session, 0, 20)
        async with mosquitto.connect(f"test-{session}-claims") as claimant:
            await claimant.subscribe(topics.rounds)
            observer = await deployment.observer(1, "--wait-parties", scaled_arg(4))
            while observer.returncode is None:  # the claims, freshly signed, until the observer gives up
                for keys in signers:
                    claim = WorkerStatus.signed(keys, session=session, worker=5, state="ready", parties=(5, 6, 7, 8))
                    await claimant.publish(topics.status, claim.model_dump_json())
                await asyncio.sleep(0.3)
            code = await _finish(observer, 5)
            kinds = []
            while (delivery := await next_delivery(claimant, 0.2)) is not None:
                kinds.append(Announcement.model_validate_json(delivery.payload).kind)
        if host.returncode is None:  # it may have left already, on the observer's failure notice
            host.kill()
        await host.wait()
    log = deployment.logs()["observe1.log"]
    assert code == 2, log
    assert "parties 5-8 did not report ready" in log
    assert "parties 5-8 did not sign it with their own keys" in log  # the rejection, with its reason
    assert "round" not in kinds and seen == []  # no round opened, no party answered
