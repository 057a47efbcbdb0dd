"""The optimal worst-case decision rule: the linear program of 002 eqs. (4), (6) (000 eqs. (12), (14)).

    maximize_Q  min_x  sum_tau sum_y P(tau | x) w(f(x), y) Q[tau, y]
    subject to  sum_y Q[tau, y] = 1,  Q >= 0.

Solved on one observer view (:mod:`mpdp.protocols.decision.engines`): over transcript *classes* c and input classes
j (the symmetric reduction: an optimal Q can be averaged over the problem's symmetry group, which keeps
the value and makes Q constant on classes), and with the likelihood sum written as a chain of sparse
Kronecker stages instead of the dense 2^k x m^k matrix::

    Z_0 = Q[:, y],   Z_g = (I ⊗ F_g ⊗ I) Z_{g-1},   V_y = Z_G   (V_y[j] = P(decide y | x in class j))
    maximize t  s.t.  t <= sum_y gain[j, y] V_y[j]  for every j.

The last output is eliminated (Q[:, |Y|-1] = 1 - sum of the others, V likewise), so a binary f has a
single chain. The LP has O(G * classes * |Y|) variables and non-zeros instead of 2^k * m^k * |Y|.

HiGHS (``scipy.optimize.linprog``, interior point then dual simplex) solves it; a status other than optimal raises
:class:`SolverError`. The answer is then *certified*: the returned rule's worst case is evaluated
exactly (a lower bound), and the LP's dual multipliers give a prior over inputs whose Bayes-optimal
accuracy is an upper bound (weak duality: every rule's worst case is at most its average under any
prior). Both are reported with their gap.

Cost (:func:`lp_cost`, the shared :class:`mpdp.protocols.numerics.cost.CostEstimate`): the LP's size is known
before it is built -- V variables (the chains, ``(|Y| - 1) * sum_g |Z_g| + 1``) over J input classes --
and its time and memory follow two power laws fitted (least squares in log space) to 14 solves on the
project's 2-core machine under load, majority and XOR (the harder of the two kept), single parties
(2^8..2^12 transcripts), distinct four-output parties (4^5..4^8), and groups (2-4 groups of 6..100)::

    seconds ~ 5.5e-6 * V^1.04 * J^0.60     (under load; measured / model: 0.47 .. 4.5, rms factor 2.0)
    bytes   ~ 3.3e3  * V^0.79 * J^0.36     (measured / model: 0.45 .. 3.1)

The idle machine of docs/benchmarks.md solves the same LPs 2-10x faster (k = 10 pure: 0.5-2.6 s
against 4.8-30 s loaded; k = 12 majority 12.8 s), so the time model uses half the loaded coefficient,
2.75e-6: it refuses at the default 60 s what would take minutes, and an LP it underestimates is still
stopped at the time limit: under a limit HiGHS runs in a worker process killed at the deadline
(:mod:`mpdp.protocols.numerics.deadline`; HiGHS's own ``time_limit`` is passed too, but HiGHS 1.12 ignores it
while building IPX's starting basis), unless the estimate says the LP is far inside the limit and a
second (:func:`solves_in_process`): small queries do not pay the worker's 1-2 s start. E.g. 6 distinct four-output parties: V = 8,129, J = 64, model
0.4 s (measured 0.13-0.99 s); 12 distinct pure parties: V = 53,249, J = 4,096, model 33 s (measured
12.8 s idle, 19 s loaded majority; 189 s loaded XOR).
``benchmarks/bench_decision_rules.py`` prints the model next to each measured solve.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from mpdp.protocols.decision.engines import View, view_accuracy
from mpdp.protocols.decision.factors import Factor, lazy_imports, likelihood_nonzeros, symmetric_groups
from mpdp.protocols.errors import SolverError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import CostEstimate, PowerLaw, import_seconds
from mpdp.protocols.numerics.deadline import call_before
from mpdp.protocols.numerics.kron import Matrix, kron_matvec
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["LP_MEMORY", "LP_NONZERO_BYTES", "LP_SECONDS", "SINGLE_PARTY_LP_SCALE", "TIME_LIMIT_STATUS", "WorstCaseSolution", "bayes_upper_bound", "lp_cost", "lp_size",
           "solve_worst_case", "solves_in_process", "symmetric_lp_cost"]

_TIE = 1e-7  # decisions within this relative margin of a class's best score count as tied
_SNAP = 1e-6
_DROP = 1e-16  # likelihood entries below this are left out of the LP (the value is certified anyway)
#: HiGHS's interior point (with crossover) is 10x faster than its simplex on these sparse chains; the
#: dual simplex is the fallback when it does not report optimality.
_METHODS = ("highs-ipm", "highs-ds")
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
#: HiGHS's status kTimeLimit: the LP stopped at its time limit (:class:`mpdp.protocols.errors.SolverError`).
TIME_LIMIT_STATUS = 1
#: Seconds of one LP from (variables, input classes); the module docstring gives the measurements.
LP_SECONDS = PowerLaw(2.75e-6, (1.04, 0.60))
#: The share of :data:`LP_SECONDS` an LP over single-party factors takes (the general engine's, or distinct
#: parameters): measured / model 0.23-0.41 for majority of 6-11 distinct epsilons (0.05-3.4 s of CPU), 0.73-0.81
#: for the one-group LPs of majority at k = 30..1,000, at load ~4 (benchmarks/bench_engine_cost.py,
#: 2026-12-03; issue 23: the general LP's estimates ran ~2.5x high).
SINGLE_PARTY_LP_SCALE = 0.4
#: Peak bytes of one LP from (variables, input classes).
LP_MEMORY = PowerLaw(3.3e3, (0.79, 0.36))
#: Peak bytes of an LP per nonzero of its groups' likelihoods (HiGHS's matrices and factors): the symmetric
#: engine's one-group LPs, majority at epsilon 1, grew 59 MB at k = 1,000 (1.0e6 nonzeros), 240 MB at 3,000
#: (1.76e6) and 1.8 GB at 10,000 (12.7e6), where LP_MEMORY gave 16, 56 and 227 MB (2026-12-02).
LP_NONZERO_BYTES = 150.0
#: How far an LP may outrun :data:`LP_SECONDS` (measured / model up to 4.5 under load, against the idle
#: machine's coefficient): the factor :func:`solves_in_process` allows for.
LP_SPREAD = 20.0
#: Longest an LP solved in this process may take at ``LP_SPREAD`` times its estimate: the caller waits for
#: it anyway, and a signal is handled once HiGHS returns (within about a second).
IN_PROCESS_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class WorstCaseSolution:
    """An optimal worst-case rule for one view, with its certificate.

    Attributes:
        table: float64 (num_classes, |Y|), Q[c, y] = P(decide y | transcript class c); rows sum to one.
        value: the exact worst-case accuracy of ``table`` (min over input classes).
        upper_bound: Bayes accuracy under the dual prior: no rule has a larger worst case.
        status, message: HiGHS's status code and text.
    """

    table: NDArray[np.float64]
    value: float
    upper_bound: float
    status: int
    message: str

    @property
    def gap(self) -> float:
        """upper_bound - value (>= 0 up to rounding): how far from optimal the rule can be."""
        return self.upper_bound - self.value


def bayes_upper_bound(view: View, weights: NDArray[np.float64]) -> float:
    """``sum_c max_y sum_j weights[j] P(c | j) gain[j, y]``: the best accuracy under the prior ``weights``.

    Args:
        weights: float64 (num_inputs,), non-negative, summing to one.

    An upper bound on every rule's worst-case accuracy (the dual of 002 eq. (6))."""
    forward = [f.forward for f in view.factors]
    scores = kron_matvec(forward, view.gain * weights[:, None], transpose=True)
    return float(scores.max(axis=1).sum())


