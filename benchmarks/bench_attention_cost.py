"""Times of the exact head and its cheaper forms against the number of tokens, for the chapter "What attention costs".

The chapter draws what a build can compute the same way every time
(operations and bytes, counted) and reads the times from the file this
benchmark writes, ``benchmarks/attention_cost.json``, committed with the
machine and the date it was measured on: a time measured during the build
would change every build. ``python -m benchmarks attention_cost`` runs it.

What is timed, on the book's noisy sine at the book's temperature, each in
a child process with OpenBLAS on one thread (as the book's kernels run):

* the exact head (:func:`selfattention.gaussian_head`) from 256 tokens
  doubling until one call takes :data:`LIMIT_S`, with its peak memory
  (:mod:`tracemalloc`);
* the random-feature head with 64 and with 512 frequencies, the positive
  head with 128 spread centres, and the window head with 257 keys a query,
  from 256 tokens until a call takes :data:`LIMIT_S` (or :data:`MAX_N`);
* decoding ``n`` tokens without and with a key-value cache.

Each time is the median of three to five calls, as processor time of the
one thread (``time.process_time``: user and system), which other
processes on a busy machine inflate less than the wall clock; the
wall-clock medians are recorded beside it. The exact head stops at the
largest ``n`` whose double the memory guard refuses (8,192: 16,384
tokens need 6 GiB); the others once a call takes :data:`LIMIT_S`
seconds of processor time, or at :data:`MAX_N` tokens.
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
RESULTS_JSON = HERE / "attention_cost.json"
#: Stop doubling ``n`` once a call takes this many seconds of processor time.
LIMIT_S = 2.0
#: The largest ``n`` tried for the linear-time heads.
MAX_N = 2**21
#: The smallest ``n`` tried.
MIN_N = 256
#: Calls per median: at most :data:`RUNS`, at least :data:`MIN_RUNS` (more while they take under 10 s).
RUNS = 5
MIN_RUNS = 3
#: The decoders' lengths: recomputing costs n**3 / 3 scores, so it stops sooner.
DECODING_N = (64, 128, 256, 512, 1024)
#: The seed of the frequencies and centres.
SEED = 13
#: The chapter that reads the results, its executions and their goal (seconds, on the book's 2 cores).
STEM = "attention-cost"
RUNS_CHAPTER = 3
GOAL_S = 20.0


def _timed(call) -> tuple[float, float]:
    """(median processor seconds, median wall seconds) of ``call()``."""
    cpu, wall = [], []
    for _ in range(RUNS):
        c0, w0 = time.process_time(), time.perf_counter()
        call()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        if len(cpu) >= MIN_RUNS and sum(wall) > 10.0:
            break
    return statistics.median(cpu), statistics.median(wall)


def _heads() -> dict:
    """name -> (description, its D or keys (None for the exact head), the head called on a signal and positions)."""
    import selfattention as sa
    from selfattention import defaults, positive_features, random_features, window

    tau = defaults.TEMPERATURE

    def fourier(count):
        omega = random_features.gaussian_frequencies(count, tau, SEED)
        return lambda s, p: random_features.random_feature_head(s, p, omega)

    def spread(s, p):
        centres = positive_features.spread_centres(128, p, tau, SEED)
        return positive_features.positive_feature_head(s, p, tau, centres)

    return {
        "exact": ("the exact head", None, lambda s, p: sa.gaussian_head(s, p, tau)),
        "fourier-64": ("cosine features, D = 64 (128 columns)", 64, fourier(64)),
        "fourier-512": ("cosine features, D = 512 (1024 columns)", 512, fourier(512)),
        "spread-128": ("positive features, D = 128 spread centres", 128, spread),
        "window-257": ("a window of 257 keys", 257,
                       lambda s, p: window.window_head(s, p, tau, 128 / (p.size - 1) * (1 + 1e-9))),
    }


def measure_heads() -> dict:
    """Times (and peak bytes, to 65,536 tokens) of each head, doubling n until a call takes LIMIT_S."""
    import selfattention as sa
    from selfattention import defaults, memory
    from selfattention.cost import largest_n

    found = {}
    for name, (what, count, head) in _heads().items():
        ns, cpu, wall, peak = [], [], [], []
        n = MIN_N
        while n <= MAX_N:
            positions, _, noisy = sa.noisy_sine(n, defaults.SIGMA, rng=defaults.SEED)
            c, w = _timed(functools.partial(head, noisy, positions))
            ns.append(n), cpu.append(c), wall.append(w)
            peak.append(peak_bytes(functools.partial(head, noisy, positions)) if n <= 2**16 else None)
            print(f"{name}: n = {n}: {c:.4f} s", flush=True)
            if c > LIMIT_S or (name == "exact" and 2 * n > largest_n(memory.get_limit())):
                break
            n *= 2
        found[name] = {"what": what, "count": count, "n": ns, "seconds": cpu, "wall_seconds": wall,
                       "peak_bytes": peak}
    return found


def measure_decoding() -> dict:
    """Times of decoding n tokens without and with a cache."""
    import selfattention as sa
    from selfattention import decoding, defaults
    from selfattention.head import gaussian_head_weights, positional_features

    found = {}
    for name, decode in (("decoding-recomputed", decoding.decode_recomputed),
                         ("decoding-cached", decoding.decode_cached)):
        ns, cpu, wall = [], [], []
        for n in DECODING_N:
            positions, _, noisy = sa.noisy_sine(n, defaults.SIGMA, rng=defaults.SEED)
            X = positional_features(noisy, positions)
            c, w = _timed(functools.partial(decode, X, *gaussian_head_weights(), defaults.TEMPERATURE))
            ns.append(n), cpu.append(c), wall.append(w)
            print(f"{name}: n = {n}: {c:.4f} s", flush=True)
        found[name] = {"what": name.replace("-", ", "), "n": ns, "seconds": cpu, "wall_seconds": wall}
    return found


def measure() -> dict:
    """Every measurement, with the machine, the date and the load (run in the child process)."""
    from benchmarks.__main__ import machine

    load = os.getloadavg()[0]
    methods = {**measure_heads(), **measure_decoding()}
    return {
        "machine": machine(),
        "date": _dt.date.today().isoformat(),
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
        "clock": "processor time of one thread (time.process_time), median of up to 5 calls",
        "methods": methods,
    }


def chapter_runs() -> list[tuple[float, float]]:
    """(wall seconds, kernel CPU seconds) of executing the chapter in a fresh kernel, :data:`RUNS_CHAPTER` times."""
    import resource

    from benchmarks import execute_chapter

    runs = []
    for _ in range(RUNS_CHAPTER):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = execute_chapter(STEM)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append((seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)))
    return runs


def main() -> str:
    from benchmarks import check_goals

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "benchmarks.bench_attention_cost"], check=True, env=env,
                   cwd=HERE.parent)
    runs = chapter_runs()
    median = statistics.median(wall for wall, _ in runs)
    text = "\n".join([
        report(json.loads(RESULTS_JSON.read_text())),
        "",
        f"The chapter executed {RUNS_CHAPTER} times in a fresh kernel (kernel start included): median "
        f"{median:.1f} s (runs {', '.join(f'{wall:.1f}' for wall, _ in runs)} s; goal <= {GOAL_S:.0f} s), "
        f"kernel CPU median {statistics.median(cpu for _, cpu in runs):.1f} s; load average after "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
    ])
    missed = [] if median <= GOAL_S else [f"the chapter executes in {median:.1f} s, over {GOAL_S:.0f} s"]
    return check_goals(text, missed)


def report(data: dict) -> str:
    """The Markdown section of results.md: one row per method with its slope, then the ratios the chapter reads."""
    return "\n".join([
        f"Written to `benchmarks/{RESULTS_JSON.name}` (read by book/attention-cost.md); "
        f"{data['clock']}; load average {data['load'][0]} before, {data['load'][1]} after.",
        "",
        "| method | n | median seconds at the largest n | log-log slope (fitted from n) |",
        "|---|---|---:|---:|",
        *[_slope_row(entry) for entry in data["methods"].values()],
        "",
        *_ratio_rows(data["methods"]),
    ])


def _slope_row(entry: dict) -> str:
    """A method's row: its sizes, its time at the largest, and its slope from 1,024 tokens (from its smallest
    when fewer than two sizes reach 1,024: the decoders)."""
    import numpy as np

    from selfattention.cost import loglog_slope

    ns, seconds = np.array(entry["n"]), np.array(entry["seconds"])
    start = 1024 if (ns >= 1024).sum() >= 2 else int(ns[0])
    fitted = ns >= start
    slope = loglog_slope(ns[fitted], seconds[fitted])
    return f"| {entry['what']} | {ns[0]} to {ns[-1]} | {seconds[-1]:.3g} | {slope:.2f} (from {start}) |"


def _ratio_rows(methods: dict) -> list[str]:
    """The ratios of medians: the cache's speed-up at each n against the counted one, and where each cheaper
    head overtakes the exact head (its crossover n, and the exact head's time over its own at the largest n
    both ran)."""
    import numpy as np

    from selfattention.cost import crossover, decoding_cost

    again, kept = methods["decoding-recomputed"], methods["decoding-cached"]
    rows = ["| n decoded | measured speed-up of the cache | counted ratio of multiply-adds |", "|---:|---:|---:|"]
    for n, slow, fast in zip(again["n"], again["seconds"], kept["seconds"], strict=True):
        counted = decoding_cost(n, cached=False).multiply_adds / decoding_cost(n, cached=True).multiply_adds
        rows.append(f"| {n} | {slow / fast:.1f} | {counted:.1f} |")
    rows += ["", "| method | crossover n with the exact head | exact head's time over its own at the largest "
             "shared n |", "|---|---:|---:|"]
    exact_n, exact_s = np.array(methods["exact"]["n"]), np.array(methods["exact"]["seconds"])
    for name, entry in methods.items():
        if name == "exact" or name.startswith("decoding"):
            continue
        ns, seconds = np.array(entry["n"]), np.array(entry["seconds"])
        shared = np.isin(exact_n, ns)
        cheap = seconds[np.isin(ns, exact_n)]
        where = crossover(exact_n[shared], exact_s[shared], cheap)
        rows.append(f"| {entry['what']} | {where:,.0f} | {exact_s[shared][-1] / cheap[-1]:.1f} "
                    f"(n = {exact_n[shared][-1]}) |")
    return rows


if __name__ == "__main__":
    RESULTS_JSON.write_text(json.dumps(measure(), indent=1) + "\n")
    sys.exit(0)
