"""Fast Monte Carlo accuracy: parties with equal parameters sampled as one count per group.

For a symmetric f (f(x) = g(|x|)) the optimal rules of 002 (average, eqs. (2), (5); worst case, eqs. (4),
(6)) can be taken constant on *count classes*: per group of parties with equal (epsilon, delta), the number
of each symbol (:mod:`mpdp.protocols.decision.factors`). The symbol counts are the sufficient statistic, so a
repetition needs one draw per group, not one per party. Under the uniform input of 002 eq. (1), for a group
of n parties with mechanism (epsilon, delta), p = e^eps / (1 + e^eps), q = 1 - p:

* a ~ Bin(n, 1/2) ones among the members;
* pure randomized response: c1 = Bin(a, p) + Bin(n - a, q) reported ones (002 eq. (9));
* four-output randomized response (000 §5.1): c3 ~ Bin(a, delta), c0 ~ Bin(n - a, delta) revealed bits,
  c2 = Bin(a - c3, p) + Bin(n - a - c0, q), c1 = n - c0 - c2 - c3.

The rule is then a lookup table over count classes, built once by asking the rule itself for
``P(y | transcript)`` on one representative transcript per class, so every sampled decision is the rule's
own decision on a transcript of that class (a randomized worst-case row is sampled from the same row).

:func:`count_table` builds the table (or returns None for a rule that is not constant on count classes,
or too many classes; :func:`table_plan` says which without building it); :meth:`CountTable.total_gain`
runs the repetitions; :meth:`CountTable.correct_on_input` privatizes one fixed input instead (a dataset's
round: ``a`` fixed per group, the rest as above).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import Factor, compositions, group_parties
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.randomization.mechanisms import truth_and_flip
from mpdp.protocols.rules.rules import DecisionRule
from mpdp.protocols.rules.symmetric import SymmetricAverageRule
from mpdp.protocols.rules.table_rule import TableRule

__all__ = ["MAX_COUNT_CLASSES", "CountTable", "count_table", "table_plan"]

#: Largest number of count classes (product over groups) held in a lookup table.
MAX_COUNT_CLASSES = 1 << 22
#: Largest (classes x k^2) spent evaluating the posterior rule on representatives (its cost is O(k^2)).
_POSTERIOR_BUILD_BUDGET = 4_000_000_000
_BATCH = 1 << 20  # repetitions per batch
_BUILD_CHUNK = 1 << 23  # representative symbols per call of the rule while building a table
_MIXED = 1e-12  # a row whose largest probability is below 1 - this is randomized (as TableRule.decide)


@lru_cache(maxsize=64)
def _class_counts(n: int, four_output: bool) -> NDArray[np.int64]:
    """Every class of a group of n as symbol counts (c0, c1, c2, c3): int64 (classes, 4), in the order of
    :meth:`mpdp.protocols.decision.factors.Factor.class_of` (a single party: its symbol; a pure group: c1 = 0..n;
    a four-output group: :func:`mpdp.protocols.decision.factors.compositions`)."""
    if four_output:
        return np.eye(4, dtype=np.int64) if n == 1 else compositions(n)
    ones = np.arange(n + 1, dtype=np.int64)
    zero = np.zeros_like(ones)
    return np.stack([n - ones, ones, zero, zero], axis=1)


def _representatives(factors: tuple[Factor, ...], k: int, start: int, stop: int) -> NDArray[np.uint8]:
    """One transcript per count class start..stop-1 (mixed radix, first group most significant): uint8
    (stop - start, k). Members of a group take symbols 0, 1, 2, 3 in member order, c0, c1, c2, c3 of each;
    other columns 0."""
    sizes = [f.num_classes for f in factors]
    out = np.zeros((stop - start, k), dtype=np.uint8)
    digits = np.arange(start, stop, dtype=np.int64)
    for factor, size in reversed(list(zip(factors, sizes))):
        digit, digits = digits % size, digits // size
        bounds = np.cumsum(_class_counts(factor.n, factor.mechanism.four_output)[:, :3], axis=1)  # (size, 3)
        position = np.arange(factor.n)[None, :, None]
        symbols = (position >= bounds[:, None, :]).sum(axis=2).astype(np.uint8)  # (size, n)
        out[:, list(factor.members)] = symbols[digit]
    return out


@lru_cache(maxsize=16)
def _four_lookup(n: int) -> NDArray[np.int64]:
    """Class index of the counts (c0, c3, c2) of a four-output group of n: int64 (n+1, n+1, n+1), -1 elsewhere."""
    counts = _class_counts(n, True)
    lookup = np.full((n + 1, n + 1, n + 1), -1, dtype=np.int64)
    lookup[counts[:, 0], counts[:, 3], counts[:, 2]] = np.arange(counts.shape[0])
    return lookup


@dataclass(frozen=True, slots=True)
class CountTable:
    """A decision rule on count classes, and its sampler.

    Attributes:
        factors: the groups of parties the rule's owner does not know (equal mechanisms), in class order.
        observer: None (central observer) or the deciding party, whose own bit is drawn separately.
        decisions: per own bit (central: one), int64 (classes,): the most probable output of each class.
        cumulative: per own bit, float64 (classes, |Y|): cumulative P(y | class); (0, |Y|) when no row
            is randomized.
        mixed: per own bit, bool (classes,): rows that are randomized (a worst-case LP's mixed rows).
    """

    factors: tuple[Factor, ...]
    observer: int | None
    decisions: tuple[NDArray[np.int64], ...]
    cumulative: tuple[NDArray[np.float64], ...]
    mixed: tuple[NDArray[np.bool_], ...]

    @property
    def num_classes(self) -> int:
        """Number of count classes."""
        return int(self.decisions[0].size)

    def _sample_classes(self, n: int, rng: np.random.Generator,
                        fixed: tuple[int, ...] | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """n repetitions of the unknown parties: (ones among them, count class), each int64 (n,). The ones
        of each group are Bin(size, 1/2) (a uniform input), or ``fixed[g]`` in every repetition."""
        ones = np.zeros(n, dtype=np.int64)
        index = np.zeros(n, dtype=np.int64)
        for g, factor in enumerate(self.factors):
            size = factor.n
            mech = factor.mechanism
            p, q = truth_and_flip(mech.epsilon)
            a = rng.binomial(size, 0.5, n) if fixed is None else np.full(n, fixed[g], dtype=np.int64)
            ones += a
            if not mech.four_output:
                c1 = rng.binomial(a, p) + rng.binomial(size - a, q)
                index = index * factor.num_classes + c1
                continue
            c3 = rng.binomial(a, mech.delta)
            c0 = rng.binomial(size - a, mech.delta)
            c2 = rng.binomial(a - c3, p) + rng.binomial(size - a - c0, q)
            index = index * factor.num_classes + _four_lookup(size)[c0, c3, c2]
        return ones, index

    def _decide(self, b: int, classes: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
        decided = self.decisions[b][classes]
        mixed = self.mixed[b][classes]
        if mixed.any():
            rows = self.cumulative[b][classes[mixed]]
            u = rng.random(rows.shape[0]) * rows[:, -1]
            drawn = np.minimum((rows < u[:, None]).sum(axis=1), rows.shape[1] - 1)
            decided[mixed] = drawn
        return decided

    def total_gain(self, values: NDArray[np.int64], measure: NDArray[np.float64], samples: int,
                   rng: np.random.Generator, progress: Callable[[int], None] = lambda n: None) -> float:
        """Sum over ``samples`` repetitions of w(f(x), decision): x uniform (002 eq. (1)), then the counts.

        Args:
            values: g with f(x) = g(|x|), int64 (k + 1,). measure: w, float64 (|Y|, |Y|).
            samples: repetitions >= 0. rng: the explicit generator.
            progress: called with the repetitions of each batch done.

        Returns:
            the total gain (a float; for a 0/1 measure an integer count of correct decisions).
        """
        total = 0.0
        done = 0
        while done < samples:
            n = min(_BATCH, samples - done)
            ones, classes = self._sample_classes(n, rng)
            if self.observer is None:
                decided = self._decide(0, classes, rng)
            else:
                own = rng.integers(0, 2, n)
                ones += own
                decided = np.where(own == 1, self._decide(1, classes, rng), self._decide(0, classes, rng))
            total += float(measure[values[ones], decided].sum())
            done += n
            progress(n)
        return total

    def correct_on_input(self, ones: tuple[int, ...], truth: int, samples: int, rng: np.random.Generator) -> int:
        """How many of ``samples`` privatizations of one fixed input the central observer decides right.

        Per repetition each group's symbol counts are drawn given its ``ones[g]`` ones (a pure group:
        c1 = Bin(ones, p) + Bin(n - ones, 1 - p); four-output: as the module docstring), and the table
        decides (a randomized row is sampled).

        Args:
            ones: per group of :attr:`factors`, its members holding a one (0..n). truth: f(x).
            samples: repetitions >= 0. rng: the explicit generator.

        Returns:
            the number of repetitions whose decision equals ``truth``.

        Raises:
            ParameterError: a party's table (observer not None), or ``ones`` not one count 0..n per group.
        """
        if self.observer is not None:
            raise ParameterError("observer", self.observer, "None (the central observer's table)")
        if len(ones) != len(self.factors) or any(not 0 <= a <= f.n for a, f in zip(ones, self.factors)):
            raise ParameterError("ones", ones, "one count 0..n per group: sizes "
                                 + ", ".join(str(f.n) for f in self.factors))
        right = 0
        done = 0
        while done < samples:
            n = min(_BATCH, samples - done)
            _, classes = self._sample_classes(n, rng, ones)
            right += int((self._decide(0, classes, rng) == truth).sum())
            done += n
        return right


def _constant_on_counts(rule: DecisionRule, factors: tuple[Factor, ...]) -> bool:
    if isinstance(rule, SymmetricAverageRule):
        return True  # its posterior of the count depends on the symbols through their counts only
    if isinstance(rule, TableRule):
        return rule.groups == tuple(f.members for f in factors)
    return False


def table_plan(rule: DecisionRule, max_classes: int = MAX_COUNT_CLASSES) -> tuple[tuple[Factor, ...], int] | None:
    """The groups and the number of count classes of the table :func:`count_table` would build, or None
    where it would return None (the same conditions, and a group larger than
    :class:`mpdp.protocols.decision.factors.Factor` holds, e.g. a four-output group above ``FOUR_OUTPUT_GROUP_MAX``),
    without building anything.

    Raises:
        ParameterError: max_classes < 1.
    """
    if max_classes < 1:
        raise ParameterError("max_classes", max_classes, "an integer >= 1")
    k = len(rule.mechanisms)
    others = tuple(i for i in range(k) if i != rule.observer)
    try:
        factors = group_parties(rule.mechanisms, others, grouped=True)
    except SizeLimitError:  # a four-output group above FOUR_OUTPUT_GROUP_MAX: drawn party by party
        return None
    if not _constant_on_counts(rule, factors):
        return None
    classes = math.prod(f.num_classes for f in factors)
    if classes > max_classes:
        return None
    if isinstance(rule, SymmetricAverageRule) and classes * k * k > _POSTERIOR_BUILD_BUDGET:
        return None
    return factors, classes


def count_table(rule: DecisionRule, max_classes: int = MAX_COUNT_CLASSES) -> CountTable | None:
    """The rule as a lookup table on count classes, or None where that does not hold or does not pay.

    A symmetric-engine :class:`mpdp.protocols.rules.table_rule.TableRule` is already a table on these classes
    (taken as is); the posterior rule is evaluated on one representative transcript per class.

    None when the rule is not known to be constant on the count classes of its groups (a general-engine
    table whose parties share parameters: its ties may be broken by party), when a group is larger than a
    likelihood factor holds, when the classes exceed ``max_classes``, or when the posterior rule would
    take too long to evaluate on one transcript per class.

    Args:
        rule: a :class:`mpdp.protocols.rules.table_rule.TableRule` or
            :class:`mpdp.protocols.rules.symmetric.SymmetricAverageRule` (central observer or a party).
        max_classes: the largest table built.

    Raises:
        ParameterError: max_classes < 1.
    """
    plan = table_plan(rule, max_classes)
    if plan is None:
        return None
    factors, classes = plan
    mechs = rule.mechanisms
    k = len(mechs)
    step = max(1, _BUILD_CHUNK // max(k, 1))
    bits = (None,) if rule.observer is None else (0, 1)
    decisions: list[NDArray[np.int64]] = []
    cumulative: list[NDArray[np.float64]] = []
    mixed: list[NDArray[np.bool_]] = []
    for b in bits:
        probs: NDArray[np.float64]
        if isinstance(rule, TableRule):  # its classes are these, in this order (Factor.class_of)
            table = rule.tables[0 if b is None else b]
            probs = np.eye(rule.num_outputs)[table] if table.ndim == 1 else table.astype(np.float64)
        else:
            probs = np.concatenate([rule.probabilities(_representatives(factors, k, a, min(a + step, classes)), b)
                                    for a in range(0, classes, step)])
        decisions.append(probs.argmax(axis=1).astype(np.int64))
        mixed.append(probs.max(axis=1) < 1.0 - _MIXED)
        cumulative.append(np.cumsum(probs, axis=1) if mixed[-1].any() else probs[:0])
        del probs
    return CountTable(factors, rule.observer, tuple(decisions), tuple(cumulative), tuple(mixed))
