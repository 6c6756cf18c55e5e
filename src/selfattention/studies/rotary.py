r"""Rotary encodings (RoPE): exact shift invariance for any projections, and what happens beyond the set-up span.

Rotating each query and key by the angles of its position makes every score
a function of ``p_i - p_j``, whatever the projections; a sinusoidal encoding
concatenated to the tokens does so only for the hand-set projections of
:func:`~selfattention.positional.sinusoidal_head_weights`.
:func:`random_projection_shift_gaps` measures both. A cosine kernel repeats
with the period ``2 pi / omega``: :func:`long_sine` gives a longer signal
than the one a frequency was chosen for, and :func:`far_share` how much
weight the queries then give to keys beyond a distance. Several frequencies
repeat together only if the ratios of all of them are rational; otherwise
their sum is quasi-periodic: :func:`largest_return` finds how close to the
query's own weight a key beyond the span comes, within a reach.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_count,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_real_scalar,
    as_rng,
    as_series,
    as_temperature,
    as_weights,
    finite_result,
)
from ..positional import _as_frequencies, rotate, sinusoidal_encoding
from ..signals import unit_noise

#: The most samples :func:`long_sine` draws.
MAX_SAMPLES = 2**20
#: Distances per period of the highest frequency that :func:`largest_return` scans, and the most it scans.
RETURN_STEPS, MAX_DISTANCES = 512, 2**26


def random_projection_shift_gaps(positions, frequencies, shift, rng=None) -> dict:
    r"""How much a shift of every position moves the scores of two heads with random projections.

    Both heads get a random signal and standard normal projections:

    * ``"sinusoidal"``: tokens ``[s, PE(p)]``, projections of shape
      ``(1 + 2F, 2F)``; its score depends on ``p_i - p_j`` alone only for
      projections built for it;
    * ``"rotary"``: tokens ``[s, 1]``, projections of shape ``(2, 2F)``,
      queries and keys rotated by :func:`~selfattention.positional.rotate`;
      its score is a function of ``s_i``, ``s_j`` and ``p_i - p_j``, whatever
      the projections.

    Parameters
    ----------
    positions : array_like, shape (n,)
        Used as given (not centred).
    frequencies : array_like, shape (F,)
    shift : float
    rng : int, numpy.random.Generator or None
        Draws the signal and the projections.

    Returns
    -------
    dict of str -> float
        The largest change of a score, relative to the largest score.
    """
    (p,) = as_series(positions=positions)
    omega = _as_frequencies(frequencies)
    shift = as_real_scalar(shift, "shift")
    memory.require_matrix(p.size, p.size, "positions", count=2)
    with np.errstate(over="ignore"):
        moved = finite_result(p + shift, "positions and shift: a shifted position overflows the double range")
    gen = as_rng(rng)
    s = gen.standard_normal(p.size)  # (n,)
    W_sin = gen.standard_normal((2, 1 + 2 * omega.size, 2 * omega.size))  # W_Q, W_K of [s, PE(p)]
    W_rot = gen.standard_normal((2, 2, 2 * omega.size))  # W_Q, W_K of [s, 1]

    def sinusoidal(q):
        X = np.column_stack([s, sinusoidal_encoding(q, omega)])  # (n, 1 + 2F)
        return (X @ W_sin[0]) @ (X @ W_sin[1]).T

    def rotary(q):
        X = np.column_stack([s, np.ones_like(s)])  # (n, 2)
        return rotate(X @ W_rot[0], q, omega) @ rotate(X @ W_rot[1], q, omega).T

    return {name: _relative_change(head(p), head(moved)) for name, head in (("sinusoidal", sinusoidal),
                                                                             ("rotary", rotary))}


def _relative_change(before: np.ndarray, after: np.ndarray) -> float:
    scale = float(np.max(np.abs(before)))
    return float(np.max(np.abs(after - before))) / scale if scale > 0 else 0.0


def long_sine(n, sigma, length, *, period=1.0, rng=None):
    r"""A noisy sine on ``[0, length]``, sampled as densely as the book's ``n`` samples on ``[0, 1]``.

    .. math:: s_i = \sin(2 \pi p_i / \text{period}) + \sigma z_i

    The draws ``z_i`` are :func:`~selfattention.signals.unit_noise`'s, so
    the first ``n`` of them are those of :func:`~selfattention.signals.noisy_sine`
    with the same ``rng``. The phase is reduced modulo the period exactly
    (``numpy.fmod``), so that the sine stays accurate however long the signal.
    At most :data:`MAX_SAMPLES` samples: a head's ``n x n`` matrices set a
    far lower limit anyway.

    Parameters
    ----------
    n : int
        Samples per unit of position, plus one: the spacing is ``1 / (n - 1)``; at least 2.
    sigma : float
    length : float
        The span, ``> 0``; ``(n - 1) length`` is rounded to a whole number of spacings.
    period : float
        The sine's period, ``> 0``.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    positions, clean, noisy : ndarray, shape (m,)
    """
    n, sigma = as_count(n, "n", minimum=2), as_nonnegative_scalar(sigma, "sigma")
    length, period = as_positive_scalar(length, "length"), as_positive_scalar(period, "period")
    with np.errstate(over="ignore"):
        steps = float(finite_result(np.round((n - 1) * length), "n and length: the number of samples overflows"))
    if not 1 <= steps < MAX_SAMPLES:
        raise ValueError(f"n and length must give between 2 and {MAX_SAMPLES} samples, "
                         f"got (n - 1) length = {(n - 1) * length:.3g} spacings")
    m = int(steps) + 1
    positions = np.linspace(0.0, steps / (n - 1), m)  # (m,): the spacing 1 / (n - 1)
    with np.errstate(over="ignore", under="ignore"):
        clean = np.sin(2 * np.pi * (np.fmod(positions, period) / period))  # fmod is exact
        noisy = finite_result(clean + sigma * unit_noise(m, rng),
                              "sigma: the noise, sigma times normal draws, overflows the double range")
    return positions, clean, noisy


def far_share(weights, positions, distance) -> np.ndarray:
    r"""The share of each query's weight that goes to keys farther than ``distance``.

    .. math:: \sum_{j:\, |p_i - p_j| > \text{distance}} a_{ij}

    Parameters
    ----------
    weights : array_like, shape (n, n)
    positions : array_like, shape (n,)
    distance : float
        ``>= 0``.

    Returns
    -------
    ndarray, shape (n,)
    """
    w = as_weights(weights, "weights", square=True)
    p = as_array(positions, "positions", ndim=1)
    if w.shape[0] != p.size:
        raise ValueError(f"weights must have shape (n, n) for the {p.size} positions, got {w.shape}")
    d = as_nonnegative_scalar(distance, "distance")
    with np.errstate(over="ignore"):  # an overflowing distance is correctly far
        far = np.abs(p[:, None] - p[None, :]) > d  # (n, n)
    return np.sum(np.where(far, w, 0.0), axis=1)  # (n,)


def largest_return(frequencies, temperature, span, reach):
    r"""The most weight a key beyond ``span`` and within ``reach`` gets, relative to the query's own, and where.

    A rotary (or sinusoidal) head whose pairs of coordinates all have one
    amplitude :math:`\xi`, matched to the Gaussian head at ``temperature``
    near the diagonal (the quadratic terms add up,
    :math:`\xi\, (\omega_1^2 + \dots + \omega_F^2) = 2 / \tau`), gives a key
    at the distance :math:`u` the weight

    .. math:: \exp\Big(\xi \big(\cos(\omega_1 u) + \dots + \cos(\omega_F u) - F\big)\Big)

    relative to the query's own. One frequency returns to the query's weight
    every ``2 pi / omega``; several return together only if the ratios of all
    of them are rational. The distances are scanned at :data:`RETURN_STEPS`
    points per period of the highest frequency, and the largest refined on a
    grid a thousand times finer around it.

    Parameters
    ----------
    frequencies : array_like, shape (F,)
        Positive.
    temperature : float
        ``tau > 0``.
    span : float
        ``>= 0``: only distances beyond it count.
    reach : float
        Greater than ``span``; at most :data:`MAX_DISTANCES` distances are scanned.

    Returns
    -------
    weight : float
        In (0, 1].
    distance : float
    """
    omega = _as_frequencies(frequencies)
    tau = as_temperature(temperature, "temperature")
    start, stop = as_nonnegative_scalar(span, "span"), as_positive_scalar(reach, "reach")
    if not stop > start:
        raise ValueError(f"reach must exceed span, got span {start:g} and reach {stop:g}")
    with np.errstate(over="ignore", divide="ignore"):
        xi = finite_result(np.float64(2.0) / tau / np.sum(np.square(omega / omega.max())) / omega.max() ** 2,
                           "frequencies and temperature: the amplitude 2 / (tau sum(omega**2)) overflows")
        step = 2 * np.pi / omega.max() / RETURN_STEPS
        count = np.ceil((stop - start) / step) if step > 0 else np.inf
    if not count <= MAX_DISTANCES:
        raise ValueError(f"frequencies and reach: the scan of the distances up to {stop:g} would take {count:.3g} "
                         f"steps, more than {MAX_DISTANCES}")
    best, where = -np.inf, start
    for first in range(0, int(count) + 1, 2**16):
        u = np.minimum(start + step * np.arange(first, min(first + 2**16, int(count) + 1)), stop)  # (c,)
        best, where = _nearest_best(u, _return_scores(u, omega, xi), best, where)
    fine = np.linspace(max(start, where - step), min(stop, where + step), 2001)  # (2001,)
    best, where = _nearest_best(fine, _return_scores(fine, omega, xi), best, where)
    return float(np.exp(best)), where


def _nearest_best(u: np.ndarray, scores: np.ndarray, best: float, where: float) -> tuple[float, float]:
    """The larger of ``best`` and the scores' largest, and its distance: of scores within rounding (1e-12) of each
    other, the nearer distance (the scan runs outwards), so that a kernel that repeats reports its period."""
    top = float(scores.max())
    if top <= best + 1e-12:
        return max(best, top), where
    return top, float(u[np.argmax(scores >= top - 1e-12)])


def _return_scores(u: np.ndarray, omega: np.ndarray, xi: float) -> np.ndarray:
    """``xi (sum cos(omega u) - F)`` at each distance, (c,), as ``-2 xi sum sin(omega u / 2)**2`` (no cancellation)."""
    return -2 * xi * np.sum(np.square(np.sin(np.outer(u, omega) / 2)), axis=1)