def _stage(factor: Matrix, left: int, right: int) -> sp.csr_matrix[np.float64]:
    dense = np.where(factor >= _DROP, factor, 0.0) if isinstance(factor, np.ndarray) else factor
    return sp.kron(sp.kron(sp.identity(left, format="csr"), sp.csr_matrix(dense)),
                   sp.identity(right, format="csr"), format="csr")


def _chain_sizes(factors: Sequence[Factor]) -> list[int]:
    """The sizes |Z_0| .. |Z_G| of one chain: stage g turns factor g's classes into its input classes."""
    dims = [f.num_classes for f in factors]
    sizes = [math.prod(dims)]
    for g, f in enumerate(factors):
        dims[g] = f.n + 1
        sizes.append(math.prod(dims))
    return sizes


def _chain(view: View) -> tuple[list[sp.csr_matrix[np.float64]], list[int]]:
    """The stage operators and the sizes Z_0 .. Z_G of one chain."""
    sizes = _chain_sizes(view.factors)
    ops = []
    for g, f in enumerate(view.factors):  # input classes of the factors before g, classes of those after
        left = math.prod(x.n + 1 for x in view.factors[:g])
        ops.append(_stage(f.forward, left, math.prod(x.num_classes for x in view.factors[g + 1:])))
    return ops, sizes


