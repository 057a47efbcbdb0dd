"""The range of each :class:`mpdp.parties.api.simulation_config.SimulationConfig` field and the combinations
the fields must respect, as pydantic validators: ``SimulationConfig(...)`` itself refuses a bad value.

Each check raises a :class:`mpdp.protocols.errors.ParameterError` named by the field's keyword (``epsilon``,
``delta_slack``); the model turns pydantic's report back into that one error, and ``mpdp simulate`` names
the flag instead (:func:`mpdp.parties.cli.errors.flag_named`). What needs the data or the machine (a CSV
file, the epsilon file's lines, a rule's size, the estimated time) is checked by the run, still before any
process starts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mpdp.analysis.privacy.accounting import Budget
from mpdp.broker.lockdown import MAX_VALIDATORS
from mpdp.broker.reconnect_window import MAX_RECONNECT_WINDOW
from mpdp.parties.api.params import function_of
from mpdp.parties.curator.arguments import check_curator_arguments
from mpdp.parties.mpc.sharing import check_servers
from mpdp.parties.rounds.config import CONNECTION_CHOICES, PROTOCOLS
from mpdp.parties.rounds.executor import dask_address
from mpdp.parties.rounds.privacy import check_privacy_options
from mpdp.parties.session.epsilons import check_epsilon_spec
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numbers import refuse_bool
from mpdp.protocols.randomization.mechanisms import check_epsilon

__all__ = ["FIELD_CHECKS", "RULES", "at_least", "budget_of", "check_combinations", "check_epsilon_option",
           "check_function", "epsilon_text", "in_range", "one_of", "seconds"]

#: The observer's decision rules (002 eq. (4) and eq. (6)).
RULES = ("average", "worst-case")


def at_least(name: str, low: int) -> Callable[[int | None], int | None]:
    """An integer field's check: None or ``>= low``."""
    def check(value: int | None) -> int | None:
        if value is not None and value < low:
            raise ParameterError(name, value, f"an integer >= {low}")
        return value
    return check


def in_range(name: str, low: float, high: float, allowed: str) -> Callable[[Any], Any]:
    """A number field's check: None or ``low <= value <= high`` (NaN refused)."""
    def check(value: Any) -> Any:
        refuse_bool(name, value, allowed)
        if value is not None and not low <= value <= high:
            raise ParameterError(name, value, allowed)
        return value
    return check


def seconds(name: str) -> Callable[[float | None], float | None]:
    """A duration field's check: None or a finite number of seconds > 0."""
    def check(value: float | None) -> float | None:
        refuse_bool(name, value, "a finite number of seconds > 0, or None")
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ParameterError(name, value, "a finite number of seconds > 0, or None")
        return value
    return check


def one_of(name: str, choices: Sequence[str]) -> Callable[[str], str]:
    """A text field's check: one of ``choices``."""
    def check(value: str) -> str:
        if value not in choices:
            raise ParameterError(name, value, "one of " + ", ".join(choices))
        return value
    return check


def check_epsilon_option(value: float | str | Sequence[float]) -> float | str | Sequence[float]:
    """``epsilon``: a number >= 0 (inf allowed), a ``"LO:HI"`` or number text or a file path
    (:func:`mpdp.parties.session.epsilons.check_epsilon_spec`; a file's lines are read by the run), or a
    non-empty sequence of such numbers, one per party."""
    if isinstance(value, str):
        check_epsilon_spec(value)
    elif isinstance(value, int | float):
        check_epsilon(value, "epsilon")
    elif not value:
        raise ParameterError("epsilon", value, "one value per party, not an empty list")
    else:
        for i, e in enumerate(value):
            check_epsilon(e, f"epsilon[{i}]")
    return value


def epsilon_text(value: float | str | Sequence[float]) -> str:
    """``epsilon`` as one text: a number's repr or the spec itself; "" for one value per party.

    Example:
        >>> epsilon_text(1.0), epsilon_text("0.5:2"), epsilon_text([1.0, 2.0])
        ('1.0', '0.5:2', '')
    """
    return value if isinstance(value, str) else repr(value) if isinstance(value, int | float) else ""


def check_function(value: str | BooleanFunction) -> str | BooleanFunction:
    """``function``: a name :func:`mpdp.protocols.functions.parse_function` knows, symmetric (a live run
    counts ones)."""
    f = function_of(value)
    if f.count_values(1) is None:
        raise ParameterError("function", f.name, "a symmetric function for the live run (majority, sum, xor, "
                             "and, or, threshold:T)", hint="truth tables: see mpdp.accuracy")
    return value


