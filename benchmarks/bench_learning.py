"""How long chapters 8 and 9 (learning the head, content attention) take to execute, and their training.

Each chapter's MyST source is read into a notebook with myst-nb's own reader
and executed in a fresh kernel with nbclient, as the book build does; the
time includes the kernel's start. The target is under 20 s per chapter on the
book's 2-core build machine. The trainings that dominate them are timed on
their own too. Medians over repeated runs are reported.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {"learning": "8, Learning the head", "content-attention": "9, Attention that looks at content"}
TARGET_S = 20.0
RUNS = 3


def execute_chapter(path: Path) -> float:
    """Seconds to execute one chapter in a fresh kernel."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient

    nb = read_myst_markdown_notebook(path.read_text())
    start = time.perf_counter()
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def median_time(call, runs=RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def trainings() -> list[tuple[str, float]]:
    """(what, median seconds) of the chapters' trainings, with the chapters' arguments."""
    import selfattention as sa
    from selfattention import defaults
    from selfattention.studies import content_attention as ca
    from selfattention.studies import learned_head as lh

    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    train = ca.step_signals(20, defaults.N, defaults.SIGMA, rng=defaults.SEED)
    start = ca.train_position_head(train, steps=600, rng=defaults.SEED)
    return [
        ("chapter 8: one head, 2000 Adam steps on one signal (N = 100)",
         median_time(lambda: lh.learn(positions, noisy, steps=2000, rng=defaults.SEED))),
        ("chapter 9: position-only head, 600 steps on 20 signals",
         median_time(lambda: ca.train_position_head(train, steps=600, rng=defaults.SEED))),
        ("chapter 9: content-aware head, 300 steps on 20 signals",
         median_time(lambda: ca.train_content_head(train, start=start, steps=300, rng=defaults.SEED))),
    ]


def main() -> str:
    rows = []
    for stem, title in CHAPTERS.items():
        times = [execute_chapter(ROOT / "book" / f"{stem}.md") for _ in range(RUNS)]
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
