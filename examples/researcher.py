# %% [markdown]
# # Sweeps, composition, central against distributed: a researcher's notebook
#
# A percent-format notebook (jupytext; or `python examples/researcher.py`). Figures, tables and a report
# page go to `$MPDP_EXAMPLES_OUT` (default `example-output/`). `MPDP_EXAMPLES_QUICK=1` runs a small
# version (the test suite does). No broker is needed: everything here is exact theory or the vectorized
# Monte Carlo engine.
#
# 1. A sweep: accuracy of majority against epsilon, exact theory against Monte Carlo, a verdict per point;
#    its report page.
# 2. Composition: what k answers cost, by the exact optimal composition (paper 000) and the classical bounds.
# 3. Central against distributed: the optimal central mechanism (a trusted curator, paper 001) against
#    randomized response with the optimal rule (paper 002).

# %%
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

import mpdp
from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.theory.central_vs_distributed import compare_majority, plot_comparison

QUICK = os.environ.get("MPDP_EXAMPLES_QUICK") == "1"
OUT = Path(os.environ.get("MPDP_EXAMPLES_OUT", "example-output"))
OUT.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## 1. A sweep over epsilon
#
# Each point: the exact average and worst-case accuracy of the optimal rules (002 eqs. (1), (3)) for the
# central observer and for party 0, the Monte Carlo measurement with its Clopper-Pearson interval, and an
# exact binomial test at level alpha / points (Bonferroni). Same seed, same numbers.

# %%
sweep = mpdp.sweep("0.05:2:5" if QUICK else "0.05:2:20", parties=101, samples=5_000 if QUICK else 100_000, seed=0)
print(sweep)
print("every point consistent with theory:", sweep.consistent)
frame = sweep.to_frame()  # pandas (the optional extra mpdp[frame])
print(frame[["epsilon", "rule", "observer", "theoretical_accuracy", "empirical_accuracy", "consistent"]].head(8).to_string())
save_figure(sweep.plot(), OUT / "researcher-sweep.png")

# The sweep's document is what `mpdp sweep --out DIR` writes as sweep.json: write it, and make its report.
sweep_dir = OUT / "researcher-sweep"
sweep_dir.mkdir(exist_ok=True)
(sweep_dir / "sweep.json").write_text(json.dumps(sweep.to_dict(), indent=1))
page = mpdp.report(sweep_dir)
print(f"report page: {page.html} ({page.rows} points)")
sweep.plot()

# %% [markdown]
# ## 2. Composition: the price of k answers
#
# A party answering k rounds with (epsilon, delta) randomized response spends, by the optimal composition
# theorem (000 Theorem 3.3), less than k * epsilon: the exact epsilon_tilde at delta_total = 1 - (1 - delta)^k
# (1 - delta_tilde) against the basic and advanced bounds.

# %%
composition = mpdp.compose(epsilon=0.1, delta=0.0, k=30, delta_slack=1e-5)
print(composition)
for row in composition.rows():
    print(f"  {row['guarantee']:>28}: epsilon {row['epsilon']:.4f}")
save_figure(composition.plot(), OUT / "researcher-composition.png")
heterogeneous = mpdp.compose(epsilon=[0.1] * 10 + [0.5] * 5, delta=0.0, delta_slack=1e-6)
print(heterogeneous)
composition.plot()

# %% [markdown]
# ## 3. Central against distributed, for majority
#
# A trusted curator who sees every bit can release majority with the optimal (epsilon, delta) mechanism of
# 001; without one, each party randomizes its own bit and the observer decides by 002's rule. The gap is
# the price of distrust; it grows with k.

# %%
epsilons = np.geomspace(0.05, 2.0, 5 if QUICK else 12)
sizes = (11, 51) if QUICK else (11, 51, 201)
rows = [compare_majority(k, float(e), 0.0) for k in sizes for e in epsilons]
for row in rows[:: len(epsilons)]:
    print(f"k = {row.voters}, epsilon {row.epsilon:.3g}: central {row.central_average:.4f}, "
          f"distributed {row.distributed_average:.4f}")
figure = plot_comparison(rows)
save_figure(figure, OUT / "researcher-central-vs-distributed.png")
figure
