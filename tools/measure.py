"""What the memory and chapter tests and the benchmarks measure alike: the peak of memory a call allocates."""

from __future__ import annotations

import tracemalloc


def peak_bytes(call) -> int:
    """The most bytes numpy and Python held at once during ``call()``, above what they held before (tracemalloc)."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
