"""Noisy test signals, with explicit randomness.

Randomness always comes from an ``rng`` argument (a seed or a
:class:`numpy.random.Generator`, as in SPEC 7), never numpy's global state.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import memory
from ._validation import as_array, as_count, as_nonnegative_scalar, as_real_scalar, as_rng, finite_result

#: Bytes per sample of :func:`noisy_sine` at its peak: positions, clean, noise, noisy.
_BYTES_PER_SAMPLE = 32


def unit_noise(n, rng=None) -> np.ndarray:
    """Standard normal draws: the noise of :func:`noisy_sine` before scaling.

    The first ``k`` draws for a seed do not depend on ``n``, so one array
    exported for the largest ``n`` serves every smaller ``n`` too.

    Parameters
    ----------
    n : int
        Number of draws, at least 1.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    z : ndarray, shape (n,)
    """
    n = as_count(n, "n")
    memory.require(8 * n, "n", f"{n} draws")
    return as_rng(rng).standard_normal(n)


def noisy_sine(n, sigma, *, periods=1, rng=None):
    r"""A sine sampled at ``n`` evenly spaced positions, plus Gaussian noise.

    .. math:: s_i = f(p_i) + \sigma z_i, \qquad f(p) = \sin(2 \pi \cdot \text{periods} \cdot p), \qquad
        p_i = \frac{i - 1}{N - 1},\quad z_i \sim \mathcal{N}(0, 1)

    (``N = n``; ``i`` counts the entries from 1).

    Parameters
    ----------
    n : int
        Number of samples, at least 1 (``n = 1`` gives the position 0).
    sigma : float
        Noise standard deviation, ``>= 0``.
    periods : float
        Number of periods of the sine on ``[0, 1]``.
    rng : int, numpy.random.Generator or None
        Seed or generator for the noise.

    Returns
    -------
    positions : ndarray, shape (n,)
    clean : ndarray, shape (n,)
    noisy : ndarray, shape (n,)
    """
    n = as_count(n, "n")
    sigma = as_nonnegative_scalar(sigma, "sigma")
    periods = as_nonnegative_scalar(periods, "periods")
    rng = as_rng(rng)
    memory.require(_BYTES_PER_SAMPLE * n, "n", f"{n} samples")
    positions = np.linspace(0.0, 1.0, n)
    clean = sine(periods, positions)
    with np.errstate(over="ignore"):
        noise = sigma * unit_noise(n, rng)
        noisy = finite_result(clean + noise, "sigma: the noise, sigma times normal draws, overflows the double range")
    return positions, clean, noisy


def sine(periods, positions) -> np.ndarray:
    r"""``sin(2 pi f p)`` at each position, accurate for any number of periods ``f``.

    For phases ``f p`` up to 1 the formula is evaluated as written. Beyond,
    the rounding of the product ``f p`` grows with it (from ``f p = 2**53``
    on it can be off by a whole period), so the phase is first reduced
    modulo 1 exactly, with rational arithmetic on the two doubles.

    Parameters
    ----------
    periods : float
        ``f >= 0``.
    positions : ndarray, shape (n,)
        Positions in ``[0, 1]``.

    Returns
    -------
    ndarray, shape (n,)
    """
    f = as_nonnegative_scalar(periods, "periods")
    positions = as_array(positions, "positions", ndim=1)
    if ((positions < 0) | (positions > 1)).any():
        raise ValueError("positions must lie in [0, 1]")
    if f * np.max(positions, initial=0.0) <= 1:
        return np.sin(2 * np.pi * (f * positions))  # f p first: 2 pi f alone may overflow
    phase = [float(Fraction(f) * Fraction(float(p)) % 1) for p in positions]  # exactly, modulo 1
    return np.sin(2 * np.pi * np.array(phase))
def step_sine(n, sigma, *, jump=1.5, at=0.5, rng=None):
    r"""A sine with a jump of height ``jump`` at position ``at``, plus Gaussian noise.

    .. math:: f(p) = \sin(2 \pi p) + J\,[p \ge p_J], \qquad
        s_i = f(p_i) + \sigma z_i, \quad p_i = \frac{i}{n - 1}

    The noise is that of :func:`noisy_sine` with the same ``rng``.

    Parameters
    ----------
    n : int
        Number of samples, at least 1.
    sigma : float
        Noise standard deviation, ``>= 0``.
    jump : float
        The height ``J`` of the jump (negative for a drop).
    at : float
        Its position ``p_J``: samples at ``p >= at`` are raised by ``jump``.
    rng : int, numpy.random.Generator or None
        Seed or generator for the noise.

    Returns
    -------
    positions, clean, noisy : ndarray, shape (n,) each
        As in :func:`noisy_sine`, with the step added to ``clean`` and ``noisy``.
    """
    jump, at = as_real_scalar(jump, "jump"), as_real_scalar(at, "at")
    positions, clean, noisy = noisy_sine(n, sigma, rng=rng)
    step = jump * (positions >= at)  # (n,)
    with np.errstate(over="ignore"):
        raised = finite_result(noisy + step, "jump or sigma: the noisy step sine overflows the double range")
    return positions, clean + step, raised
