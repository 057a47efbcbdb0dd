"""``mpdp observe``'s wait for the hosts' ready reports says what it waits for, at once and while it waits
(:func:`mpdp.parties.session.observe.wait_for_parties`), on an engine stand-in whose reports the test sets."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from mpdp.parties.session import observe
from mpdp.protocols.errors import WorkerError


def _engine(ready: dict[int, tuple[int, ...]]) -> Any:
    return SimpleNamespace(ready_workers={w: SimpleNamespace(parties=p) for w, p in ready.items()}, failed_workers={},
                           status_changed=asyncio.Event())


async def test_the_wait_is_announced_then_reported_until_it_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(observe, "PROGRESS_EVERY", 0.1)
    lines: list[str] = []
    with pytest.raises(WorkerError, match=r"parties 2-3 did not report ready within 0.35 s"):
        await observe.wait_for_parties(_engine({0: (0, 1)}), 4, 0.35, lines.append, "mqtt://broker.example:1883")
    assert lines[0] == ("waiting up to 0.35 s for the ready reports of 4 parties on mqtt://broker.example:1883 "
                        "(mpdp party hosts)")
    progress = lines[1:]  # one line every 0.1 s of the 0.35 s: three
    assert progress == ["2 of 4 parties ready after 0 s (missing 2-3; waiting up to 0.35 s)"] * 3


async def test_ready_parties_end_the_wait_and_a_ready_start_prints_nothing() -> None:
    lines: list[str] = []
    await observe.wait_for_parties(_engine({0: (0, 1), 2: (2,)}), 3, 5.0, lines.append)
    assert lines == []
    engine = _engine({0: (0,)})

    async def arrives() -> None:
        await asyncio.sleep(0.05)
        engine.ready_workers[1] = SimpleNamespace(parties=(1,))
        engine.status_changed.set()

    async with asyncio.TaskGroup() as tg:
        tg.create_task(arrives())
        await observe.wait_for_parties(engine, 2, 5.0, lines.append)
    assert lines == ["waiting up to 5 s for the ready reports of 2 parties on the broker (mpdp party hosts)"]
