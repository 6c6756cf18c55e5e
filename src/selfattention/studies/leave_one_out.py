"""How well leave-one-out cross-validation finds the best temperature.

:func:`~selfattention.choose_temperature` sees one noisy signal and no
ground truth. This study runs it on many of the book's noisy sines at once,
so that its choices can be set against the best temperatures that the
Monte Carlo of :mod:`.bias_variance` measures from the ground truth.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, as_counts, naming
from ..kernel import candidate_temperatures, leave_one_out_scores, pick_temperature
from ..signals import noisy_sine

#: How far the leave-one-out choice may land from the true best temperature
#: (a factor either way) on the book's signals.
LOO_FACTOR = 2.0


def loo_choices(ns, sigmas, seeds, candidates=None) -> np.ndarray:
    """:func:`~selfattention.choose_temperature` on the book's noisy sines, many at once.

    For each ``n`` the signals of every seed and sigma share one batched
    :func:`~selfattention.kernel.leave_one_out_scores` call (they share the
    weight matrices).

    Parameters
    ----------
    ns : sequence of int, length a
    sigmas : sequence of float, length b
    seeds : sequence of int, length r
        Noise seeds of :func:`~selfattention.noisy_sine`.
    candidates : array_like, shape (m,), optional
        Temperatures to try; :data:`~selfattention.kernel.DEFAULT_CANDIDATES` when omitted.

    Returns
    -------
    chosen : ndarray, shape (r, a, b)
        The chosen temperature of seed ``r``, ``ns[a]`` and ``sigmas[b]``.
    """
    ns, seeds = as_counts(ns, "ns", minimum=2), as_counts(seeds, "seeds", minimum=0)
    sigmas = as_array(sigmas, "sigmas", ndim=1)
    if sigmas.size == 0 or (sigmas < 0).any():
        raise ValueError("sigmas must be a non-empty array of non-negative numbers")
    taus = candidate_temperatures(candidates)
    memory.require(8 * len(seeds) * sigmas.size * max(ns) * (taus.size + 2), "ns, sigmas and seeds",
                   f"the leave-one-out errors of {len(seeds) * sigmas.size} signals of up to {max(ns)} samples")
    chosen = np.empty((len(seeds), len(ns), len(sigmas)))
    for a, n in enumerate(ns):
        with naming("sigmas", "sigma", "signal"):
            signals = [noisy_sine(n, s, rng=seed) for seed in seeds for s in sigmas]
            scores = leave_one_out_scores([y for _, _, y in signals], signals[0][0], taus)  # (r b, m)
        chosen[:, a, :] = pick_temperature(scores, taus).reshape(len(seeds), len(sigmas))
    return chosen