def budget_of(value: tuple[float, float] | str | None) -> Budget | None:
    """``budget`` as a :class:`mpdp.analysis.privacy.accounting.Budget` (``"EPS,DELTA"`` parsed), or None.

    Raises:
        ParameterError: not two numbers, an epsilon below 0, a delta outside [0, 1].
    """
    if value is None:
        return None
    return Budget.parse(value) if isinstance(value, str) else Budget(*value)


def _check_executor(value: str | None) -> str | None:
    if value is not None:
        dask_address(value, "executor")
    return value


def _check_budget(value: tuple[float, float] | str | None) -> tuple[float, float] | str | None:
    budget_of(value)
    return value


def check_combinations(c: Any) -> None:
    """What the fields of one :class:`SimulationConfig` ``c`` must respect together.

    Raises:
        ParameterError: more than one input (dataset, votes, parties); rounds without parties; label_column
            without a CSV dataset; a seed in secure mode; force without out; a rule, party decisions,
            validators, a per-party epsilon or a budget with a central protocol (curator, mpc) or a function
            it does not release; servers or threshold other than their defaults without protocol mpc, or
            outside MPyC's honest majority (mpc); a budget delta
            below delta_slack.
    """
    given = [name for name in ("dataset", "votes", "parties") if getattr(c, name) is not None]
    if len(given) > 1:
        raise ParameterError("input", ", ".join(given), "one of dataset=NAME|PATH, votes=ARRAY or parties=K")
    if c.rounds is not None and c.parties is None:
        raise ParameterError("rounds", c.rounds, "only with parties=K")
    if c.label_column is not None and (c.dataset is None or c.dataset == "house-votes-84"):
        raise ParameterError("label_column", c.label_column, "only with a CSV dataset (dataset=PATH)")
    if c.seed is not None and c.secure:
        raise ParameterError("seed", c.seed, "no seed in secure mode (secure=True)",
                             hint="deployment mode draws from the OS CSPRNG and cannot be reproduced")
    if c.force and c.out is None:
        raise ParameterError("force", True, "only with out=DIR, the run's folder (it replaces an earlier run's files there)")
    check_privacy_options(budget_of(c.budget), c.delta_slack)
    for option in ("servers", "threshold"):  # mpc's alone: not ignored under another protocol
        if c.protocol != "mpc" and getattr(c, option) != type(c).model_fields[option].default:
            raise ParameterError(option, getattr(c, option), f"only with protocol mpc (its compute servers), not "
                                 f"{c.protocol}")
    if c.protocol == "rr":
        return
    if c.rule != "average" or c.party_decisions or c.validators:
        name = "rule" if c.rule != "average" else "party_decisions" if c.party_decisions else "validators"
        default = {"rule": "average", "party_decisions": False, "validators": 0}[name]
        raise ParameterError(name, getattr(c, name), f"{default} with protocol {c.protocol} (the central "
                             "mechanism has no decision rule, party decisions or validators)")
    check_curator_arguments(function_of(c.function), epsilon_text(c.epsilon) or "per-party:list", c.protocol)
    if c.budget is not None:
        raise ParameterError("budget", c.budget, "per-party budgets with protocol rr only",
                             hint=f"with protocol {c.protocol} the parties release nothing themselves")
    if c.protocol == "mpc":
        check_servers(c.servers, c.threshold)


#: The field checks by field (names of SimulationConfig; each named by its keyword).
FIELD_CHECKS: dict[str, Callable[[Any], Any]] = {
    "parties": at_least("parties", 1),
    "rounds": at_least("rounds", 1),
    "epsilon": check_epsilon_option,
    "delta": in_range("delta", 0.0, math.nextafter(1.0, 0.0), "a number in [0, 1)"),
    "repetitions": at_least("repetitions", 1),
    "function": check_function,
    "rule": one_of("rule", RULES),
    "seed": at_least("seed", 0),
    "protocol": one_of("protocol", PROTOCOLS),
    "servers": at_least("servers", 1),
    "threshold": at_least("threshold", 0),
    "reconnect_window": in_range("reconnect_window", 0.0, MAX_RECONNECT_WINDOW,
                                 f"seconds from 0 (no retry) to {MAX_RECONNECT_WINDOW:.0f} (a week), or None"),
    "workers": at_least("workers", 1),
    "connections": one_of("connections", CONNECTION_CHOICES),
    "validators": in_range("validators", 0, MAX_VALIDATORS, f"an integer in [0, {MAX_VALIDATORS}]"),
    "executor": _check_executor,
    "alpha": in_range("alpha", math.nextafter(0.0, 1.0), math.nextafter(1.0, 0.0), "a level in (0, 1)"),
    "round_timeout": seconds("round_timeout"),
    "budget": _check_budget,
    "delta_slack": in_range("delta_slack", 0.0, math.nextafter(1.0, 0.0), "a number in [0, 1)"),
    "time_limit": seconds("time_limit"),
}
