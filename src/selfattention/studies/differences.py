r"""Derivatives of any order from offset heads, and the noise each order costs.

A layer of ``order + 1`` heads of one temperature, at offsets ``spacing``
apart and centred on the query, combined by the binomial coefficients of
that order with alternating signs and divided by ``spacing**order``, is a
central difference of the smoothed signal: it estimates the derivative of
that order of ``f`` (:func:`difference_layer`; order 1 at the spacing
``2 delta`` is :func:`~selfattention.multihead.derivative_layer`, order 2 at
``delta`` is :func:`~selfattention.multihead.curvature_layer`).

Its noise has two regimes (:func:`difference_noise`, on the grid). When
the spacing is well above the bandwidth ``h``, the heads average separate
samples and the noise is one head's times the square root of the sum of the
squared coefficients, divided by ``spacing**order``: each order costs one
more power of ``1 / spacing``. When the spacing is well below ``h``, the
layer tends to the derivative of that order of one head's band, whose noise
no longer depends on the spacing (:func:`small_spacing_noise`): each order
costs one more power of ``1 / h``.
"""

from __future__ import annotations

from math import comb

import numpy as np

from .. import memory
from .._validation import (
    as_count,
    as_nonnegative_scalar,
    as_series,
    as_temperature,
    as_temperatures,
    finite_result,
    naming,
)
from ..multihead import layer_weights, offset_head, signal_tokens

#: The highest order of a difference layer: its coefficients, up to ``comb(8, 4) = 70``, stay exact.
MAX_ORDER = 8


def difference_layer(order, spacing, temperature):
    """The heads and the output projection of a central difference of ``order``.

    Parameters
    ----------
    order : int
        From 1 to :data:`MAX_ORDER`.
    spacing : float
        The distance between neighbouring heads' offsets, ``> 0``.
    temperature : float
        ``tau > 0``, the temperature of every head.

    Returns
    -------
    heads : list of Head, length ``order + 1``
        At the offsets ``(m - order / 2) spacing`` for ``m = 0, ..., order``.
    W_O : ndarray, shape (order + 1, 1)
        ``(-1)**(order - m) comb(order, m) / spacing**order``.
    """
    k = as_count(order, "order", maximum=MAX_ORDER)
    step = as_temperature(spacing, "spacing")  # positive and normal
    with np.errstate(over="ignore", under="ignore"):
        W_O = np.array([[(-1.0) ** (k - m) * comb(k, m)] for m in range(k + 1)])  # (order + 1, 1)
        for _ in range(k):
            W_O /= step  # divided in turn: spacing**order alone may underflow
        offsets = [(m - k / 2) * step for m in range(k + 1)]
    finite_result(W_O, f"spacing: 1 / spacing**order overflows the double range, got {spacing!r}")
    with naming("spacing", "offset"):
        heads = [offset_head(offset, temperature) for offset in offsets]
    return heads, W_O


def difference_noise(positions, order, spacings, temperature, sigma) -> np.ndarray:
    r"""The standard deviation of the noise in the middle token's output, :math:`\sigma \sqrt{\sum_j b_{ij}^2}`.

    Parameters
    ----------
    positions : array_like, shape (n,)
    order : int
    spacings : array_like, shape (a,)
        Each ``> 0``.
    temperature : float
    sigma : float
        ``>= 0``.

    Returns
    -------
    ndarray, shape (a,)
        One value per spacing, for :func:`difference_layer` of ``order``.
    """
    (p,) = as_series(positions=positions)
    sigma = as_nonnegative_scalar(sigma, "sigma")
    steps = as_temperatures(spacings, "spacings")
    memory.require_matrix(p.size, p.size, "positions", count=3)
    tokens = signal_tokens(np.zeros_like(p), p)  # (n, 4): the weights need no signal
    rows = []
    for step in steps:
        with naming("spacings", "spacing", "W_O"), naming("positions", "X"):
            rows.append(layer_weights(tokens, *difference_layer(order, step, temperature))[p.size // 2])
    with np.errstate(over="ignore"):
        noise = sigma * np.sqrt(np.sum(np.square(rows), axis=1))  # (a,)
    return finite_result(noise, "sigma and spacings: the noise overflows the double range")


def small_spacing_noise(n, order, temperature, sigma) -> float:
    r"""The noise of :func:`difference_layer` in the interior, in the limit of a small spacing.

    The layer tends to the derivative of ``order`` of one head's band, whose
    weights are
    :math:`\kappa_1\big((p_j - p_i) / h\big) / (\sqrt{2\pi}\, (N - 1)\, h)`
    (:math:`\kappa_1` the Gaussian kernel at unit bandwidth), so, with sums
    over the grid replaced by integrals,

    .. math:: \sigma \sqrt{\frac{1}{2\pi\, (N - 1)\, h^5} \int \kappa_1''(u)^2\, du}
        = \sigma \sqrt{\frac{3}{8 \sqrt\pi\, (N - 1)\, h^5}}

    for the second order; in general the integral divided by ``2 pi`` is
    ``(2 order - 1)!! / (2**(order + 1) sqrt(pi))`` and the power of ``h``
    is ``2 order + 1``.

    Parameters
    ----------
    n : int
        ``N``, samples on [0, 1], at least 2.
    order : int
    temperature : float
        ``tau > 0``; ``h = sqrt(tau / 2)``.
    sigma : float
        ``>= 0``.

    Returns
    -------
    float
    """
    n, k = as_count(n, "n", minimum=2), as_count(order, "order", maximum=MAX_ORDER)
    sigma = as_nonnegative_scalar(sigma, "sigma")
    h = np.sqrt(as_temperature(temperature, "temperature") / 2)
    if sigma == 0:
        return 0.0
    integral = np.prod(np.arange(1, 2 * k, 2)) / (2 ** (k + 1) * np.sqrt(np.pi))  # (2k - 1)!! / (2**(k+1) sqrt(pi))
    with np.errstate(over="ignore", under="ignore"):  # in logarithms: h**(order + 1/2) alone may underflow
        noise = np.exp(np.log(sigma) + 0.5 * np.log(integral / (n - 1)) - (k + 0.5) * np.log(h))
    return float(finite_result(noise, "sigma and temperature: the noise overflows the double range"))
