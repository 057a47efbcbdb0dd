"""Per-party privacy parameters as the command line and the Python API give them: ``--epsilon E|LO:HI|FILE``
and ``--delta D``.

* ``E``: every party uses epsilon = E (``inf`` allowed).
* ``LO:HI``: each party draws its own epsilon uniformly from [LO, HI] (heterogeneous), from the run's
  seed, so ``--seed`` reproduces them.
* ``FILE``: one line per party, ``epsilon`` or ``epsilon,delta`` (``#`` starts a comment); UTF-8, a byte
  order mark skipped (:func:`mpdp.parties.rounds.text_files.read_text_file`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from mpdp.parties.rounds.text_files import read_text_file
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, check_delta, check_epsilon

__all__ = ["canonical_epsilon_spec", "check_epsilon_spec", "parse_mechanisms", "warn_if_no_privacy"]

#: What ``epsilon`` (``--epsilon``) accepts as text.
EPSILON_FORMS = "a number >= 0 (inf allowed), LO:HI, or a file of per-party values"


def _from_file(path: Path, parties: int, delta: float) -> list[RandomizedResponse]:
    text = read_text_file(path, "epsilon", "text file of per-party epsilons")
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    rows = [ln for ln in lines if ln]
    if len(rows) != parties:
        raise ParameterError(f"epsilon {path}", f"{len(rows)} lines", f"{parties}, one per party")
    mechanisms = []
    for number, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row.split(",")]
        if len(cells) > 2:
            raise ParameterError(f"epsilon {path}: line {number}", row, "epsilon or epsilon,delta")
        eps = check_epsilon(cells[0], f"epsilon {path}: line {number}: epsilon")
        dlt = check_delta(cells[1], f"epsilon {path}: line {number}: delta") if len(cells) == 2 else delta
        mechanisms.append(RandomizedResponse(eps, dlt))
    return mechanisms


def warn_if_no_privacy(epsilons: Iterable[float]) -> None:
    """Say once, on standard error, how many of ``epsilons`` are infinite: such a randomized response
    reports the true bit, so that party has no privacy at all (the run goes on; it is allowed)."""
    count = sum(1 for e in epsilons if math.isinf(e))
    if count:
        print(f"mpdp: warning: {count} {noun(count, 'party', 'parties')} with epsilon inf: randomized "
              "response then reports the true bit (no privacy)", file=sys.stderr)


def parse_mechanisms(
    spec: str, delta: float, parties: int, rng: np.random.Generator
) -> list[RandomizedResponse]:
    """Each party's randomized response from ``--epsilon`` and ``--delta``.

    Args:
        spec: ``E``, ``LO:HI`` or a file path (see the module docstring).
        delta: the default delta of every party, in [0, 1).
        parties: k, the number of parties.
        rng: draws the epsilons of ``LO:HI``.

    Parties with epsilon inf are allowed, with one warning on standard error (:func:`warn_if_no_privacy`).

    Returns:
        k mechanisms, party 0 first.

    Raises:
        ParameterError: an epsilon < 0 or NaN, LO > HI, a delta outside [0, 1), a file with the wrong
            number of lines, or a spec that is none of the three forms.
    """
    mechanisms = _mechanisms(spec, check_delta(delta, "delta"), parties, rng)
    warn_if_no_privacy(m.epsilon for m in mechanisms)
    return mechanisms


def check_epsilon_spec(spec: str) -> tuple[float, float] | None:
    """Check the text of ``epsilon`` before the run: an existing file (its lines are read by the run) gives
    None, ``LO:HI`` its (low, high), a number (low, low).

    Raises:
        ParameterError: (named ``epsilon``) LO > HI, an infinite HI, an epsilon < 0 or NaN, or text that is
            none of the three forms.

    Example:
        >>> check_epsilon_spec("0.5:2")
        (0.5, 2.0)
    """
    if Path(spec).is_file():
        return None
    if ":" in spec:
        low_text, high_text = spec.split(":", 1)
        low, high = check_epsilon(low_text, "epsilon LO"), check_epsilon(high_text, "epsilon HI")
        if low > high or not np.isfinite(high):
            raise ParameterError("epsilon", spec, "LO:HI with finite 0 <= LO <= HI")
        return low, high
    try:
        eps = check_epsilon(spec, "epsilon")
    except ParameterError:
        raise ParameterError("epsilon", spec, EPSILON_FORMS) from None
    return eps, eps


def canonical_epsilon_spec(spec: str) -> str:
    """``spec`` (``epsilon``'s text) in one spelling per value, to compare what two runs give their parties: a
    number as its float's repr (``1``, ``1.00`` and ``1e0`` give ``1.0``), ``LO:HI`` as two (``0.5:2`` gives
    ``0.5:2.0``); an existing file's path, and text that is none of the three forms, as given.

    Example:
        >>> canonical_epsilon_spec("1e0"), canonical_epsilon_spec("0.50:2"), canonical_epsilon_spec("Inf")
        ('1.0', '0.5:2.0', 'inf')
    """
    try:
        bounds = check_epsilon_spec(spec)
    except ParameterError:
        return spec
    if bounds is None:
        return spec
    return f"{bounds[0]!r}:{bounds[1]!r}" if ":" in spec else repr(bounds[0])


def _mechanisms(spec: str, delta: float, parties: int, rng: np.random.Generator) -> list[RandomizedResponse]:
    bounds = check_epsilon_spec(spec)
    if bounds is None:
        return _from_file(Path(spec), parties, delta)
    low, high = bounds
    if low == high and ":" not in spec:
        return [RandomizedResponse(low, delta)] * parties
    return [RandomizedResponse(float(e), delta) for e in rng.uniform(low, high, size=parties)]
