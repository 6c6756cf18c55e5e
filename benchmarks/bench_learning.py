"""How long the chapters "Learning the head" and "Attention that looks at content" take to execute.

Each chapter is executed in a fresh kernel as the book build does
(:func:`benchmarks.execute_chapter`, kernel start included). The target is
under 20 s per chapter on the book's 2-core build machine. The trainings that
dominate them are timed on their own too, with the chapters' arguments.
Medians over repeated runs are reported.
"""

from __future__ import annotations

import statistics

from benchmarks import execute_chapter, median_time

CHAPTERS = {"learning": "Learning the head", "content-attention": "Attention that looks at content"}
TARGET_S = 20.0
RUNS = 3


def trainings() -> list[tuple[str, float]]:
    """(what, median seconds) of the chapters' trainings, with the chapters' arguments."""
    import selfattention as sa
    from selfattention import defaults
    from selfattention.studies import content_attention as ca
    from selfattention.studies import learned_head as lh
    from selfattention.studies import noise2noise as n2n

    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    train = ca.step_signals(20, defaults.N, defaults.SIGMA, rng=defaults.SEED)
    start = n2n.train_position_head(train, steps=600, rng=defaults.SEED)
    return [
        ("one head, 2000 Adam steps on one signal (N = 100)",
         median_time(lambda: lh.learn(positions, noisy, steps=2000, rng=defaults.SEED), RUNS)),
        ("position-only head, 600 steps on 20 signals",
         median_time(lambda: n2n.train_position_head(train, steps=600, rng=defaults.SEED), RUNS)),
        ("content-aware head, 300 steps on 20 signals",
         median_time(lambda: n2n.train_content_head(train, start=start, steps=300, rng=defaults.SEED), RUNS)),
    ]


def main() -> str:
    rows = []
    for stem, title in CHAPTERS.items():
        times = [execute_chapter(stem) for _ in range(RUNS)]
        print(f"{stem}: {', '.join(f'{t:.1f} s' for t in times)}", flush=True)
        median = statistics.median(times)
        rows.append(f"| {title} | {median:.1f} | {', '.join(f'{t:.1f}' for t in times)} | < {TARGET_S:.0f} | "
                    f"{'yes' if median < TARGET_S else 'NO'} |")
    train_rows = [f"| {what} | {seconds:.2f} |" for what, seconds in trainings()]
    return "\n".join([
        f"Each chapter executed {RUNS} times in a fresh kernel (myst-nb reader + nbclient, kernel start included):",
        "",
        "| chapter | median (s) | runs (s) | target (s) | met |",
        "|---|---:|---|---:|---|",
        *rows,
        "",
        f"Their trainings alone, median of {RUNS}:",
        "",
        "| training | median (s) |",
        "|---|---:|",
        *train_rows,
    ])
