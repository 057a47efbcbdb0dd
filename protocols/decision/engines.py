"""Exact engines for the decision problem of 002 §2 (000 eqs. (9)-(14)): which one runs, and its sums.

An observer's *view* is what it does not know: the parties other than itself, as likelihood factors
(:mod:`mpdp.protocols.decision.factors`), and the gain ``gain[j, y] = w(f(x), y)`` over the input classes j of those
factors (for the party observer, with its own bit x_i fixed: 002 eq. (2) sums over x_{-i} only). The
central observer has one view; party i has two, one per value of x_i (its LP separates, 002 eq. (4)).

Engines (reported by name):

* ``general``: one factor per party, any f (a truth table over 2^k inputs), transcripts in full:
  ``O(k * m^k * |Y|)`` per decision table or accuracy evaluation, never the 2^k x m^k matrix.
* ``symmetric``: f depends only on the number of ones among the parties of each group of equal
  parameters (a symmetric f, or a truth table symmetric within those groups:
  :func:`mpdp.protocols.functions.group_values` detects it); each group forms one factor whose classes
  are symbol counts. Chosen when it has fewer classes than the general engine has transcripts, or when
  the general engine cannot fit.

Sizes that fit neither raise :class:`SizeLimitError` naming the limit and the engine that would serve
(for a symmetric f: :class:`mpdp.protocols.rules.symmetric.SymmetricAverageRule`, exact decisions per observed
transcript with Monte Carlo accuracy in :mod:`mpdp.analysis.theory.accuracy`).

The sums (x in class j, tau in class c; the class likelihood is prod_g F_g[j_g, c_g]):
  decisions  L[c, y] = sum_j P(j | c) gain[j, y]          (posterior factors, 002 eqs. (2), (5))
  accuracy   A[j]    = sum_c P(c | j) sum_y gain[j, y] Q[c, y]   (forward factors, eqs. (1), (3))
  average    sum_j prior[j] A[j]; worst case min_j A[j].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.error_rules import error_accuracy, error_decisions
from mpdp.protocols.decision.factors import Factor, group_parties
from mpdp.protocols.decision.parity import parity_accuracy, parity_decisions
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import (
    TRUTH_TABLE_MAX_K,
    BooleanFunction,
    ErrorMeasure,
    Measure,
    group_values,
    measure_bounds,
)
from mpdp.protocols.numerics.kron import kron_matvec
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = [
    "BATCH_ENTRIES",
    "ENGINES",
    "GENERAL_MAX_TRANSCRIPTS",
    "SYMMETRIC_MAX_CLASSES",
    "DecisionProblem",
    "View",
    "accuracy_summary",
    "average_decisions",
    "build_problem",
    "input_class",
    "view_accuracy",
]

ENGINES = ("auto", "general", "symmetric")
#: Largest number of transcripts (prod m_i) the general engine holds (2^24: k = 24 pure, 12 four-output).
GENERAL_MAX_TRANSCRIPTS = 1 << 24
#: Largest number of transcript classes (or input classes) the symmetric engine holds.
SYMMETRIC_MAX_CLASSES = 1 << 24
#: Entries per batch of the transforms over the outputs (float64: 32 MB an array).
BATCH_ENTRIES = 1 << 22

#: A rule on one view: int64 decisions (num_classes,) or float64 probabilities Q (num_classes, |Y|).
RuleTable = NDArray[np.int64] | NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class View:
    """One observer's decision problem given what it knows.

    Attributes:
        factors: likelihood factors of the parties the observer does not know, in index order.
        outputs: int64 (num_inputs,), f(x) for x in input class j (the observer's own bit included).
        measure: w, float64 (|Y|, |Y|), or an error measure's formula
            (:class:`mpdp.protocols.functions.ErrorMeasure`); the gain is ``gain[j, y] = w(outputs[j], y)``.
        prior: float64 (num_inputs,), the uniform prior over x aggregated to classes (sums to one).
        own_bit: the observer's own bit (party observer) or None (central observer).
    """

    factors: tuple[Factor, ...]
    outputs: NDArray[np.int64]
    measure: Measure
    prior: NDArray[np.float64]
    own_bit: int | None
    _gain: list[NDArray[np.float64]] = field(default_factory=list, repr=False, compare=False)

    @property
    def num_classes(self) -> int:
        """Number of transcript classes of this view."""
        return int(np.prod([f.num_classes for f in self.factors], dtype=np.int64))

    @property
    def num_inputs(self) -> int:
        """Number of input classes of this view."""
        return int(self.outputs.shape[0])

    @property
    def num_outputs(self) -> int:
        """|Y|."""
        return int(self.measure.shape[0])

    def gain_columns(self, ys: slice) -> NDArray[np.float64]:
        """float64 (num_inputs, len(ys)): ``gain[:, ys]``, computed (an error measure's, or read from w)."""
        guesses = np.arange(ys.start, ys.stop)
        if isinstance(self.measure, ErrorMeasure):
            return self.measure.gain(self.outputs[:, None], guesses[None, :])
        columns: NDArray[np.float64] = self.measure[self.outputs[:, None], guesses[None, :]]
        return columns

    @property
    def gain(self) -> NDArray[np.float64]:
        """float64 (num_inputs, |Y|), ``gain[j, y] = w(f(x), y)`` for x in input class j: built on first use
        (the worst-case LP and the parity form read it whole; the average rule's sums read it by columns)."""
        if not self._gain:
            self._gain.append(self.gain_columns(slice(0, self.num_outputs)))
        return self._gain[0]


@dataclass(frozen=True, slots=True)
class DecisionProblem:
    """The optimal-decision problem of one observer (002 §2), prepared for an engine.

    Attributes:
        mechanisms: the k parties' randomized responses.
        function, measure: f and w (float64 (|Y|, |Y|), or an error measure's formula).
        observer: None for the central observer, else the party index i (0-based).
        engine: ``"general"`` or ``"symmetric"``.
        views: one view (central) or two (party: own bit 0, then 1).
    """

    mechanisms: tuple[RandomizedResponse, ...]
    function: BooleanFunction
    measure: Measure
    observer: int | None
    engine: str
    views: tuple[View, ...]

    @property
    def k(self) -> int:
        """Number of parties."""
        return len(self.mechanisms)


def _symmetric_outputs(factors: Sequence[Factor], values: NDArray[np.int64], offset: int) -> NDArray[np.int64]:
    """f on every input class of the groups' counts: g(total ones + the observer's own bit)."""
    ones = np.zeros(1, dtype=np.int64)
    for f in factors:
        ones = (ones[:, None] + np.arange(f.n + 1)[None, :]).ravel()
    outputs: NDArray[np.int64] = values[ones + offset]
    return outputs


def _prior(factors: Sequence[Factor]) -> NDArray[np.float64]:
    prior = np.ones(1)
    for f in factors:
        prior = np.kron(prior, f.prior).astype(np.float64, copy=False)
    return prior


def _own_bit_table(table: NDArray[np.int64], observer: int | None, bit: int | None) -> NDArray[np.int64]:
    """f over the other parties' bits (input order) with the observer's own bit fixed (central: f)."""
    if observer is None or bit is None:
        return table
    k = table.size.bit_length() - 1
    sub: NDArray[np.int64] = np.take(table.reshape((2,) * k), bit, axis=observer).ravel()
    return sub


def _grouped_tables(table: NDArray[np.int64], observer: int | None, others: tuple[int, ...],
                    grouped: Sequence[Factor]) -> list[NDArray[np.int64]] | None:
    """f per input class of the grouped factors, one table per own bit, if f depends on the others' bits
    only through the per-group counts of ones (with the own bit fixed); else None."""
    position = {party: p for p, party in enumerate(others)}
    groups = [[position[i] for i in f.members] for f in grouped]
    tables = []
    for b in (None,) if observer is None else (0, 1):
        values = group_values(_own_bit_table(table, observer, b), groups)
        if values is None:
            return None
        tables.append(values)
    return tables


def _count(n: int) -> int | str:
    """A count for an error message: n itself below 10^15, else its power of two (``"2^1001"``, ``"more than
    2^1001"``): 2^k of 15,000 parties has more digits than Python converts to text (4,300)."""
    if n < 10**15:
        return n
    power = n.bit_length() - 1
    return f"2^{power}" if n == 1 << power else f"more than 2^{power}"


def _pick_engine(engine: str, symmetric: bool, transcripts: int, classes: int) -> str:
    if engine not in ENGINES:
        raise ParameterError("engine", engine, "one of " + ", ".join(ENGINES))
    if engine == "auto":
        if symmetric and (classes < transcripts or transcripts > GENERAL_MAX_TRANSCRIPTS):
            engine = "symmetric"
        else:
            engine = "general"
    if engine == "symmetric" and not symmetric:
        raise ParameterError("engine", engine, "general for a function that is not symmetric within the "
                                               "groups of parties with equal parameters")
    if engine == "general" and transcripts > GENERAL_MAX_TRANSCRIPTS:
        alt = ("the symmetric engine (engine='symmetric')" if symmetric and
               classes <= SYMMETRIC_MAX_CLASSES else
               "a symmetric function with grouped parameters, or the posterior rule with Monte Carlo")
        raise SizeLimitError("transcripts (prod of symbols per party)", _count(transcripts),
                             GENERAL_MAX_TRANSCRIPTS, alt)
    if engine == "symmetric" and classes > SYMMETRIC_MAX_CLASSES:
        raise SizeLimitError("transcript classes", _count(classes), f"{SYMMETRIC_MAX_CLASSES:,}",
                             "the posterior rule: exact decisions, a Monte Carlo accuracy")
    return engine


def build_problem(
    mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction,
    measure: Measure,
    observer: int | None = None,
    engine: str = "auto",
) -> DecisionProblem:
    """Prepare the decision problem of the central observer or of party ``observer``.

    Args:
        mechanisms: k >= 1 randomized responses, party order.
        function: f; symmetric functions (``count_values``) may use the symmetric engine.
        measure: w, float64 (|Y|, |Y|) with |Y| = function.output_size(k), or an
            :class:`mpdp.protocols.functions.ErrorMeasure` on those |Y| outputs (no table built).
        observer: None (central observer) or a party index 0..k-1.
        engine: ``auto``, ``general`` or ``symmetric``.

    Raises:
        ParameterError: bad observer, engine or measure shape.
        SizeLimitError: the problem fits no engine (message names the limit and the alternative).
    """
    mechs = tuple(mechanisms)
    k = len(mechs)
    if k < 1:
        raise ParameterError("k", k, "at least one party")
    if observer is not None and not (0 <= int(observer) < k):
        raise ParameterError("party", observer, f"a party index 0..{k - 1}")
    w = measure if isinstance(measure, ErrorMeasure) else np.asarray(measure, dtype=np.float64)
    size = function.output_size(k)
    if w.shape != (size, size) or not (isinstance(w, ErrorMeasure) or np.isfinite(w).all()):
        raise ParameterError("measure shape", w.shape, f"a finite ({size}, {size}) matrix for {function.name}")
    values = function.count_values(k)
    parties = np.arange(k) if observer is None else np.delete(np.arange(k), int(observer))
    grouped = group_parties(mechs, parties, grouped=True)  # first: a group too large is refused before
    others = tuple(parties.tolist())  # the per-party tuple (10^6 parties: ~40 MB)
    # prod of the symbols per party, each 2 or 4: a shift (a product of 10^6 Python ints took 47 s)
    transcripts = 1 << sum(f.n * (f.mechanism.num_symbols.bit_length() - 1) for f in grouped)
    classes = int(np.prod([f.num_classes for f in grouped], dtype=object))
    own_bits: tuple[int | None, ...] = (None,) if observer is None else (0, 1)
    grouped_tables = None
    if values is None and len(grouped) < len(others) and k <= TRUTH_TABLE_MAX_K:
        grouped_tables = _grouped_tables(function.truth_table(k), observer, others, grouped)
    chosen = _pick_engine(engine, values is not None or grouped_tables is not None, transcripts, classes)
    views = []
    if chosen == "symmetric":
        prior = _prior(grouped)
        for i, b in enumerate(own_bits):
            outputs = (_symmetric_outputs(grouped, values, b or 0) if values is not None
                       else grouped_tables[i] if grouped_tables is not None else None)
            assert outputs is not None  # _pick_engine chooses it only for a function of the group counts
            views.append(View(grouped, outputs, w, prior, b))
    else:
        factors = group_parties(mechs, others, grouped=False)
        table = function.truth_table(k)
        prior = np.full(1 << len(others), 0.5 ** len(others))
        for b in own_bits:
            views.append(View(factors, _own_bit_table(table, observer, b), w, prior, b))
    return DecisionProblem(mechs, function, w, None if observer is None else int(observer),
                           chosen, tuple(views))


def _batches(view: View) -> list[slice]:
    step = max(1, BATCH_ENTRIES // max(view.num_classes, view.num_inputs))
    return [slice(a, min(a + step, view.num_outputs)) for a in range(0, view.num_outputs, step)]


def average_decisions(view: View) -> NDArray[np.int64]:
    """The optimal average-case decisions, 002 eq. (5) (central) / eq. (2) (party, own bit fixed).

    ``argmax_y sum_j P(j | c) gain[j, y]`` for every transcript class c; ties go to the smallest y. A
    gain of parity form (XOR) is decided in exact product form (:mod:`mpdp.protocols.decision.parity`), where the
    sum cancels below float resolution; an error measure by its closed form, the posterior mean or median
    (:func:`mpdp.protocols.decision.error_rules.error_decisions`), where one serves.

    Returns:
        int64 array of shape (num_classes,).
    """
    if isinstance(view.measure, ErrorMeasure):
        closed = error_decisions(view.factors, view.outputs, view.measure)
        if closed is not None:
            return closed
    parity = parity_decisions(view.factors, view.gain) if view.num_outputs == 2 else None
    if parity is not None:
        return parity
    post = [f.posterior for f in view.factors]
    best = np.full(view.num_classes, -np.inf)
    arg = np.zeros(view.num_classes, dtype=np.int64)
    for batch in _batches(view):
        expected = kron_matvec(post, view.gain_columns(batch), transpose=True)
        local = np.argmax(expected, axis=1)
        top = expected[np.arange(expected.shape[0]), local]
        better = top > best
        best = np.where(better, top, best)
        arg = np.where(better, local + batch.start, arg)
    return arg


def view_accuracy(view: View, table: RuleTable) -> NDArray[np.float64]:
    """Accuracy of a rule on every input class: ``A[j] = E[w(f(x), rule(tau)) | x in class j]``.

    Args:
        table: int64 decisions (num_classes,) or float64 probabilities Q (num_classes, |Y|).

    Returns:
        float64 array of shape (num_inputs,) (002 eqs. (1), (3) before averaging / minimizing). The parity
        rule (XOR) is evaluated in product form (:func:`mpdp.protocols.decision.parity.parity_accuracy`), the
        decisions of one group under an error measure entry by entry of its likelihood
        (:func:`mpdp.protocols.decision.error_rules.error_accuracy`).
    """
    if isinstance(view.measure, ErrorMeasure) and table.ndim == 1:
        closed = error_accuracy(view.factors, view.outputs, view.measure, table.astype(np.int64, copy=False))
        if closed is not None:
            return closed
    exact = parity_accuracy(view.factors, view.gain, table) if view.num_outputs == 2 else None
    if exact is not None:
        return exact
    forward = [f.forward for f in view.factors]
    acc = np.zeros(view.num_inputs)
    for batch in _batches(view):
        ys = np.arange(batch.start, batch.stop)
        if table.ndim == 1:
            q = (table[:, None] == ys[None, :]).astype(np.float64)
        else:
            q = table[:, batch]
        acc += np.einsum("jy,jy->j", kron_matvec(forward, q), view.gain_columns(batch))
    return acc


def input_class(view: View, bits: NDArray[np.integer[Any]]) -> int:
    """Index of the input class of x (a full (k,) bit vector) in ``view``'s input grid."""
    index = 0
    for f in view.factors:
        index = index * (f.n + 1) + int(np.asarray(bits)[list(f.members)].sum())
    return index


def accuracy_summary(problem: DecisionProblem,
                     tables: Sequence[RuleTable]) -> tuple[float, float, tuple[NDArray[np.float64], ...]]:
    """Exact average (002 eq. (1)) and worst-case (eq. (3)) accuracy of a rule given by its tables.

    Args:
        tables: one per view (decisions or probabilities, see :func:`view_accuracy`).

    Returns:
        (average, worst_case, per-view accuracy arrays over input classes), all within the range of the
        measure w (clipped here, the one place: rounding can overshoot it by an ulp).
    """
    # an accuracy is an expectation of w: rounding (a prior summing to 1 + ulp) must not leave w's range
    lo, hi = measure_bounds(problem.measure)
    per_view = tuple(np.clip(view_accuracy(v, t), lo, hi) for v, t in zip(problem.views, tables, strict=True))
    worst = float(min(a.min() for a in per_view))
    best = float(max(a.max() for a in per_view))
    # a mean lies between the least and the largest value averaged (the prior's rounding must not move it)
    mean = float(np.mean([(v.prior @ a) / v.prior.sum() for v, a in zip(problem.views, per_view)]))
    average = min(max(mean, worst), best)
    return average, worst, per_view
