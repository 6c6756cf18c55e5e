"""How long the chapter "Where tokens are, and what they may see" (chapter 11) takes to execute.

The chapter is executed in a fresh kernel as the book build does
(:func:`benchmarks.execute_chapter`, kernel start included). The goal is at
most 15 s on the book's 2-core build machine: :func:`main` raises
:class:`benchmarks.GoalMissed` when the median misses it. The parts that
dominate it are timed on their own, with the chapter's arguments. Medians
over repeated runs are reported, with the CPU time the kernel used and the
machine's load, since other processes share its cores.
"""

from __future__ import annotations

import statistics

from benchmarks import check_goals, execution_table, median_time, timed_execution

STEM = "positions-and-masks"
GOAL_S = 15.0
RUNS = 3


def parts() -> list[tuple[str, float]]:
    """(what, median seconds) of the chapter's heaviest computations, with its arguments."""
    import numpy as np

    import selfattention as sa
    from selfattention import defaults, symbolic
    from selfattention.studies import alibi, causal, sinusoidal

    positions, clean, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    tau = defaults.TEMPERATURE
    sweep = np.pi * np.arange(0.25, 4.01, 0.125)
    return [
        ("sympy: the rotated score and its shift", median_time(symbolic.symbolic_rotary_score, RUNS)),
        ("sympy: determinants of the distances, 2 to 5 tokens",
         median_time(lambda: [symbolic.distance_determinant(n) for n in range(2, 6)], RUNS)),
        ("the one-frequency heads of the aliasing sweep (31)",
         median_time(lambda: sinusoidal.frequency_sweep(noisy, clean, positions, sweep, tau), RUNS)),
        ("leave-one-out of both kernels on 20 noise draws",
         median_time(lambda: alibi.other_draws(defaults.N, defaults.SIGMA, range(20)), RUNS)),
        ("the causal heads of the offset sweep (31)",
         median_time(lambda: causal.offset_sweep(noisy, clean, positions, tau, np.linspace(0, 0.3, 31)), RUNS)),
        ("the next-sample choice of the temperature (141 heads)",
         median_time(lambda: causal.next_token(noisy, clean, positions), RUNS)),
    ]


def main() -> str:
    runs = [timed_execution(STEM) for _ in range(RUNS)]
    print(f"{STEM}: {', '.join(f'{wall:.1f} s' for wall, _ in runs)}", flush=True)
    median = statistics.median(wall for wall, _ in runs)
    met = median <= GOAL_S
    rows = [f"| {what} | {seconds:.2f} |" for what, seconds in parts()]
    report = "\n".join([
        *execution_table(11, "Where tokens are, and what they may see", runs, GOAL_S),
        "",
        f"Its heaviest parts alone, median of {RUNS}:",
        "",
        "| part | median (s) |",
        "|---|---:|",
        *rows,
    ])
    return check_goals(report, [] if met else [f"chapter 11 executes in {median:.1f} s, over its {GOAL_S:.0f} s"])
