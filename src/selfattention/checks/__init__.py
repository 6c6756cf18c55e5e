r"""Checks of the code exercises: the reader's function against the package's own, one verdict each.

Each ``check_...`` function takes the function a reader wrote in a
chapter's exercise, runs it on seeded random inputs (``rng``) against the
package's own function, prints one line and returns it (a :class:`Verdict`,
true when right): what was verified, or a hint naming what is wrong, never
the package's numbers. Bad input (not a function, an error, NaN, a function
that runs longer than ``time_limit`` seconds) gets one line too. Needs only
numpy.
"""

from ._verdicts import TIME_LIMIT, Verdict
from .blocks import check_online_block
from .fitting import check_bilateral, check_gradient, check_leave_one_out, check_one_step
from .heads import (
    check_effective_neighbours,
    check_one_number_head,
    check_projections,
    check_smooth,
    check_softmax,
)
from .sequences import (
    check_cache_step,
    check_causal_mask,
    check_features,
    check_numerical_rank,
    check_offset_head,
    check_previous_token,
    check_rope,
)

#: Every check, in the order of the chapters.
CHECKS = (check_softmax, check_one_number_head, check_projections, check_effective_neighbours, check_smooth,
          check_leave_one_out, check_gradient, check_bilateral, check_offset_head, check_rope,
          check_causal_mask, check_previous_token, check_cache_step, check_features, check_numerical_rank,
          check_online_block, check_one_step)

__all__ = [
    "CHECKS",
    "TIME_LIMIT",
    "Verdict",
    "check_bilateral",
    "check_cache_step",
    "check_causal_mask",
    "check_effective_neighbours",
    "check_features",
    "check_gradient",
    "check_leave_one_out",
    "check_numerical_rank",
    "check_offset_head",
    "check_one_number_head",
    "check_one_step",
    "check_online_block",
    "check_previous_token",
    "check_projections",
    "check_rope",
    "check_smooth",
    "check_softmax",
]
