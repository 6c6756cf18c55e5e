"""Hypothesis settings of the package's property tests.

Property tests check correctness, not speed: hypothesis's per-example
deadline is off, because on a busy shared machine one slow example (a lazy
import, a descheduled process) fails a correct test. Speed is measured by
the benchmarks (``make bench``).
"""

from hypothesis import settings

settings.register_profile("book", deadline=None)
settings.load_profile("book")