def lp_size(view: View) -> tuple[int, int]:
    """(variables, input classes) of the worst-case LP of ``view``, without building it."""
    return (view.num_outputs - 1) * sum(_chain_sizes(view.factors)) + 1, view.num_inputs


def solves_in_process(size: tuple[int, int], time_limit: float | None) -> bool:
    """Whether the LP of ``size`` (:func:`lp_size`) is solved in this process rather than in the deadline
    worker (:mod:`mpdp.protocols.numerics.deadline`, ~1-2 s to start): with no time limit, or when ``LP_SPREAD``
    times its estimated seconds fits both ``time_limit`` and ``IN_PROCESS_SECONDS`` (a three-party LP:
    ~1e-4 s estimated, 1.4 ms measured). Larger LPs may meet the HiGHS 1.12 bug that ignores its limit."""
    if time_limit is None:
        return True
    return LP_SPREAD * LP_SECONDS(*size) <= min(time_limit, IN_PROCESS_SECONDS)


def lp_cost(views: Sequence[View]) -> CostEstimate:
    """The estimated time and memory of the worst-case LPs of ``views`` (one per own bit of a party
    observer), from :data:`LP_SECONDS` and :data:`LP_MEMORY` (calibration in the module docstring).

    The alternative named is the average rule, exact at any size (002 eq. (5))."""
    factors = [f for v in views[:1] for f in v.factors]
    return _lp_cost([lp_size(v) for v in views if v.num_outputs > 1], factors)


def symmetric_lp_cost(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                      observer: int | None = None, *, first_imports: bool = True) -> CostEstimate | None:
    """:func:`lp_cost` of the symmetric engine's views from the sizes alone: the groups of parties with
    equal parameters (their likelihoods not built), |Y| and the input classes (the product over groups
    of n_g + 1), no measure and no gain table (a (k + 1)^2 float64 matrix for ``sum``).

    Args:
        mechanisms: the k parties' randomized responses. function: f. observer: None or a party index.
        first_imports: count the first imports of what the LP loads (False: a caller that counts them once
            for many LPs, :func:`mpdp.analysis.sweeps.sweep_cost.sweep_cost`).

    Returns:
        the estimate, or None for a function that is not symmetric (``count_values(k)`` None).

    Raises:
        SizeLimitError: a group larger than a likelihood factor holds
            (:func:`mpdp.protocols.decision.factors.group_parties`).
    """
    groups = symmetric_groups(mechanisms, function, observer)
    if groups is None:
        return None
    outputs = function.output_size(len(mechanisms))
    size = ((outputs - 1) * sum(_chain_sizes(groups)) + 1, math.prod(f.n + 1 for f in groups))
    return _lp_cost([size] * (1 if observer is None else 2) if outputs > 1 else [], groups, first_imports)


