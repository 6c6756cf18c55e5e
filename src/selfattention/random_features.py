r"""The Gaussian head from random features, in time linear in the tokens.

Bochner's theorem makes the head's kernel an average of cosines: for
frequencies drawn from a normal distribution of variance ``2 / tau``,

.. math:: \mathbb E_\omega\big[\cos(\omega (p_i - p_j))\big]
    = \exp\!\big(-(p_i - p_j)^2 / \tau\big), \qquad
    \omega \sim \mathcal N(0, 2 / \tau)

(:mod:`~selfattention.spectrum` derives it). Averaging ``D`` draws
``omega_1, ..., omega_D`` instead of the expectation turns the kernel into
a dot product of features, ``psi(p_i) . psi(p_j)``, with ``psi(p)`` the
sinusoidal encoding of :mod:`~selfattention.positional` at the random
frequencies divided by ``sqrt(D)`` (:func:`fourier_features`, Rahimi and
Recht, 2007). The head's sums over keys then factor: each row needs
``sum_j psi(p_j)^T s_j`` and ``sum_j psi(p_j)^T``, computed once for all
rows (:func:`random_feature_head`), and the ``n x n`` matrix is never
formed.

The estimated denominator ``psi(p_i) . sum_j psi(p_j)`` is a sum of
cosines: with few features it can come near 0 or fall below it, and the
output blows up. Positive features cannot
(:mod:`~selfattention.positive_features`).
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_count,
    as_rng,
    as_series,
    as_temperature,
    finite_result,
    power_of_two,
)
from .head import centre_positions

#: Rows of features computed at once: memory for ``_BLOCK x 2 D`` numbers,
#: never for ``n x n``.
_BLOCK = 2**12


def gaussian_frequencies(count, temperature, rng=None) -> np.ndarray:
    r"""``D`` frequencies for the Gaussian kernel: sizes of normal draws.

    :math:`|\omega_r|`, with :math:`\omega_r \sim \mathcal N(0, 2/\tau)`.

    The cosine is even, so the sign of a frequency changes no
    :math:`\cos(\omega u)`: the sizes of the draws serve as well, and are
    the positive frequencies of a sinusoidal encoding.

    Parameters
    ----------
    count : int
        ``D``, at least 1.
    temperature : float
        ``tau > 0``: the kernel is ``exp(-u**2 / tau)``.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (D,)
    """
    count = as_count(count, "count")
    tau = as_temperature(temperature, "temperature")
    memory.require(8 * count, "count", f"{count} frequencies")
    spread = np.sqrt(2.0) * np.sqrt(1.0 / tau)  # sqrt(2 / tau), no overflow
    draws = np.abs(as_rng(rng).standard_normal(count))  # (D,)
    with np.errstate(over="ignore"):
        omega = draws * spread
    return finite_result(omega, "temperature: the frequencies sqrt(2 / tau) z "
                         "overflow the double range")


def fourier_features(positions, frequencies) -> np.ndarray:
    r"""Random Fourier features: the sinusoidal encoding over ``sqrt(D)``.

    .. math:: \psi(p) = \tfrac{1}{\sqrt D}\,\big[\cos \omega_1 p,\ \sin
        \omega_1 p,\ \dots,\ \cos \omega_D p,\ \sin \omega_D p\big],

    so that :math:`\psi(p_i) \cdot \psi(p_j) = \frac1D \sum_r
    \cos(\omega_r (p_i - p_j))`.

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies : array_like, shape (D,)
        Positive.

    Returns
    -------
    ndarray, shape (n, 2 D)
    """
    (p,) = as_series(positions=positions)
    omega = _as_frequencies(frequencies)
    memory.require(16 * p.size * omega.size, "positions and frequencies",
                   f"{p.size} x {2 * omega.size} features")
    with np.errstate(over="ignore", invalid="ignore"):
        angles = finite_result(p[:, None] * omega,  # (n, D)
                               "positions and frequencies: an angle "
                               "omega p overflows the double range")
    features = np.empty((p.size, 2 * omega.size))  # (n, 2D)
    features[:, 0::2], features[:, 1::2] = np.cos(angles), np.sin(angles)
    return features / np.sqrt(omega.size)


def random_feature_head(signal, positions, frequencies):
    r"""The Gaussian head from random Fourier features, never ``n x n``.

    .. math:: \text{output}_i = \frac{\psi(p_i) \cdot \sum_j
        \psi(p_j)^\top s_j}{\psi(p_i) \cdot \sum_j \psi(p_j)^\top}

    The two sums over keys are computed once, block by block of tokens;
    each row then costs two dot products of length ``2 D``. Time grows as
    ``n D``; memory as ``n``, plus a block of features. The positions are
    centred first, as the exact head centres them (the kernel depends on
    differences only).

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    frequencies : array_like, shape (D,)
        Positive, as from :func:`gaussian_frequencies`.

    Returns
    -------
    output : ndarray, shape (n,)
    denominators : ndarray, shape (n,)
        ``psi(p_i) . sum_j psi(p_j)``: estimates of the exact head's
        ``sum_j exp(-(p_i - p_j)**2 / tau)``, which can be near 0 or negative.
    """
    s, p = as_series(signal=signal, positions=positions)
    omega = _as_frequencies(frequencies)
    scale = power_of_two(float(np.max(np.abs(s))))
    values = np.column_stack([s / scale, np.ones_like(s)])  # (n, 2)
    p = centre_positions(p)
    summary = np.zeros((2 * omega.size, 2))  # sum_j psi(p_j)^T [s_j, 1]
    for rows in _blocks(p.size, 2 * omega.size, "frequencies"):
        summary += fourier_features(p[rows], omega).T @ values[rows]
    sums = np.empty((p.size, 2))  # (n, 2): numerator, denominator
    for rows in _blocks(p.size, 2 * omega.size, "frequencies"):
        sums[rows] = fourier_features(p[rows], omega) @ summary
    return _ratio(sums, scale, _NEAR_ZERO), sums[:, 1]


_NEAR_ZERO = ("frequencies: a row's estimated denominator is so near 0 that "
              "its output leaves the double range (draw more frequencies)")


def _ratio(sums: np.ndarray, scale: float, message: str) -> np.ndarray:
    """``scale`` times numerator over denominator; ``message`` if infinite."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        output = sums[:, 0] / sums[:, 1] * scale  # (n,)
    return finite_result(output, message)


def _as_frequencies(frequencies) -> np.ndarray:
    omega = as_array(frequencies, "frequencies", ndim=1)
    if omega.size == 0 or (omega <= 0).any():
        raise ValueError("frequencies must be a non-empty list of positive "
                         "numbers")
    return omega


def _blocks(n: int, columns: int, name: str) -> list[slice]:
    """Slices of at most :data:`_BLOCK` rows, after checking their memory."""
    rows = min(n, _BLOCK)
    memory.require(3 * 8 * rows * columns, name,
                   f"blocks of {rows} x {columns} features")
    return [slice(start, start + _BLOCK) for start in range(0, n, _BLOCK)]
