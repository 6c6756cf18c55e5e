"""How long the chapter "Many heads" takes to execute.

The chapter is executed in a fresh kernel as the book build does
(:func:`benchmarks.execute_chapter`, kernel start included). The goal,
checked, is a median of at most 15 s on the book's 2-core build machine. The CPU
time of the kernel's process (user and system, from ``getrusage`` of the
children, which numpy's threads can make larger than the wall time) is
reported beside it, with the machine's load: on a machine that other work
shares, it says what the chapter costs when the wall time does not. The two
studies that dominate it are timed on their own too, with the chapter's
arguments: the exact error of the derivative layer on its grid of offsets and
temperatures, and the Monte Carlo of one head and of the two-temperature
layer on chapter 7's grid. Medians over repeated runs are reported.
"""

from __future__ import annotations

from benchmarks import chapter_report, median_time

GOAL_S = 15.0
RUNS = 3


def studies() -> list[tuple[str, float]]:
    """(what, median seconds) of the chapter's two studies, with its arguments."""
    from selfattention import defaults
    from selfattention.studies import derivative as dv
    from selfattention.studies import jackknife as jk
    from selfattention.studies import power_laws as pl

    grid = f"{len(dv.OFFSETS)} offsets x {len(dv.TEMPERATURES)} temperatures, N = {defaults.N}"
    mc = f"N up to {max(pl.GRID_NS)}, {len(pl.GRID_TEMPERATURES)} temperatures, {pl.GRID_DRAWS} draws, both smoothers"
    return [
        (f"`derivative_risk` ({grid})",
         median_time(lambda: dv.derivative_risk(defaults.N, defaults.SIGMA, dv.OFFSETS, dv.TEMPERATURES), RUNS)),
        (f"`error_grids` ({mc})", median_time(lambda: jk.error_grids(seed=defaults.SEED), RUNS)),
    ]


def main() -> str:
    return chapter_report(10, "Many heads", "many-heads", GOAL_S, studies(), f"Its studies alone, median of {RUNS}:",
                          RUNS)
