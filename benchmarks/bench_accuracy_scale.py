"""``mpdp accuracy`` at scale beside a plain numpy/scipy baseline, in the same run (issue 23 item 1).

    python benchmarks/bench_accuracy_scale.py [--quick]

Rows (majority, zero-one measure, the central observer's optimal average rule):

* k = 10^6 identical parties at epsilon 1 (``--epsilon "1*1000000"``) and two groups of 5,000
  (``0.5*5000,1.5*5000``): the command, the API (``mpdp.accuracy`` in a fresh interpreter) and
  ``benchmarks/accuracy_baseline.py`` (independent: binomial pmfs of the counts and the likelier answer per
  count, scipy.stats only), each in its own process: CPU seconds (user + system) and peak RSS from
  ``os.wait4``, their ratios to the baseline, and whether the accuracies agree to 1e-9. Target: <= 1.5x.
* three parties at epsilon 0.5 (``--epsilon 0.5,0.5,0.5``) against ``python -c "import numpy,
  scipy.optimize"``. Target: <= 3x CPU.

--quick: k = 10^5 instead of 10^6. CPU seconds, not wall clock (the machine is shared); the load average
is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "benchmarks" / "accuracy_baseline.py"
API = ("import json, sys, mpdp; r = mpdp.accuracy([float(e) for g in sys.argv[1].split(',') for e in "
       "[g.split('*')[0]] * int(g.split('*')[1])], 'majority', rule='average'); "
       "print(json.dumps(r.to_dict()['rules']['average']['average_accuracy']))")


def _run(command: list[str]) -> tuple[str, float, float]:
    """(stdout, CPU seconds of the process, its peak RSS in MB)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{command} exited with {proc.returncode}")
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _accuracy_row(spec: str, sizes: str, epsilons: str) -> None:
    mpdp = [sys.executable, "-m", "mpdp", "accuracy", "--epsilon", spec, "--function", "majority",
            "--rule", "average", "--json", "--quiet"]
    out, cli_cpu, cli_rss = _run(mpdp)
    cli_value = json.loads(out[: out.rindex("}") + 1])["rules"]["average"]["average_accuracy"]
    out, api_cpu, api_rss = _run([sys.executable, "-c", API, spec])
    api_value = float(out)
    out, base_cpu, base_rss = _run([sys.executable, str(BASELINE), sizes, epsilons])
    base_value = float(out.split()[0])
    agree = max(abs(cli_value - base_value), abs(api_value - base_value))
    print(f"{spec:>20}  baseline {base_cpu:6.2f} s {base_rss:5.0f} MB | "
          f"mpdp accuracy {cli_cpu:6.2f} s ({cli_cpu / base_cpu:4.2f}x) {cli_rss:5.0f} MB ({cli_rss / base_rss:4.2f}x) | "
          f"mpdp.accuracy {api_cpu:6.2f} s ({api_cpu / base_cpu:4.2f}x) {api_rss:5.0f} MB ({api_rss / base_rss:4.2f}x) | "
          f"accuracy {cli_value:.12f}, |diff| {agree:.1e} {'ok' if agree <= 1e-9 else 'DISAGREE'}", flush=True)


def _small_row() -> None:
    _, base_cpu, base_rss = _run([sys.executable, "-c", "import numpy, scipy.optimize"])
    _, cli_cpu, cli_rss = _run([sys.executable, "-m", "mpdp", "accuracy", "--epsilon", "0.5,0.5,0.5",
                                "--function", "majority"])
    print(f"{'0.5,0.5,0.5':>20}  import numpy, scipy.optimize {base_cpu:5.2f} s {base_rss:4.0f} MB | "
          f"mpdp accuracy {cli_cpu:5.2f} s ({cli_cpu / base_cpu:4.2f}x) {cli_rss:4.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k = 10^5 instead of 10^6")
    args = parser.parse_args()
    k = 100_000 if args.quick else 1_000_000
    print(f"load average {os.getloadavg()[0]:.1f} (CPU seconds and peak RSS per process; ratios to the baseline)")
    _small_row()
    _accuracy_row("0.5*5000,1.5*5000", "5000,5000", "0.5,1.5")
    _accuracy_row(f"1*{k}", str(k), "1")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
