# %% [markdown]
# # Randomized response, the optimal decision rule, and the House: a teacher's notebook
#
# A percent-format notebook (open it in Jupyter with jupytext, or run it as a script:
# `python examples/teacher.py`). Figures go to `$MPDP_EXAMPLES_OUT` (default `example-output/`); in a
# notebook, the cells also show them. `MPDP_EXAMPLES_QUICK=1` runs a small version (the test suite does).
#
# 1. Randomized response: each party keeps its bit with probability e^eps / (1 + e^eps).
# 2. The optimal decision rule of the central observer (paper 002) and its exact accuracy.
# 3. Accuracy against epsilon on the 1984 House votes: exact theory per bill, then a live run over MQTT
#    that measures it, and the run's report page.

# %%
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import mpdp
from mpdp.analysis.plot_style import EPSILON_LABEL, new_axes, save_figure, series_style
from mpdp.analysis.theory.theory import observer_accuracy_on_input
from mpdp.parties.session.datasets import load_dataset
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

QUICK = os.environ.get("MPDP_EXAMPLES_QUICK") == "1"
OUT = Path(os.environ.get("MPDP_EXAMPLES_OUT", "example-output"))
OUT.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(2024)

# %% [markdown]
# ## 1. Randomized response
#
# A party holding bit b reports b with probability p = e^eps / (1 + e^eps) and 1 - b otherwise. The
# likelihood ratio of any report between b = 1 and b = 0 is p / (1 - p) = e^eps: that is
# eps-differential privacy, exactly.

# %%
epsilon = 1.0
rr = RandomizedResponse(epsilon)
print(f"epsilon = {epsilon}: keep the bit with probability p = {rr.p_truth:.4f}")
print(f"log(p / (1 - p)) = {np.log(rr.p_truth / (1 - rr.p_truth)):.12f}  (the privacy loss bound, nats)")

reports = rr.sample(1, 20_000, rng)  # a party holding 1 reports 20,000 times
print(f"20,000 reports of the bit 1: {reports.mean():.4f} of them are 1 (p = {rr.p_truth:.4f})")
# Many parties: the mean of the reports is biased toward 1/2; invert the channel to estimate the true mean.
bits = rng.integers(0, 2, 5_000)
noisy = np.array([rr.sample(int(b), 1, rng)[0] for b in bits])
estimate = (noisy.mean() - (1 - rr.p_truth)) / (2 * rr.p_truth - 1)
print(f"true mean {bits.mean():.4f}, reported mean {noisy.mean():.4f}, debiased estimate {estimate:.4f}")

# %% [markdown]
# ## 2. The optimal decision rule
#
# The central observer sees k reports and decides f(x). The rule that maximizes the average accuracy
# (x uniform) decides the f-value with the largest posterior (002 eq. (4)); the worst-case rule solves a
# linear program (eq. (6)). `mpdp.accuracy` computes both and their exact accuracies.

# %%
rules = mpdp.accuracy(epsilon=1.0, parties=5, function="majority")
print(rules)
figure = rules.plot()
save_figure(figure, OUT / "teacher-rules.png")
figure

# %% [markdown]
# ## 3. Accuracy against epsilon on the House (1984, 435 members, 16 bills)
#
# For each bill, the exact probability that the observer's optimal rule decides the true outcome
# (passed or failed) given the members' true votes, as epsilon grows.

# %%
house = load_dataset("house-votes-84")
epsilons = np.geomspace(0.02, 1.0, 4 if QUICK else 10)
bills = range(3 if QUICK else house.num_rounds)
zero_one = accuracy_measure("zero-one", 2)
curves = {}
for r in bills:
    voting = house.bits[:, r] >= 0
    x = house.bits[voting, r].astype(np.int64)
    curves[house.round_names[r]] = [
        observer_accuracy_on_input([RandomizedResponse(float(e))] * x.size, x, parse_function("majority"), zero_one).value
        for e in epsilons]
figure, ax = new_axes(None, (8.0, 5.0))
for i, (name, values) in enumerate(curves.items()):
    ax.plot(epsilons, values, **series_style(i), markersize=3, label=name)
ax.set_xscale("log")
ax.set_xlabel(EPSILON_LABEL)
ax.set_ylabel("P(observer's decision = outcome)")
ax.set_title("House 1984: exact accuracy of the optimal rule, per bill")
ax.legend(fontsize=6, ncol=2)
save_figure(figure, OUT / "teacher-house-theory.png")
for name, values in list(curves.items())[:3]:
    print(f"{name}: " + ", ".join(f"eps {e:.3g}: {v:.3f}" for e, v in zip(epsilons, values)))
figure

# %% [markdown]
# ### Measured live
#
# The same protocol for real: every member is an MQTT client in a worker process, publishes its
# randomized reports over a broker (the embedded one), and the observer decides each bill. `mpdp.simulate`
# compares each bill's measured accuracy with the exact theory; `mpdp.report` turns the run into a page.
# (In a script, a live run must sit under `if __name__ == "__main__":`; in Jupyter that is true too.)

# %%
if __name__ == "__main__":
    run_dir = OUT / "teacher-run"
    if QUICK:  # 12 members, 3 bills: seconds
        live = mpdp.simulate(votes=house.bits[:12, :3], epsilon=1.0, repetitions=20, seed=3, broker="embedded",
                             workers=1, out=run_dir, force=True, progress=False)
    else:
        live = mpdp.simulate(dataset="house-votes-84", epsilon=1.0, repetitions=50, seed=3, broker="embedded",
                             out=run_dir, force=True)
    print(live)
    page = mpdp.report(run_dir)
    print(f"report: {page.html}")