def _lp_cost(sizes: Sequence[tuple[int, int]], factors: Sequence[Factor], first_imports: bool = True) -> CostEstimate:
    """The time and memory of LPs of (variables, input classes) ``sizes`` over ``factors``, with (unless
    ``first_imports`` is False) the first imports of HiGHS's scipy.optimize and of the factors' likelihoods
    where they are not imported yet; memory the larger of :data:`LP_MEMORY` and :data:`LP_NONZERO_BYTES` per
    nonzero of the likelihoods."""
    imports = import_seconds(["scipy.optimize", *(m for f in factors for m in lazy_imports(f.n, f.mechanism))]
                             if first_imports else [])
    nonzeros = sum(likelihood_nonzeros(f.n, f.mechanism) for f in factors)
    scale = SINGLE_PARTY_LP_SCALE if factors and all(f.n == 1 for f in factors) else 1.0
    variables = max((v for v, _ in sizes), default=1)
    inputs = max((j for _, j in sizes), default=1)
    return CostEstimate(
        "the worst-case LP", f"{variables:,} variables over {inputs:,} input classes"
        + (f", {len(sizes)} LPs" if len(sizes) > 1 else ""),
        scale * sum(LP_SECONDS(v, j) for v, j in sizes) + (imports if sizes else 0.0),
        max([*(LP_MEMORY(v, j) for v, j in sizes), LP_NONZERO_BYTES * nonzeros] if sizes else [0.0]),
        "use the average rule (exact at any size), or allow more time (time_limit=SECONDS)")


