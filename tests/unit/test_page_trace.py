"""The benchmark's reading of a traced page load (benchmarks.page_trace), on a trace written by hand."""

from __future__ import annotations

import pytest

from benchmarks import page_trace

MAIN = {"pid": 1, "tid": 7}


def task(start_ms: float, end_ms: float, name: str = "RunTask") -> dict:
    return {**MAIN, "name": name, "ph": "X", "ts": start_ms * 1000, "dur": (end_ms - start_ms) * 1000}


def trace(*tasks: dict) -> list[dict]:
    """A renderer main thread that parsed the page, its navigation at 0, and ``tasks``."""
    return [{**MAIN, "name": "thread_name", "args": {"name": "CrRendererMain"}},
            {"pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "CrRendererMain"}},
            {**MAIN, "name": "navigationStart", "ts": 0, "args": {"data": {"documentLoaderURL": "http://127.0.0.1/"}}},
            {**MAIN, "name": "ParseHTML", "ph": "X", "ts": 1000, "dur": 5000},
            *tasks]


@pytest.mark.parametrize(("start", "end", "blocking"), [
    (0, 200, 0),  # straddles the paint at 150: 50 ms after it, not beyond 50
    (100, 260, 60),  # 110 ms after the paint
    (300, 420, 70),  # after the paint: 120 ms
    (300, 340, 0),  # short
    (0, 140, 0),  # over before the paint
])
def test_a_task_blocks_what_it_lasts_after_the_first_paint_beyond_50_ms(start, end, blocking):
    assert page_trace.blocking_ms(start * 1000, end * 1000, 150_000) == blocking


def test_the_total_blocking_time_counts_only_what_follows_the_first_paint():
    load = page_trace.analyse(trace(task(0, 200), task(300, 420), task(500, 540), task(600, 700)), 150.0, 400.0)
    assert load.tbt_ms == 70 + 50
    assert load.long_tasks == [200, 120, 100]  # every long task that ends after the first paint
    assert (load.fcp_ms, load.lcp_ms) == (150.0, 400.0)
