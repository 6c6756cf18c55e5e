r"""Random Fourier features measured against what theory says of them: the worst pair, and the head's ratio.

:func:`uniform_errors` draws ``D`` frequencies again and again and measures the largest error of the
estimated kernel over all pairs of positions (:func:`~selfattention.feature_error.sup_error`), beside
the tolerance of Rahimi and Recht's bound at a chance of one half
(:func:`~selfattention.feature_error.uniform_bound`). :func:`ratio_spread` measures the spread of the
cosine head's output over draws, beside the delta method's prediction
(:func:`~selfattention.feature_error.delta_sd`).
"""

from __future__ import annotations

import numpy as np

from .. import feature_error, memory
from .._validation import (
    as_count,
    as_counts,
    as_rng,
    as_series,
    as_temperature,
    finite_result,
    naming,
    power_of_two,
    same_length,
)
from ..head import centre_positions, gaussian_head
from ..random_features import gaussian_frequencies

#: The interquartile range of a normal distribution, in standard deviations.
NORMAL_IQR = 1.3489795003921634


def uniform_errors(positions, temperature, counts, draws, rng=None) -> dict:
    r"""The largest error over all pairs, for ``D`` frequencies drawn ``draws`` times, and the bound's tolerance.

    The bound is :func:`~selfattention.feature_error.uniform_bound` at a chance of one half, for
    positions (:math:`d_k = 1`), :math:`\mathbb{E}\,\omega^2 = 2/\tau` and the span of the positions
    as the diameter: a median of the largest errors above it would contradict the bound.

    Parameters
    ----------
    positions : array_like, shape (n,)
        At least two distinct.
    temperature : float
    counts : sequence of int, length k
        The ``D`` tried.
    draws : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"measured"`` (draws, k), the largest errors; ``"bound"`` (k,), the tolerances;
        ``"second_moment"`` and ``"diameter"``, the bound's arguments.
    """
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    counts, draws, rng = as_counts(counts, "counts"), as_count(draws, "draws"), as_rng(rng)
    memory.require(8 * draws * len(counts), "draws", "the errors")
    with np.errstate(over="ignore"):
        diameter = float(p.max() - p.min())
    if not 0 < diameter < np.inf:
        raise ValueError("positions must hold two distinct positions, within the double range of each other")
    moment = 2.0 / tau  # E omega**2 of N(0, 2 / tau), one dimension
    with naming("counts", "count"):
        measured = [[feature_error.sup_error(p, gaussian_frequencies(D, tau, rng), tau) for D in counts]
                    for _ in range(draws)]
        bound = [feature_error.uniform_bound(0.5, D, 1, moment, diameter) for D in counts]
    return {"measured": np.array(measured), "bound": np.array(bound), "second_moment": moment,
            "diameter": diameter}


def ratio_spread(signal, positions, temperature, counts, draws, rng=None) -> dict:
    r"""The spread of the cosine head's output over draws of ``D`` frequencies, beside the delta method's.

    For each ``D`` and each query: the standard deviation of the output over the draws, its robust
    counterpart (the interquartile range over that of a normal distribution, :data:`NORMAL_IQR`,
    which a few draws with a denominator near 0 cannot inflate), and the delta method's
    :func:`~selfattention.feature_error.delta_sd`.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    counts : sequence of int, length k
    draws : int
        At least 4.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"predicted"``, ``"sd"`` and ``"robust"``, each (k, n); ``"exact"`` (n,), the exact head's
        output; ``"mean"`` (k, n), the mean output over the draws.
    """
    s, p = as_series(signal=signal, positions=positions)
    same_length(s, p, "signal", "positions")
    tau = as_temperature(temperature, "temperature")
    counts, draws, rng = as_counts(counts, "counts"), as_count(draws, "draws", minimum=4), as_rng(rng)
    memory.require(8 * draws * p.size, "draws", f"{draws} outputs of {p.size} queries")
    exact, _ = gaussian_head(s, p, tau)
    found = {kind: np.empty((len(counts), p.size)) for kind in ("predicted", "sd", "robust", "mean")}
    memory.require(4 * 8 * p.size * max(counts), "counts", "the features of a draw")  # angles, cos, sin
    centred = centre_positions(p)  # as the head centres them
    scale = power_of_two(float(np.max(np.abs(s))))  # as the head scales the signal
    with naming("counts", "count", "frequencies"):
        for k, D in enumerate(counts):
            outputs = np.array([_cosine_head(s / scale, centred, gaussian_frequencies(D, tau, rng))
                                for _ in range(draws)])  # (draws, n), in units of the scale
            low, high = np.percentile(outputs, [25, 75], axis=0)  # (n,) each
            with np.errstate(over="ignore", invalid="ignore"):
                spreads = np.stack([outputs.std(axis=0, ddof=1), (high - low) / NORMAL_IQR, outputs.mean(axis=0)])
                spreads = finite_result(spreads * scale, "frequencies: a row's estimated denominator is so near 0 "
                                        "that the outputs' spread leaves the double range")  # (3, n)
            found["sd"][k], found["robust"][k], found["mean"][k] = spreads
            found["predicted"][k] = feature_error.delta_sd(s, p, tau, D)
    return {**found, "exact": exact}


def _cosine_head(s: np.ndarray, p: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """:func:`~selfattention.random_features.random_feature_head`'s output on centred positions, without its
    checks and blocks: numerator over denominator, each ``psi(p_i) . sum_j psi(p_j) [s_j, 1]`` (times ``D``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        angles = finite_result(p[:, None] * omega, "frequencies: an angle omega p leaves the double range")  # (n, D)
    cos, sin = np.cos(angles), np.sin(angles)  # (n, D) each
    values = np.column_stack([s, np.ones_like(s)])  # (n, 2)
    sums = cos @ (cos.T @ values) + sin @ (sin.T @ values)  # (n, 2)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return sums[:, 0] / sums[:, 1]
