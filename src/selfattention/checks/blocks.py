r"""Checks of what the reader writes about attention computed a block of keys at a time.

One block of the online softmax: the running largest score, sum of
exponentials and weighted sum of the values of every query, updated by a
block of keys. ``check_online_block`` takes the reader's function, runs it
over the blocks of seeded random scores, and compares the ratio of the two
sums with the package's exact attention.
"""

from __future__ import annotations

import numpy as np

from .. import defaults
from ..core import softmax
from ._verdicts import TIME_LIMIT, Exercise, Refused, as_result, documented, judge

#: Keys per block in the cases: the blocks' largest scores change from block to block.
_BLOCK = 3


def _block_cases(rng):
    """Scores (n, keys) on the scale of a head's, values (keys, d_v) and a temperature that is not 1."""
    return [(rng.normal(0.0, 3.0, (n, keys)), rng.normal(size=(keys, d_v)), tau)
            for n, keys, d_v, tau in ((5, 11, 2, 0.7), (4, 9, 1, 1.9))]


def _run(update, scores, values, tau):
    """``update`` run over the blocks from the empty start: (n, d_v), the outputs phi / l."""
    n, d_v = scores.shape[0], values.shape[1]
    top, total, weighted = np.full(n, -np.inf), np.zeros(n), np.zeros((n, d_v))
    for start in range(0, scores.shape[1], _BLOCK):
        keys = slice(start, start + _BLOCK)
        step = update(scores[:, keys].copy(), values[keys].copy(), tau, top.copy(), total.copy(), weighted.copy())
        if step is Ellipsis or step is None or not isinstance(step, tuple | list) or len(step) != 3:
            as_result(step if step is Ellipsis or step is None else (), "absorb", (3,), "the answer")
            raise Refused("Not right: absorb must return the largest scores, the sums and the weighted sums.")
        top = as_result(step[0], "absorb", (n,), "the largest scores")
        total = as_result(step[1], "absorb", (n,), "the sums")
        weighted = as_result(step[2], "absorb", (n, d_v), "the weighted sums")
    return weighted / total[:, None]


def _rule(rescale_sums=True, rescale_values=True, scaled=True):
    """The update with a fault switched on, for the typical wrong answers."""
    def update(scores, values, tau, top, total, weighted):
        new_top = np.maximum(top, scores.max(axis=1))
        shrink = np.exp((top - new_top) / (tau if scaled else 1.0))
        block = np.exp((scores - new_top[:, None]) / tau)
        total = (total * shrink if rescale_sums else total) + block.sum(axis=1)
        weighted = (weighted * shrink[:, None] if rescale_values else weighted) + block @ values
        return new_top, total, weighted
    return update


def _block_faults(scores, values, tau):
    return [
        ("a missing factor: times exp((e_hat - e_hat') / tau) on the old sums.",
         _run(_rule(False, False), scores, values, tau)),
        ("a missing factor: rescale the weighted sums as the sums.", _run(_rule(True, False), scores, values, tau)),
        ("a missing factor: rescale the sums as the weighted sums.", _run(_rule(False, True), scores, values, tau)),
        ("a scale: divide the gap of the largest scores by tau.", _run(_rule(scaled=False), scores, values, tau)),
    ]


ONLINE = Exercise(
    name="absorb",
    cases=_block_cases,
    answer=lambda call, scores, values, tau: _run(call, scores, values, tau),
    reference=lambda scores, values, tau: softmax(scores / tau) @ values,
    faults=_block_faults,
    verified="phi / ell after the last block is softmax(E / tau) V",
    fallback="the outputs differ: rescale the old sums, then add the block's.",
)


@documented
def check_online_block(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(scores, values, tau, top, total, weighted)``, one block of the online softmax.

    It returns the updated ``(top, total, weighted)``: each query's largest
    score :math:`\hat e_i`, sum :math:`\ell_i` and weighted sum :math:`\phi_i`,
    run over blocks of random scores from the empty start
    (:math:`-\infty`, 0, 0); :math:`\phi_i / \ell_i` must be exact attention.
    """
    return judge(ONLINE, function, rng, time_limit)
