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

from benchmarks import chapter_report, median_time

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
    return chapter_report(11, "Where tokens are, and what they may see", STEM, GOAL_S, parts(),
                          f"Its heaviest parts alone, median of {RUNS}:", RUNS)
