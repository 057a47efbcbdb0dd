"""``mpdp simulate --protocol curator``: the command-line arguments the curator protocol refuses, checked
before anything starts (the run itself checks its :class:`mpdp.parties.rounds.config.RunConfig`)."""

from __future__ import annotations

from pathlib import Path

from mpdp.parties.ballots.central import check_central_function
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction

__all__ = ["check_curator_arguments"]


def check_curator_arguments(function: BooleanFunction, epsilon_spec: str, protocol: str = "curator") -> None:
    """Refuse what the curator protocol (and ``mpc``, which computes the same release) cannot do, naming
    the alternative.

    Raises:
        ParameterError: a function the protocol does not release
            (:func:`mpdp.parties.curator.session.check_central_function`: curator: majority, and, or, xor,
            threshold:T; mpc: majority, sum), or ``epsilon`` given as LO:HI or a file (the curator's
            mechanism has one (epsilon, delta) for every vote).
    """
    check_central_function(function.name, protocol)
    if ":" in epsilon_spec or Path(epsilon_spec).is_file():
        raise ParameterError("epsilon", epsilon_spec,
                             f"one value with protocol {protocol} (the same epsilon and delta for every party)",
                             hint="per-party levels: protocol rr")
