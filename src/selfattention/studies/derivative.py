r"""A derivative from two heads: heads at offsets ``+delta`` and ``-delta``, ``W_O = [1, -1] / (2 delta)``.

The layer (:func:`~selfattention.multihead.derivative_layer`) is linear in
the signal, with weights ``B = (A^{(+)} - A^{(-)}) / (2 delta)``, so its
error against the true derivative ``f'`` splits exactly, with no Monte
Carlo, into

.. math:: \text{bias}_i = \sum_j b_{ij} f(p_j) - f'(p_i), \qquad
    \text{variance}_i = \sigma^2 \sum_j b_{ij}^2 .

In the interior, to leading order in the bandwidth ``h`` and the offset,
the bias is ``(h**2 / 2 + delta**2 / 6) f'''`` (each head blurs ``f`` by
``h**2 f'' / 2``; the central difference adds ``delta**2 f''' / 6``) and the
variance ``sigma**2 (1 - exp(-delta**2 / h**2)) / (4 sqrt(pi) (N - 1) h delta**2)``
(sums over the grid, ``N - 1`` samples per unit of position, replaced by
integrals): the two bands overlap less as ``delta`` grows, and the
difference of two nearly independent averages is divided by ``2 delta``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import memory
from .._validation import (
    TINY,
    as_array,
    as_count,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_series,
    as_temperatures,
    finite_result,
    naming,
)
from ..head import attention_matrices
from ..multihead import derivative_layer, layer_weights, signal_tokens
from ..signals import noisy_sine
from .bias_variance import region_mask

#: The grid searched for the best offset and temperature at the book's N and sigma.
OFFSETS = np.linspace(0.01, 0.2, 39)
TEMPERATURES = np.logspace(-4, -1.5, 26)
#: The offsets of the noise-amplification figure, at the chosen temperature.
NOISE_OFFSETS = np.geomspace(0.005, 0.25, 23)


def derivative_weights(positions, offset, temperature) -> np.ndarray:
    """The weights ``B = (A^{(+)} - A^{(-)}) / (2 delta)`` of the derivative layer.

    Parameters
    ----------
    positions : array_like, shape (n,)
    offset : float
        ``delta > 0``.
    temperature : float
        ``tau > 0``.

    Returns
    -------
    ndarray, shape (n, n)
        ``output = B s`` estimates ``f'`` at every position; every row sums to 0.
    """
    (p,) = as_series(positions=positions)
    memory.require_matrix(p.size, p.size, "positions", count=3)
    heads, W_O = derivative_layer(offset, temperature)
    with naming("positions", "X"):  # scores that overflow: the positions are too far apart
        return layer_weights(signal_tokens(np.zeros_like(p), p), heads, W_O)  # (n, n)


def true_derivative(positions, periods=1.0) -> np.ndarray:
    """``f'(p) = 2 pi periods cos(2 pi periods p)``, the derivative of the book's sine.

    Parameters
    ----------
    positions : array_like, shape (n,)
    periods : float

    Returns
    -------
    ndarray, shape (n,)
    """
    p = as_array(positions, "positions", ndim=1)
    omega = 2 * np.pi * as_nonnegative_scalar(periods, "periods")
    with np.errstate(over="ignore", invalid="ignore"):
        slope = omega * np.cos(omega * p)  # (n,)
    return finite_result(slope, "periods and positions: the sine's phase overflows the double range")


@dataclass(frozen=True)
class DerivativeRisk:
    """Exact squared bias and variance of the derivative layer, averaged over a region.

    Attributes
    ----------
    offsets : ndarray, shape (a,)
    temperatures : ndarray, shape (b,)
    bias2, variance : ndarray, shape (a, b)
    """

    offsets: np.ndarray
    temperatures: np.ndarray
    bias2: np.ndarray
    variance: np.ndarray

    @property
    def mse(self) -> np.ndarray:
        """``bias2 + variance``, shape (a, b)."""
        return self.bias2 + self.variance

    def best(self):
        """``(delta, tau)`` of the least mean squared error on the grid."""
        a, b = np.unravel_index(int(np.argmin(self.mse)), self.mse.shape)
        return float(self.offsets[a]), float(self.temperatures[b])


def derivative_risk(n, sigma, offsets, temperatures, region="interior") -> DerivativeRisk:
    """The layer's error against ``f'`` on the book's sine, for every offset and temperature.

    Parameters
    ----------
    n : int
        Samples on [0, 1], at least 2.
    sigma : float
        Noise standard deviation, ``>= 0``.
    offsets : array_like, shape (a,)
        Offsets ``delta > 0``.
    temperatures : array_like, shape (b,)
    region : {"whole", "interior"}

    Returns
    -------
    DerivativeRisk
    """
    n, sigma = as_count(n, "n", minimum=2), as_nonnegative_scalar(sigma, "sigma")
    deltas, taus = _as_offsets(offsets), as_temperatures(temperatures, "temperatures")
    p, f, _ = noisy_sine(n, 0.0)  # (n,), (n,)
    inside, truth = region_mask(p, region), true_derivative(p)
    out = np.empty((2, len(deltas), taus.size))
    for a, delta in enumerate(deltas):
        with naming("offsets", "offset"):
            B = _derivative_weights_at(p, delta, taus)  # (b, n, n)
        with np.errstate(over="ignore", invalid="ignore"):
            out[0, a] = ((B @ f - truth)[:, inside] ** 2).mean(axis=1)
            out[1, a] = sigma * sigma * (B[:, inside] ** 2).sum(axis=2).mean(axis=1)
    finite_result(out, "sigma and offsets: the error overflows the double range")
    return DerivativeRisk(np.array(deltas), taus.copy(), out[0], out[1])


def _derivative_weights_at(positions, offset, temperatures) -> np.ndarray:
    """:func:`derivative_weights` at each temperature, (b, n, n): each head's scores computed once.

    ``W_O`` combines the two heads' attention matrices as
    :func:`~selfattention.multihead.layer_weights` does: the same numbers.
    """
    _, W_O = derivative_layer(offset, temperatures[0])  # refuses a bad offset, by name
    ahead = attention_matrices(positions, temperatures, offset=offset)  # (b, n, n)
    behind = attention_matrices(positions, temperatures, offset=-offset)  # (b, n, n)
    ahead *= W_O[0, 0]
    behind *= W_O[1, 0]
    ahead += behind
    return ahead


def noise_std(positions, offsets, temperature, sigma) -> np.ndarray:
    """Standard deviation of the noise in the estimate, ``sigma sqrt(sum_j b_ij**2)``, at the middle token.

    Parameters
    ----------
    positions : array_like, shape (n,)
    offsets : array_like, shape (a,)
    temperature : float
    sigma : float

    Returns
    -------
    ndarray, shape (a,)
    """
    (p,) = as_series(positions=positions)
    sigma = as_nonnegative_scalar(sigma, "sigma")
    deltas = _as_offsets(offsets)
    with naming("offsets", "offset"):
        rows = [derivative_weights(p, delta, temperature)[p.size // 2] for delta in deltas]
    with np.errstate(over="ignore"):
        noise = sigma * np.sqrt(np.sum(np.square(rows), axis=1))  # (a,)
    return finite_result(noise, "sigma and offsets: the noise overflows the double range")


def leading_order_noise(n, offsets, temperature, sigma) -> np.ndarray:
    r"""The noise of the module's docstring in the interior: its standard deviation, from the variance formula.

    .. math:: \sigma \sqrt{\frac{1 - \exp(-\delta^2 / h^2)}{4 \sqrt\pi\, (N - 1)\, h\, \delta^2}}

    Parameters
    ----------
    n : int
    offsets : array_like, shape (a,)
    temperature : float
    sigma : float

    Returns
    -------
    ndarray, shape (a,)
    """
    n, sigma = as_count(n, "n", minimum=2), as_nonnegative_scalar(sigma, "sigma")
    deltas = np.array(_as_offsets(offsets))
    h = np.sqrt(as_positive_scalar(temperature, "temperature") / 2)
    density = n - 1  # samples per unit of position
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        x2 = (deltas / h) ** 2  # (a,)
        # (1 - exp(-x2)) / (h delta**2) = g / h**3, with g = (1 - exp(-x2)) / x2, which tends to 1 as x2 -> 0
        g = np.where(x2 > 1e-12, -np.expm1(-x2) / np.where(x2 > 1e-12, x2, 1.0), 1.0 - x2 / 2)
        noise = sigma * np.sqrt(g / (4 * np.sqrt(np.pi) * density)) / h**1.5
    return finite_result(noise, "sigma and temperature: the noise overflows the double range")


def _as_offsets(offsets) -> list[float]:
    """``offsets`` as a non-empty list of positive floats, refused by name otherwise."""
    deltas = as_array(offsets, "offsets", ndim=1)
    if deltas.size == 0 or (deltas < TINY).any():
        raise ValueError(f"offsets must be a non-empty array of positive numbers, each at least {TINY:.6g} "
                         f"(the smallest normal double), got {deltas.tolist()!r}")
    return deltas.tolist()


def best_offset_ratio() -> float:
    r"""The ratio ``delta / h`` that minimises the leading-order interior error at its best bandwidth.

    With ``delta = c h`` the squared bias is ``C h**4 (1/2 + c**2/6)**2`` and
    the variance ``D g(c) / h**3`` with ``g(c) = (1 - exp(-c**2)) / c**2``;
    at the best ``h`` the error is proportional to
    ``((1/2 + c**2/6)**6 g(c)**4)**(1/7)``, whose minimum is found on a fine grid.

    Returns
    -------
    float
    """
    c = np.linspace(0.05, 6.0, 11900)
    g = -np.expm1(-c * c) / (c * c)
    return float(c[np.argmin((0.5 + c * c / 6) ** 6 * g**4)])
