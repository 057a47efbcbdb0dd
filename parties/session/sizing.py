"""The up-front cost of a simulated session (``mpdp simulate``): time and memory from its size.

A session's time is dominated by the parties' broker connections and messages: every party connects
once, then sends one message per round. Measured on the project's 2-core machine under load (local
mosquitto, 2 workers, ``--seed 1``): 500 parties x 2 rounds 19 s, x 8 rounds 39 s; 2,000 parties x 2
rounds 146 s; peak memory 148 MB (500 parties), 208 MB (2,000). Hence::

    seconds ~ 3.3 * (P / 500)^1.47 * (R + 3.8)      bytes ~ 1.3e8 + 4e4 * P

(the connection set-up counts as 3.8 rounds). The estimate is refused over ``--time-limit`` (default
``SESSION_TIME_LIMIT``: a live run is expected to take minutes) or the machine's memory.
"""

from __future__ import annotations

from mpdp.protocols.cost import CostEstimate, PowerLaw

__all__ = ["SESSION_MEMORY", "SESSION_SECONDS", "SESSION_TIME_LIMIT", "session_cost"]

#: Default seconds a simulated session may be estimated to take (``mpdp simulate --time-limit``).
SESSION_TIME_LIMIT = 1800.0
#: Seconds of one round-equivalent from the number of parties (see the module docstring).
SESSION_SECONDS = PowerLaw(3.3 / 500**1.47, (1.47,))
#: Bytes per party beyond the ~130 MB of the processes themselves.
SESSION_MEMORY = PowerLaw(4e4, (1.0,))


def session_cost(parties: int, rounds: int) -> CostEstimate:
    """The estimated time and memory of a simulated session of ``parties`` parties and ``rounds`` rounds."""
    return CostEstimate("the simulated session", f"{parties:,} parties x {rounds:,} rounds",
                        SESSION_SECONDS(parties) * (rounds + 3.8), 1.3e8 + SESSION_MEMORY(parties),
                        "fewer parties (a symmetric function's exact accuracy needs no session: `mpdp "
                        "accuracy`), fewer rounds, or allow more time (--time-limit SECONDS)")
