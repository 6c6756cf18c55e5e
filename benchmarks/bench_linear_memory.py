"""Peak memory and time of the exact head and its online form, for the page "Exact attention in linear memory".

The page reads what this benchmark writes, ``benchmarks/linear_memory.json``
(committed, with the machine and the date): the peak bytes each head
allocates during one call (:mod:`tracemalloc`, above what was held before:
the inputs are made first), and the median processor time of a few calls,
against the number of tokens, on the book's noisy sine at the book's
temperature, in a child process with OpenBLAS on one thread.

* the exact head (:func:`selfattention.gaussian_head`), from 256 tokens
  doubling to the largest ``n`` the memory guard lets it double to
  (8,192: 16,384 tokens are refused);
* the online head (:func:`selfattention.online_softmax.online_gaussian_head`,
  256 keys a block), from 256 tokens doubling to :data:`MAX_N`, the largest
  whose ``n**2`` pairs the default work limit lets through.

``python -m benchmarks linear_memory`` runs it; it also executes the page
and checks its 20-s goal.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tools.measure import peak_bytes

HERE = Path(__file__).resolve().parent
RESULTS_JSON = HERE / "linear_memory.json"
#: The smallest and largest n; 2**15 squared is the default work limit, 2**30 pairs.
MIN_N, MAX_N = 256, 2**15
#: Calls per median.
RUNS = 3
#: The page that reads the results, its executions and their goal (seconds, on the book's 2 cores).
STEM = "linear-memory"
RUNS_PAGE = 3
GOAL_S = 20.0


def _heads() -> dict:
    """name -> (description, the head called on a signal and positions)."""
    import selfattention as sa
    from selfattention import defaults
    from selfattention.online_softmax import BLOCK, online_gaussian_head

    tau = defaults.TEMPERATURE
    return {
        "exact": ("the exact head", lambda s, p: sa.gaussian_head(s, p, tau)),
        "online": (f"the online head, {BLOCK} keys a block", lambda s, p: online_gaussian_head(s, p, tau)),
    }


def measure_heads() -> dict:
    """Peak bytes and median processor seconds of each head, doubling n while the guards let it through."""
    import selfattention as sa
    from selfattention import defaults, memory
    from selfattention.cost import largest_n

    found = {}
    for name, (what, head) in _heads().items():
        ns, cpu, peak = [], [], []
        n = MIN_N
        while n <= MAX_N:
            positions, _, noisy = sa.noisy_sine(n, defaults.SIGMA, rng=defaults.SEED)
            call = functools.partial(head, noisy, positions)
            peak.append(peak_bytes(call))
            times = []
            for _ in range(RUNS):
                start = time.process_time()
                call()
                times.append(time.process_time() - start)
            ns.append(n), cpu.append(statistics.median(times))
            print(f"{name}: n = {n}: {peak[-1]:,} bytes, {cpu[-1]:.3f} s", flush=True)
            if name == "exact" and 2 * n > largest_n(memory.get_limit()):
                break
            n *= 2
        found[name] = {"what": what, "n": ns, "seconds": cpu, "peak_bytes": peak}
    return found


def measure() -> dict:
    """Every measurement, with the machine, the date and the load (run in the child process)."""
    from benchmarks.__main__ import machine

    load = os.getloadavg()[0]
    methods = measure_heads()
    return {
        "machine": machine(),
        "date": _dt.date.today().isoformat(),
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
        "clock": f"peak bytes of one call (tracemalloc); processor time of one thread, median of {RUNS} calls",
        "methods": methods,
    }


def main() -> str:
    from benchmarks import check_goals, execute_chapter

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "benchmarks.bench_linear_memory"], check=True, env=env,
                   cwd=HERE.parent)
    data = json.loads(RESULTS_JSON.read_text())
    runs = [execute_chapter(STEM) for _ in range(RUNS_PAGE)]
    median = statistics.median(runs)
    text = "\n".join([
        f"Written to `benchmarks/{RESULTS_JSON.name}` (read by book/{STEM}.md); {data['clock']}; "
        f"load average {data['load'][0]} before, {data['load'][1]} after.",
        "",
        "| head | n | peak bytes at the largest n | seconds at the largest n |",
        "|---|---|---:|---:|",
        *[f"| {e['what']} | {e['n'][0]} to {e['n'][-1]} | {e['peak_bytes'][-1]:,} | {e['seconds'][-1]:.3g} |"
          for e in data["methods"].values()],
        "",
        f"The page executed {RUNS_PAGE} times in a fresh kernel (kernel start included): median {median:.1f} s "
        f"(runs {', '.join(f'{r:.1f}' for r in runs)} s; goal <= {GOAL_S:.0f} s).",
    ])
    return check_goals(text, [] if median <= GOAL_S else [f"the page executes in {median:.1f} s, over {GOAL_S:.0f} s"])


if __name__ == "__main__":
    RESULTS_JSON.write_text(json.dumps(measure(), indent=1) + "\n")
    sys.exit(0)
