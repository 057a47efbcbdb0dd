"""The exact engines' decision rules: tables over transcript classes (a :class:`mpdp.protocols.rules.rules.DecisionRule`).

A :class:`TableRule` holds a table over transcript classes (one per own bit for a party observer,
002 eqs. (2), (4): the rule of party i is f_i(tau, x_i)). The table is either deterministic decisions
(the average-case argmax rule, eq. (5)) or the probabilities Q[c, y] of a randomized rule (the worst-case
LP, eq. (6)), sampled with an explicit ``numpy.random.Generator``. Classes: each group of parties
(``groups``; a single party in the general engine) contributes its class (its symbol, or its symbol
counts), the first group being the most significant digit.

JSON (``to_json`` / ``from_json``)::

    {"format": "mpdp.decision-rule", "version": 1, "kind": "average" | "worst-case",
     "observer": null | i, "engine": "general" | "symmetric", "function": NAME, "measure": NAME,
     "num_outputs": |Y|, "mechanisms": [{"epsilon": e | "inf", "delta": d, "four_output": b}, ...],
     "groups": [[party, ...], ...],
     "tables": [{"own_bit": null | 0 | 1, "decisions": [...]} | {"own_bit": ..., "probabilities": [[...]]}]}
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.engines import RuleTable
from mpdp.protocols.decision.factors import Factor
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rules import RULE_KINDS, check_symbols

__all__ = ["TableRule", "sample_decisions"]

_FORMAT = "mpdp.decision-rule"


def _eps_to_json(eps: float) -> float | str:
    return "inf" if math.isinf(eps) else eps


def sample_decisions(probs: NDArray[np.float64], rng: np.random.Generator | None) -> NDArray[np.int64]:
    """One decision per row of P(decide y | transcript) (float64 (n, |Y|)): the row's argmax where it is
    deterministic (largest entry within 1e-12 of one), else a draw from ``rng`` (one uniform per row, drawn
    only when some row is mixed): int64 (n,).

    Raises:
        ParameterError: a mixed row and no ``rng``."""
    if probs.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    top: NDArray[np.intp] = probs.argmax(axis=1)
    mixed = probs.max(axis=1) < 1.0 - 1e-12
    if not mixed.any():
        return top.astype(np.int64)
    if rng is None:
        raise ParameterError("rng", None, "a numpy.random.Generator for a randomized rule")
    u = rng.random(len(probs))
    drawn = (np.cumsum(probs, axis=1) < u[:, None] * probs.sum(axis=1, keepdims=True)).sum(axis=1)
    drawn = np.minimum(drawn, probs.shape[1] - 1)
    return np.where(mixed, drawn, top).astype(np.int64)


@dataclass(frozen=True, slots=True)
class TableRule:
    """A decision rule of the central observer or of party ``observer``, as tables over transcript classes.

    Attributes:
        mechanisms: the k parties' randomized responses (the protocol the rule was computed for).
        observer: None (central observer) or the deciding party's index.
        kind: ``"average"`` or ``"worst-case"``.
        engine: the engine that produced it (``"general"`` or ``"symmetric"``).
        groups: party indices of each factor (the observer's own party excluded).
        tables: one table per own bit (central: one): int64 (num_classes,) decisions, or float64
            (num_classes, |Y|) probabilities whose rows sum to one.
        num_outputs: |Y|.
        function, measure: names, for the record.
    """

    mechanisms: tuple[RandomizedResponse, ...]
    observer: int | None
    kind: str
    engine: str
    groups: tuple[tuple[int, ...], ...]
    tables: tuple[RuleTable, ...]
    num_outputs: int
    function: str = ""
    measure: str = ""

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise ParameterError("kind", self.kind, "one of " + ", ".join(RULE_KINDS))
        expected = 1 if self.observer is None else 2
        if len(self.tables) != expected:
            raise ParameterError("tables", len(self.tables), f"{expected} (one per own bit)")
        size = int(np.prod([self._factor(g).num_classes for g in self.groups], dtype=np.int64))
        for t in self.tables:
            if t.shape[0] != size or (t.ndim == 2 and t.shape[1] != self.num_outputs):
                raise ParameterError("table shape", t.shape, f"({size},) or ({size}, {self.num_outputs})")

    def _factor(self, members: tuple[int, ...]) -> Factor:
        return Factor(members, self.mechanisms[members[0]])

    @property
    def k(self) -> int:
        """Number of parties."""
        return len(self.mechanisms)

    @property
    def randomized(self) -> bool:
        """True if some transcript class gets a non-degenerate distribution over decisions."""
        return any(t.ndim == 2 and bool((t.max(axis=1) < 1.0 - 1e-12).any()) for t in self.tables)

    def class_index(self, symbols: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
        """Transcript class of each transcript: int64 (n,), for (n, k) symbols (validated)."""
        s = check_symbols(symbols, self.mechanisms)
        index = np.zeros(s.shape[0], dtype=np.int64)
        for members in self.groups:
            factor = self._factor(members)
            index = index * factor.num_classes + factor.class_of(s[:, list(members)])
        return index

    def probabilities(self, symbols: NDArray[np.integer[Any]], own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.float64]:
        """P(decide y | transcript) for each transcript: float64 (n, |Y|)."""
        index = self.class_index(symbols)
        out = np.zeros((index.size, self.num_outputs))
        for b, rows in self._rows_by_table(index.size, own_bits):
            table = self.tables[b]
            if table.ndim == 1:
                out[rows, table[index[rows]]] = 1.0
            else:
                out[rows] = table[index[rows]]
        return out

    def _rows_by_table(self, n: int, own_bits: NDArray[np.integer[Any]] | int | None) -> list[tuple[int, NDArray[np.int64]]]:
        if self.observer is None:
            return [(0, np.arange(n))]
        if own_bits is None:
            raise ParameterError("own_bits", None, f"party {self.observer}'s own bit per transcript")
        bits = np.broadcast_to(np.asarray(own_bits), (n,))
        if not np.isin(bits, (0, 1)).all():
            raise ParameterError("own_bits", bits, "0 or 1")
        return [(b, np.flatnonzero(bits == b)) for b in (0, 1)]

    def decide(self, symbols: NDArray[np.integer[Any]], rng: np.random.Generator | None = None,
               own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.int64]:
        """The decision for each observed transcript.

        Args:
            symbols: (n, k) integer array, ``symbols[r, i]`` = party i's symbol in transcript r.
            rng: generator for a randomized (worst-case) rule; required when the rule randomizes.
            own_bits: the deciding party's own bit(s), scalar or (n,); required for a party observer.

        Returns:
            int64 array of shape (n,), values in 0..|Y|-1.

        Raises:
            ParameterError: bad symbols or own bits, or a randomized rule without ``rng``.
        """
        return sample_decisions(self.probabilities(symbols, own_bits), rng)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dictionary (module docstring)."""
        tables = []
        bits = [None] if self.observer is None else [0, 1]
        for b, t in zip(bits, self.tables):
            key = "decisions" if t.ndim == 1 else "probabilities"
            tables.append({"own_bit": b, key: t.tolist()})
        return {
            "format": _FORMAT, "version": 1, "kind": self.kind, "observer": self.observer,
            "engine": self.engine, "function": self.function, "measure": self.measure,
            "num_outputs": self.num_outputs,
            "mechanisms": [{"epsilon": _eps_to_json(m.epsilon), "delta": m.delta,
                            "four_output": m.four_output} for m in self.mechanisms],
            "groups": [list(g) for g in self.groups],
            "tables": tables,
        }

    def to_json(self) -> str:
        """Serialize to JSON text (strict JSON: infinite epsilon is written ``"inf"``)."""
        return json.dumps(self.to_dict(), allow_nan=False)

    @classmethod
    def from_json(cls, text: str | dict[str, Any]) -> TableRule:
        """Rebuild a rule from :meth:`to_json` output (text or the parsed dictionary).

        Raises:
            ParameterError: not a decision-rule document, or inconsistent contents.
        """
        data = json.loads(text) if isinstance(text, str) else text
        if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("version") != 1:
            raise ParameterError("rule JSON format", data.get("format") if isinstance(data, dict)
                                 else type(data).__name__, f"{_FORMAT!r} version 1")
        try:
            mechs = tuple(RandomizedResponse(float(m["epsilon"]), float(m["delta"]),
                                             bool(m["four_output"])) for m in data["mechanisms"])
            tables = []
            for t in data["tables"]:
                if "decisions" in t:
                    tables.append(np.asarray(t["decisions"], dtype=np.int64))
                else:
                    tables.append(np.asarray(t["probabilities"], dtype=np.float64))
            return cls(mechs, data["observer"], data["kind"], data["engine"],
                       tuple(tuple(int(i) for i in g) for g in data["groups"]), tuple(tables),
                       int(data["num_outputs"]), data.get("function", ""), data.get("measure", ""))
        except (KeyError, TypeError) as exc:
            raise ParameterError("rule JSON", str(exc), "the fields written by TableRule.to_json") from exc
