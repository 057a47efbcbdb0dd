"""The symmetric engine's up-front cost: one exact rule (the average kind) or its exact accuracy, from the
groups of parties with equal parameters alone, nothing built (:mod:`mpdp.protocols.numerics.cost`).

``mpdp accuracy`` (:func:`mpdp.parties.api.accuracies.accuracy`) compares it with the count engine's estimate
and runs the cheaper; :func:`mpdp.protocols.rules.optimal.optimal_rules` refuses by it (a
:class:`mpdp.protocols.errors.CostLimitError`, which the rule factory answers with the posterior rule); a sweep
sums it over its points (:mod:`mpdp.analysis.sweeps.sweep_cost`). No group size is refused for itself: a pure
group of any n is a likelihood factor, and what building it takes is this estimate's to say.

Time (one view: the central observer; a party has two, one per own bit), with E = sum_g e_g prod_{h != g}
max(n_h + 1, classes_h) the products of the Kronecker transform (:mod:`mpdp.protocols.numerics.kron`: one
group's likelihood at a time, applied to the other groups' classes), e_g the likelihood entries of group g
((n_g + 1) x classes_g for a dense group, the band's nonzeros,
:func:`mpdp.protocols.decision.factors.likelihood_nonzeros`, for a pure group above ``PURE_GROUP_DENSE_MAX``):

    views * (EXACT_CALL_SECONDS + E * (EXACT_STEP_SECONDS + |Y| * EXACT_OUTPUT_STEP_SECONDS))
      (BAND_OUTPUT_STEP_SECONDS in place of EXACT_OUTPUT_STEP_SECONDS for a band's products: sparse, not BLAS)
      + sum over banded groups of (BAND_ENTRY_SECONDS * nonzeros + BAND_ROW_SECONDS * (n + 1))

(the band is built once for both views). Calibration of the dense terms (the project's 2-core machine shared
with ~6 jobs, 2026-12-01; pure randomized response at epsilon 1, the average rule and its exact accuracy):
majority 0.06 s at n = 428, 0.3 s at 3,000, 1.9 s at 10,000; sum 0.1 s at 428, 0.46 s at 1,000, 1.8 s at
2,000. The band's terms (issue 23: before, every banded group was costed as (n + 1)^2 dense entries, 8 s at
20,000 and 51 s at 50,000 against 2-4 s and 9-16 s measured, and groups above 20,000 were refused by a size
cap), measured with ``benchmarks/bench_engine_cost.py`` (docs/benchmarks.md; CPU of the call in a fresh
interpreter, load 3.0-3.3, 2026-12-03), majority, CPU s / estimate s, peak / estimated memory:
20,000 at epsilon 1 2.08 / 3.06 (0.82 / 0.80 GB), at 0.1 1.98 / 3.47; 50,000 at 1 9.9 / 11.3 (3.17 / 3.30
GB), at 8 (bands ~100 wide: the rows' cost) 2.8 / 2.8; 100,000 at 3 13.9 / 16.6 (4.10 / 4.50 GB), at 1
33.7 / 30.3 (8.70 / 9.35 GB); 30,000 beside a group of 4 5.37 / 11.9; sum (3,001 outputs and more: the
band's sparse products) 2.5 / 2.1 at 2,500 and 5.8 / 6.6 at 4,000. At 10^6 parties (epsilon 1) the band has
~1.5e10 nonzeros: about 300 GB, refused by memory.

A view of parity form (XOR: :mod:`mpdp.protocols.decision.parity`, every epsilon > 0) is decided and evaluated
in product form, O(classes + inputs), no likelihood built: ``views * (EXACT_CALL_SECONDS + (classes + inputs)
* PARITY_CLASS_SECONDS)`` (xor of 10^5 parties 0.12 s against 0.10 s estimated, 10^6 0.75 s against 0.82 s).

Memory: four float64 tables of max(classes, inputs) x |Y| (the measure, the gain, the decisions, their
products), the dense likelihoods (8 bytes an entry) and the bands (:data:`BAND_ENTRY_BYTES` a nonzero).

An error measure held as its formula (``absolute-error``, ``squared-error``:
:mod:`mpdp.protocols.decision.error_rules`) builds no table of |Y| columns: the sums read the gain a batch of
columns at a time (at most ``BATCH_ENTRIES`` entries), so its memory is the likelihoods and
``ERROR_VECTORS`` float64 vectors of max(classes, inputs) besides. One group (the central observer of
parties with equal parameters, or a party among them) is decided by the posterior mean or median and
evaluated in one pass over its likelihood's entries each: ``views * (EXACT_CALL_SECONDS + entries *
ERROR_ENTRY_SECONDS)``, no |Y| factor; a band is then read row by row as it is made, twice a view, never
held (:data:`ERROR_BLOCK_BYTES` instead of :data:`BAND_ENTRY_BYTES` a nonzero); a dense group's entries cost
:data:`ERROR_DENSE_ENTRY_SECONDS`, its construction included. Measured (``benchmarks/bench_error_measures.py``
and ``mpdp accuracy`` under ``/usr/bin/time``, CPU, epsilon 1, load 10.7-12, 2026-12-03), sum, CPU / estimate,
peak RSS / estimate: 10^5 parties 42.7 / 55 s (squared error; absolute 40.6 s), 146 / 241 MB (absolute 160
MB); 20,000 4.9 / 5.6 s, 144 / 236 MB; 2,000 1.2-1.5 s against 0.59 s before the dense term (the table path
2.1-2.5 s, 312 MB; before this model, the same table path 2.6-2.7 s, 308 MB). Several groups keep the time above, their sums over the outputs (for ``sum``
under squared error G + 2 products of one column run instead: the estimate is then high).

Every party's rule (:func:`party_rules_cost`; :mod:`mpdp.protocols.rules.party_rules`): one rule per group of
parties sharing a mechanism, the group's first member's (two views), costed as above; where that estimate is
refused (the rule factory then builds the posterior rule) each transcript is decided once per (group, symbol,
own bit) by the posterior's count recurrence, ``POSTERIOR_PARTY_SECONDS * k + POSTERIOR_PAIR_SECONDS *
repetitions * k^2 / 2`` an evaluation (k = 4,000: 0.033 s at one repetition, 0.50 s at 20; 16,000: 0.15 s;
load 2.3, 2026-12-03). A worst-case rule has no such fallback: the exact engine's likelihoods and an LP per own
bit (:func:`mpdp.protocols.decision.worst_case.symmetric_lp_cost`, ~2x the central observer's LP), refused
here as the rule factory would refuse it. The parties' decisions themselves are lookups, O(repetitions) a
party, on the transcript held :data:`TRANSCRIPT_SYMBOL_BYTES` a symbol.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from mpdp.protocols.decision.engines import BATCH_ENTRIES, SYMMETRIC_MAX_CLASSES
from mpdp.protocols.decision.factors import (
    PURE_GROUP_DENSE_MAX,
    Factor,
    group_members,
    lazy_imports,
    likelihood_nonzeros,
    symmetric_groups,
)
from mpdp.protocols.decision.worst_case import symmetric_lp_cost
from mpdp.protocols.errors import SizeLimitError
from mpdp.protocols.functions import BooleanFunction, error_measure
from mpdp.protocols.numerics.cost import CostEstimate, import_seconds, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["BAND_ENTRY_BYTES", "BAND_ENTRY_SECONDS", "BAND_OUTPUT_STEP_SECONDS", "BAND_ROW_SECONDS", "EXACT_CALL_SECONDS",
           "ERROR_BLOCK_BYTES", "ERROR_DENSE_ENTRY_SECONDS", "ERROR_ENTRY_SECONDS", "ERROR_VECTORS", "EXACT_OUTPUT_STEP_SECONDS", "EXACT_STEP_SECONDS", "PARITY_CLASS_SECONDS", "banded",
           "POSTERIOR_PAIR_SECONDS", "POSTERIOR_PARTY_SECONDS", "TRANSCRIPT_SYMBOL_BYTES", "count_parity", "exact_rule_cost", "party_rules_cost",
           "symmetric_rule_cost"]

#: Seconds of one exact-engine call besides its tables (the problem, the views, the calls).
EXACT_CALL_SECONDS = 0.02
#: Seconds per likelihood entry (dense: transcript class x input class) of the groups' product: the count
#: likelihood and its products.
EXACT_STEP_SECONDS = 2.0e-8
#: Seconds per (likelihood entry x output): the products with the gain table.
EXACT_OUTPUT_STEP_SECONDS = 2.5e-10
#: Seconds per (band nonzero x output): the sparse products with the gain (sum: |Y| = n + 1).
BAND_OUTPUT_STEP_SECONDS = 6.0e-10
#: Seconds per band nonzero of one group's view under an error measure: the posterior mean or median and the
#: accuracy's pass, together, besides the band's construction (calibration in the module docstring).
ERROR_ENTRY_SECONDS = 3.0e-8
#: Seconds per entry of a dense group's likelihood (n <= PURE_GROUP_DENSE_MAX) under an error measure: its
#: construction (the recursive filter, row by row) and the two passes (sum of 2,000 parties: 1.2 s, 4.0e6
#: entries, 0.45 s of it the scipy.signal import).
ERROR_DENSE_ENTRY_SECONDS = 1.9e-7
#: Peak bytes of the one-group passes' blocks of a band under an error measure (2^20 entries a block: the
#: rows, their padded copy and a few temporaries of that size).
ERROR_BLOCK_BYTES = 1.0e8
#: float64 vectors of max(classes, inputs) an error measure's rule holds (decisions, moments, accuracy, the
#: prior and the batch of gain columns' products, counted as vectors) besides the likelihoods.
ERROR_VECTORS = 12
#: Seconds per nonzero of a banded likelihood while it is built (restart rows, FFT steps, the CSR copy).
BAND_ENTRY_SECONDS = 3.5e-8
#: Seconds per row of a banded likelihood (a row's Python and numpy calls: the whole cost of narrow bands).
BAND_ROW_SECONDS = 4.0e-5
#: Peak bytes per nonzero of a banded likelihood: its value (8) and column index (4; 8 from 2^31 entries),
#: and the rows it is copied from (8) while the CSR arrays fill (measured 19-22 with the interpreter).
BAND_ENTRY_BYTES = 20.0
#: Seconds per transcript or input class of a parity-form view (signs and log-magnitudes, one pass each).
PARITY_CLASS_SECONDS = 4.0e-7

#: Seconds per party of one evaluation of the posterior rule's count recurrence (its loop over the parties).
POSTERIOR_PARTY_SECONDS = 8.0e-6
#: Seconds per transcript and pair of parties of that recurrence's products (k^2 / 2 a transcript).
POSTERIOR_PAIR_SECONDS = 3.0e-9

#: Peak bytes per symbol of a transcript while a worker decides it (its uint8 matrix, the int64 copy the rules
#: check, a group's view with one symbol substituted, the comparisons): 32 measured with tracemalloc at 20,001
#: parties x 200 repetitions, majority at epsilon 1, plus the uint8 matrix and its parts.
TRANSCRIPT_SYMBOL_BYTES = 34.0

_WORST_CASE_ALTERNATIVE = "use rule='average' for the party decisions (exact at any size), or fewer parties"


def _alternative(outputs: int, views: int) -> str:
    """What an exact rule's refusal suggests: the count engine only to the central observer (``views`` 1), the
    growth of many outputs only where there are more than two."""
    count = "the count engine for majority-type functions, " if views == 1 else ""
    growth = (" (an exact rule of k + 1 outputs, as sum's, grows as k^3 under zero-one, as k^1.5 under the error "
              "measures)" if outputs > 2 else "")
    return f"{count}the posterior rule with a Monte Carlo accuracy, or fewer parties{growth}"


def banded(group: Factor) -> bool:
    """Whether ``group``'s likelihood is a sparse band (a pure group above ``PURE_GROUP_DENSE_MAX``)."""
    return not group.mechanism.four_output and group.n > PURE_GROUP_DENSE_MAX