def _clean(q: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(q, 0.0, None)
    rows: NDArray[np.float64] = q / q.sum(axis=1, keepdims=True)
    return rows


def solve_worst_case(view: View, time_limit: float | None = None) -> WorstCaseSolution:
    """Solve the worst-case LP of one view (002 eq. (6) central, eq. (4) party with own bit fixed).

    Args:
        view: from :func:`mpdp.protocols.decision.engines.build_problem`.
        time_limit: seconds for HiGHS in all (its fallback method gets what is left), or None. Under a
            limit HiGHS runs in a worker process killed at the deadline (:mod:`mpdp.protocols.numerics.deadline`),
            the solution otherwise identical, unless the LP is small enough to solve in this process
            (:func:`solves_in_process`).

    Returns:
        the rule and its certificate (:class:`WorstCaseSolution`).

    Raises:
        SolverError: HiGHS did not reach optimality (status and message attached; status 1 and
            "Time limit reached" at the time limit, -1 if its process died).
    """
    num_y = view.num_outputs
    n_c, n_j = view.num_classes, view.num_inputs
    if num_y == 1:
        table = np.ones((n_c, 1))
        acc = view_accuracy(view, table)
        return WorstCaseSolution(table, float(acc.min()), float(acc.min()), 0, "trivial: |Y| = 1")
    ops, sizes = _chain(view)
    chain_len = sum(sizes)
    chains = num_y - 1
    n_var = chains * chain_len + 1  # the last variable is t
    eq_blocks, ub_rows = [], []
    for y in range(chains):
        base = y * chain_len
        offset = base
        for g, op in enumerate(ops):
            nxt = offset + sizes[g]
            height = op.shape[0]
            block = sp.hstack([sp.csr_matrix((height, offset)), -op, sp.identity(height, format="csr"),
                               sp.csr_matrix((height, n_var - nxt - height))], format="csr")
            eq_blocks.append(block)
            offset = nxt
    # t - sum_y (gain[j, y] - gain[j, last]) V_y[j] <= gain[j, last]
    diff = view.gain[:, :-1] - view.gain[:, -1:]
    cols, vals = [], []
    for y in range(chains):
        start = y * chain_len + chain_len - n_j
        cols.append(start + np.arange(n_j))
        vals.append(-diff[:, y])
    rows = np.tile(np.arange(n_j), chains)
    a_t = sp.csr_matrix((np.concatenate(vals), (rows, np.concatenate(cols))), shape=(n_j, n_var))
    a_t = a_t + sp.csr_matrix((np.ones(n_j), (np.arange(n_j), np.full(n_j, n_var - 1))),
                              shape=(n_j, n_var))
    ub_rows.append(a_t)
    b_ub = [view.gain[:, -1]]
    if chains > 1:  # sum_{y < last} Q[c, y] <= 1
        q_cols = np.concatenate([y * chain_len + np.arange(n_c) for y in range(chains)])
        ub_rows.append(sp.csr_matrix((np.ones(q_cols.size), (np.tile(np.arange(n_c), chains), q_cols)),
                                     shape=(n_c, n_var)))
        b_ub.append(np.ones(n_c))
    a_eq = sp.vstack(eq_blocks, format="csr") if eq_blocks else None
    b_eq = np.zeros(a_eq.shape[0]) if a_eq is not None else None
    bounds = np.zeros((n_var, 2))
    bounds[:, 1] = 1.0
    bounds[-1] = (-np.inf, np.inf)
    cost = np.zeros(n_var)
    cost[-1] = -1.0
    lp = (cost, sp.vstack(ub_rows, format="csr"), np.concatenate(b_ub), a_eq, b_eq, bounds)
    if time_limit is None or solves_in_process(lp_size(view), time_limit):
        status, message, x, marginals = _highs(*lp, time_limit)
    else:  # HiGHS 1.12 does not always stop at its limit (mpdp.protocols.numerics.deadline): a worker process does
        try:
            status, message, x, marginals = call_before(_highs, (*lp, float(time_limit)), float(time_limit))
        except TimeoutError as exc:  # HiGHS's status 1 (kTimeLimit), as if it had stopped itself
            raise SolverError(TIME_LIMIT_STATUS, f"Time limit reached: {exc}") from exc
        except ChildProcessError as exc:
            raise SolverError(-1, str(exc)) from exc
    if status != 0 or x is None or marginals is None:
        raise SolverError(status, message)
    q = np.empty((n_c, num_y))
    for y in range(chains):
        q[:, y] = x[y * chain_len: y * chain_len + n_c]
    q[:, -1] = 1.0 - q[:, :-1].sum(axis=1)
    table = _clean(q)
    value = float(view_accuracy(view, table).min())
    duals = np.abs(marginals[:n_j])
    total = duals.sum()
    weights = duals / total if total > 0 else view.prior
    upper = bayes_upper_bound(view, weights)
    # the interior point stops ~1e-9 inside the vertices: snap near-0/1 entries, and re-solve on the
    # support the dual allows; keep whichever rule is exactly best
    snapped = _clean(np.where(table < _SNAP, 0.0, np.where(table > 1.0 - _SNAP, 1.0, table)))
    candidates = [(table, value), (snapped, float(view_accuracy(view, snapped).min()))]
    polished = _polish(view, weights)
    if polished is not None:
        candidates.append(polished)
    table, value = max(candidates, key=lambda tv: tv[1])
    return WorstCaseSolution(table, value, upper, status, message)


def _highs(
    cost: NDArray[np.float64], a_ub: sp.sparray | sp.spmatrix, b_ub: NDArray[np.float64],
    a_eq: sp.sparray | sp.spmatrix | None, b_eq: NDArray[np.float64] | None, bounds: NDArray[np.float64],
    time_limit: float | None,
) -> tuple[int, str, NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """HiGHS on the LP ``min cost @ x, a_ub @ x <= b_ub, a_eq @ x = b_eq, bounds``: interior point, then
    dual simplex if that did not reach optimality, both within ``time_limit`` seconds in all (or None).

    Returns:
        (status, message, x, marginals of the ``a_ub`` rows); x and marginals are None unless optimal.

    Raises:
        SolverError: scipy refused the input (status -1).
    """
    from scipy.optimize import linprog  # imported here: ~25 MB and 0.6 s the average-rule queries skip

    options: dict[str, float] = dict(_HIGHS_OPTIONS)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    status, message = 1, "Time limit reached before HiGHS started"
    for method in _METHODS:
        if deadline is not None:  # the fallback gets what the first method left of the time limit
            options["time_limit"] = max(deadline - time.monotonic(), 0.0)
            if options["time_limit"] == 0.0:
                break
        try:
            # scipy-stubs overloads linprog per literal method with private TypedDict options and
            # (min, max) pairs; scipy documents method as str, options as dict, bounds as a sequence
            res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq,  # type: ignore[call-overload]
                          b_eq=b_eq, bounds=bounds, method=method, options=options)
        except ValueError as exc:  # scipy's input validation
            raise SolverError(-1, str(exc)) from exc
        if res.status == 0:
            return 0, str(res.message), res.x, np.asarray(res.ineqlin.marginals, dtype=np.float64)
        status, message = int(res.status), str(res.message)
    return status, message, None, None


def _polish(
    view: View, weights: NDArray[np.float64], max_free: int = 128
) -> tuple[NDArray[np.float64], float] | None:
    """Re-solve on the support the dual prior allows, in a small well-scaled LP.

    Complementary slackness: an optimal Q puts mass only on decisions that are Bayes-optimal under the
    optimal prior. Classes with one such decision are fixed; the LP over the (few) tied classes is
    dense but small and recovers the optimum to rounding where the large LP stops at its tolerance.
    Returns (table, exact worst case) or None when too many classes are tied.
    """
    forward = [f.forward for f in view.factors]
    scores = kron_matvec(forward, view.gain * weights[:, None], transpose=True)
    top = scores.max(axis=1, keepdims=True)
    near = scores >= top - _TIE * np.abs(scores).max(axis=1, keepdims=True)
    tied = np.flatnonzero(near.sum(axis=1) > 1)
    table = np.zeros(scores.shape)
    table[np.arange(scores.shape[0]), scores.argmax(axis=1)] = 1.0
    if tied.size == 0:
        return table, float(view_accuracy(view, table).min())
    if tied.size > max_free:
        return None
    fixed_table = table.copy()
    fixed_table[tied] = 0.0
    fixed = view_accuracy(view, fixed_table)
    # columns P(c | j) of the tied classes: unit vectors through the forward transform, in batches
    cols = np.empty((view.num_inputs, tied.size))
    step = max(1, (1 << 22) // scores.shape[0])
    for a in range(0, tied.size, step):
        part = tied[a:a + step]
        unit = np.zeros((scores.shape[0], part.size))
        unit[part, np.arange(part.size)] = 1.0
        cols[:, a:a + part.size] = kron_matvec(forward, unit)
    pairs = [(t, y) for t in range(tied.size) for y in np.flatnonzero(near[tied[t]])]
    n_var = len(pairs) + 1
    a_ub = np.zeros((view.num_inputs, n_var))
    for v, (t, y) in enumerate(pairs):
        a_ub[:, v] = -cols[:, t] * view.gain[:, y]
    a_ub[:, -1] = 1.0
    a_eq = np.zeros((tied.size, n_var))
    for v, (t, _) in enumerate(pairs):
        a_eq[t, v] = 1.0
    cost = np.zeros(n_var)
    cost[-1] = -1.0
    bounds = [(0.0, 1.0)] * len(pairs) + [(None, None)]
    from scipy.optimize import linprog  # imported here: as in _highs

    # scipy-stubs types options as a private TypedDict; scipy documents a plain dict
    res = linprog(cost, A_ub=a_ub, b_ub=fixed, A_eq=a_eq,  # type: ignore[call-overload]
                  b_eq=np.ones(tied.size), bounds=bounds, method="highs-ds", options=_HIGHS_OPTIONS)
    if res.status != 0:
        return None
    table[tied] = 0.0
    for v, (t, y) in enumerate(pairs):
        table[tied[t], y] = max(res.x[v], 0.0)
    table = _clean(table)
    return table, float(view_accuracy(view, table).min())
