"""What a helper process reports when it fails (parties/session/processes.py ``first_leaf``): the first
error of nested task groups, and the error a CancelledError was raised over, never the empty CancelledError."""

from __future__ import annotations

import asyncio

from mpdp.parties.session.processes import first_leaf
from mpdp.protocols.errors import TransportError


def _raised_while_handling(error: BaseException, then: BaseException) -> BaseException:
    try:
        try:
            raise error
        except BaseException:
            raise then from None  # ``from None`` hides the context in a traceback; it is still kept
    except BaseException as exc:
        return exc


def test_the_first_leaf_of_nested_groups() -> None:
    inner = ExceptionGroup("parties", [TransportError("party 3: gone"), ValueError("second")])
    assert str(first_leaf(ExceptionGroup("worker", [inner]))) == "party 3: gone"
    assert isinstance(first_leaf(KeyError("k")), KeyError)


def test_a_cancelled_error_over_another_error_is_that_error() -> None:
    """A worker's failure report cancelled by a stale TaskGroup cancellation (Python 3.11) raised a
    CancelledError over the party's TransportError: the cause is the TransportError."""
    gone = TransportError("party 0: the observer has sent no round and no heartbeat for 60 s")
    hidden = _raised_while_handling(ExceptionGroup("parties", [gone]), asyncio.CancelledError())
    assert isinstance(hidden, asyncio.CancelledError) and first_leaf(hidden) is gone
    assert isinstance(first_leaf(asyncio.CancelledError()), asyncio.CancelledError)  # a plain cancellation stays one