def _entries(group: Factor) -> int:
    """The likelihood entries of ``group`` the engine multiplies through: the band's nonzeros, or all."""
    return likelihood_nonzeros(group.n, group.mechanism) if banded(group) else (group.n + 1) * group.num_classes


def count_parity(function: BooleanFunction, k: int) -> bool:
    """Whether f of k parties is a function of the parity of the number of ones (XOR and its complement):
    with any measure mpdp names (symmetric on two outputs) its views are of parity form with beta = 0
    (:func:`mpdp.protocols.decision.parity.parity_form`), for the central observer and a party alike."""
    values = function.count_values(k)
    return (values is not None and function.output_size(k) == 2 and k >= 1 and int(values[0]) != int(values[1])
            and all(int(v) == int(values[s % 2]) for s, v in enumerate(values.tolist())))


def exact_rule_cost(groups: Sequence[Factor], outputs: int, views: int, parity: bool, *,
                    first_imports: bool = True, measure: str = "zero-one") -> CostEstimate:
    """The time and memory of the symmetric engine's exact average rule (or its exact accuracy) over
    ``groups`` (module docstring).

    Args:
        groups: the likelihood factors of the parties the observer does not know (nothing is built).
        outputs: |Y|. views: 1 (central observer) or 2 (a party). parity: the views are of parity form
            (:func:`count_parity`); the product form serves them where every epsilon is > 0.
        first_imports: count the first imports of what the likelihoods load (False: a caller that counts
            them once for many rules, :func:`mpdp.analysis.sweeps.sweep_cost.sweep_cost`).
        measure: the measure's name: ``absolute-error`` and ``squared-error`` are held as their formula (no
            table of |Y| columns, one group by its closed form); any other as its table.

    Raises:
        ParameterError: an unknown measure name.
    """
    formula = error_measure(measure, outputs) is not None
    k = sum(g.n for g in groups) + (views - 1)
    size = f"{k:,} {noun(k, 'party', 'parties')}, {outputs:,} outputs"
    classes = math.prod(g.num_classes for g in groups)
    inputs = math.prod(g.n + 1 for g in groups)
    if parity and all(g.mechanism.epsilon > 0 for g in groups):  # product form: nothing built
        return CostEstimate("the exact rule", size + ", parity product form",
                            views * (EXACT_CALL_SECONDS + (classes + inputs) * PARITY_CLASS_SECONDS),
                            8.0 * 8 * (classes + inputs), _alternative(outputs, views))
    # the products apply one group's likelihood at a time to the others' classes (kron_matvec); a band's
    # products with the gain are sparse ones, slower per entry than the dense (BLAS) ones
    sides = [max(g.n + 1, g.num_classes) for g in groups]
    dense = band = 0
    for i, g in enumerate(groups):
        entries = _entries(g) * math.prod(sides[:i] + sides[i + 1:])
        dense, band = (dense, band + entries) if banded(g) else (dense + entries, band)
    seconds = views * (EXACT_CALL_SECONDS + (dense + band) * EXACT_STEP_SECONDS
                       + outputs * (dense * EXACT_OUTPUT_STEP_SECONDS + band * BAND_OUTPUT_STEP_SECONDS))
    streamed = formula and len(groups) == 1  # the posterior mean or median, a band read as it is made
    if streamed:  # one pass over the entries for the decisions, one for the accuracy, a view
        seconds = views * (EXACT_CALL_SECONDS + band * ERROR_ENTRY_SECONDS + dense * ERROR_DENSE_ENTRY_SECONDS)
    likelihoods = 0.0
    for g in groups:
        if banded(g):
            nonzeros = likelihood_nonzeros(g.n, g.mechanism)
            # made once and held (CSR), or made twice a view and never held (blocks of ERROR_BLOCK entries)
            seconds += (2 * views if streamed else 1) * (BAND_ENTRY_SECONDS * nonzeros + BAND_ROW_SECONDS * (g.n + 1))
            likelihoods += (ERROR_BLOCK_BYTES if streamed
                            else (BAND_ENTRY_BYTES + (4.0 if nonzeros >= 2**31 else 0.0)) * nonzeros)
        else:
            likelihoods += 8.0 * g.num_classes * (g.n + 1)
    if first_imports:  # once, if not imported yet
        seconds += import_seconds(m for g in groups for m in lazy_imports(g.n, g.mechanism))
    side = max(classes, inputs)
    tables = (ERROR_VECTORS * 8.0 * side + 4 * 8.0 * side * min(outputs, max(1, BATCH_ENTRIES // side)) if formula
              else 4 * 8.0 * side * outputs)
    return CostEstimate("the exact rule", size, seconds, tables + likelihoods, _alternative(outputs, views))


def symmetric_rule_cost(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                        observer: int | None = None, *, first_imports: bool = True,
                        measure: str = "zero-one") -> CostEstimate | None:
    """:func:`exact_rule_cost` of the symmetric engine's groups for these parties (nothing built).

    Args:
        mechanisms: the k parties' randomized responses. function: f. observer: None or a party index
            (two views, one per own bit). first_imports, measure: as :func:`exact_rule_cost`.

    Returns:
        the estimate (seconds on one core, bytes), or None for a function that is not symmetric or more
        transcript classes than the engine holds (it refuses those itself, by their size).

    Raises:
        SizeLimitError: a four-output group larger than a likelihood factor holds
            (:func:`mpdp.protocols.decision.factors.check_group_size`).
    """
    groups = symmetric_groups(mechanisms, function, observer)
    if groups is None or math.prod(g.num_classes for g in groups) > SYMMETRIC_MAX_CLASSES:
        return None
    k = len(mechanisms)
    return exact_rule_cost(groups, function.output_size(k), 1 if observer is None else 2,
                           count_parity(function, k), first_imports=first_imports, measure=measure)


def _num_classes(n: int, mechanism: RandomizedResponse) -> int:
    """:attr:`mpdp.protocols.decision.factors.Factor.num_classes` of n parties sharing ``mechanism``, nothing built."""
    m = mechanism.num_symbols
    return m if n == 1 else n + 1 if m == 2 else (n + 1) * (n + 2) * (n + 3) // 6


def _worst_case_party_cost(mechanisms: tuple[RandomizedResponse, ...], function: BooleanFunction, observer: int,
                           exact: CostEstimate | None, parity: bool, classes: int, groups: int) -> tuple[float, float]:
    """Seconds and peak bytes of party ``observer``'s worst-case rule as the rule factory builds it: the exact
    engine's likelihoods (``exact``: :func:`exact_rule_cost` of its views, None where the symmetric engine does not
    hold their ``classes`` transcript classes) and, unless its views are of parity form (the average rule is
    worst-case optimal, ``exact`` all of it), an LP per own bit (:func:`mpdp.protocols.decision.worst_case.symmetric_lp_cost`).

    Raises:
        SizeLimitError: ``exact`` None (``groups`` distinct parameters); a ``CostLimitError``: what the factory
            refuses by its limits (the LP, or a parity rule's exact estimate), naming the average rule.
    """
    if exact is None:
        raise SizeLimitError("transcript classes of a party's view", classes, f"{SYMMETRIC_MAX_CLASSES:,}",
                             f"{_WORST_CASE_ALTERNATIVE}: with {groups:,} distinct (epsilon, delta) no engine holds a "
                             "party's worst-case LP")
    part = exact if parity else symmetric_lp_cost(mechanisms, function, observer)
    assert part is not None  # f is symmetric
    task = "a party's worst-case rule (the average rule: parity views)" if parity else "a party's worst-case LP"
    dataclasses.replace(part, task=task, alternative=_WORST_CASE_ALTERNATIVE).check()
    if parity:
        return exact.seconds, exact.memory_bytes
    return exact.seconds + part.seconds, max(exact.memory_bytes, part.memory_bytes)


def party_rules_cost(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, repetitions: int,
                     rounds: int, kind: str = "average") -> CostEstimate:
    """The time and memory, in one process, of every party's ``kind`` rule over ``mechanisms`` (one per group of
    equal mechanisms, module docstring) and of deciding ``rounds`` transcripts of ``repetitions`` rows with them
    (the transcript held :data:`TRANSCRIPT_SYMBOL_BYTES` a symbol while it is decided).

    A worst-case rule is the exact engine's likelihoods and one LP per own bit
    (:func:`mpdp.protocols.decision.worst_case.symmetric_lp_cost` of the group's representative, from the sizes
    alone), except for parity views (the average rule is worst-case optimal): it has no posterior fallback.

    Args:
        mechanisms: the k participants' randomized responses. function: a symmetric f.
        repetitions, rounds: the transcripts decided (>= 1 each). kind: ``average`` or ``worst-case``.

    Raises:
        SizeLimitError: a worst-case rule the rule factory would refuse: more transcript classes than the
            symmetric engine holds (distinct parameters), or (a ``CostLimitError``) its LP's estimate over the
            factory's limits (:data:`mpdp.protocols.numerics.cost.DEFAULT_TIME_LIMIT`, this machine's memory);
            the message names the average rule.
    """
    mechs = tuple(mechanisms)
    k = len(mechs)
    groups = group_members(mechs)
    outputs, parity = function.output_size(k), count_parity(function, k)
    seconds = memory = 0.0
    paths: set[str] = set()
    posterior_evaluation = POSTERIOR_PARTY_SECONDS * k + POSTERIOR_PAIR_SECONDS * repetitions * k * k / 2
    every = math.prod(_num_classes(int(ms.size), m) for m, ms in groups)  # exact integers: no per-group product of G
    for g, (mech, members) in enumerate(groups):
        n = int(members.size)
        classes = every // _num_classes(n, mech) * (_num_classes(n - 1, mech) if n > 1 else 1)
        cost = None
        if classes <= SYMMETRIC_MAX_CLASSES:  # then at most 24 groups: their factors are cheap
            others = [(m, int(ms.size) - (h == g)) for h, (m, ms) in enumerate(groups) if int(ms.size) - (h == g) > 0]
            factors = [Factor(tuple(range(size)), m) for m, size in others]
            cost = exact_rule_cost(factors, outputs, 2, parity)
        if kind == "worst-case":
            rule_seconds, rule_memory = _worst_case_party_cost(mechs, function, int(members[0]), cost, parity, classes,
                                                               len(groups))
            seconds, memory = seconds + rule_seconds, max(memory, rule_memory)
            paths.add("exact" if parity else "worst-case LP")
        elif cost is not None and cost.refusal() is None:
            seconds, memory = seconds + cost.seconds, max(memory, cost.memory_bytes)
            paths.add("exact")
        else:  # the factory's posterior rule: each round's transcripts, once per symbol and own bit
            seconds += rounds * 2 * mech.num_symbols * posterior_evaluation
            memory = max(memory, 8.0 * repetitions * k * 3)
            paths.add("posterior")
    size_text = (f"{k:,} {noun(k, 'party', 'parties')} in {len(groups):,} {noun(len(groups), 'group')} of equal "
                 f"parameters, {' and '.join(sorted(paths))} rules, {rounds:,} {noun(rounds, 'round')} of "
                 f"{repetitions:,} {noun(repetitions, 'repetition')}")
    return CostEstimate("the party decisions", size_text, seconds, memory + TRANSCRIPT_SYMBOL_BYTES * repetitions * k,
                        "fewer parties or fewer distinct (epsilon, delta), or no party decisions")
