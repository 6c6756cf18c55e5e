r"""Bias and variance of the engineered head, measured by Monte Carlo.

For a fixed signal ``f`` sampled at ``n`` positions, noise level ``sigma``
and temperature ``tau``, the head's output at position ``i`` varies with the
noise draw. Over :math:`R` draws its error splits exactly into

.. math:: \underbrace{\overline{(\hat f(p_i) - f(p_i))^2}}_{\text{MSE}_i}
    = \underbrace{(\overline{\hat f(p_i)} - f(p_i))^2}_{\text{bias}_i^2}
    + \underbrace{\overline{(\hat f(p_i) - \overline{\hat f(p_i)})^2}}_{\text{variance}_i},

where :math:`\hat f(p_i)` is the output of one draw and the line over a
quantity its mean over the draws. Averaged over the positions of a
region (the whole interval, or its interior away from the ends) this gives
the curves of error against temperature.

The Monte Carlo is vectorised: the head's weight matrices ``A`` (n, n), one
per temperature, are built from one matrix of scores
(:func:`~selfattention.head.attention_matrices`), and a block of them is
applied to all noise draws, and to the clean signal, in one matrix product.
The head is linear in the signal, ``A (f + sigma z) = A f + sigma A z``, so
one pass over the unit noise ``z`` serves every ``sigma``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import memory
from .._validation import (
    InputTypeError,
    as_array,
    as_choice,
    as_count,
    as_flag,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_rng,
    as_series,
    as_temperature,
    as_temperatures,
    finite_result,
    naming,
    power_of_two,
)
from ..head import attention_matrices, gaussian_head
from ..signals import noisy_sine

#: The regions the error is averaged over: ``(low, high)`` bounds on p.
REGIONS = {"whole": (0.0, 1.0), "interior": (0.25, 0.75)}
#: Weights per block of temperatures that :func:`monte_carlo_parts` applies to the draws in one product.
_BLOCK = 2**22

@dataclass(frozen=True)
class ErrorParts:
    """Pointwise Monte Carlo statistics of the head, for unit noise.

    For noise level ``sigma`` the head's mean output at ``p_i`` is
    ``clean_i + smooth_bias[t, i] + sigma * noise_mean[t, i]`` and its
    variance over the draws is ``sigma**2 * noise_var[t, i]``.

    Attributes
    ----------
    positions : ndarray, shape (n,)
    temperatures : ndarray, shape (m,)
    smooth_bias : ndarray, shape (m, n)
        ``A f - f``: the error of the head on the noise-free signal.
    noise_mean : ndarray, shape (m, n)
        Mean over draws of ``A z`` (close to 0; its square is Monte Carlo noise).
    noise_var : ndarray, shape (m, n)
        Variance over draws of ``A z`` (population variance, ``ddof=0``).
    draws : int
    square_sums : ndarray, shape (m, n), optional
        ``sum_j A_ij**2``: the exact variance of ``(A z)_i``, which the
        draws estimate (:func:`risk` with ``expected=True``).
    """

    positions: np.ndarray
    temperatures: np.ndarray
    smooth_bias: np.ndarray
    noise_mean: np.ndarray
    noise_var: np.ndarray
    draws: int
    square_sums: np.ndarray | None = None

    def __post_init__(self):
        (p,) = as_series(positions=self.positions)
        m = as_temperatures(self.temperatures, "temperatures").size
        names = ("smooth_bias", "noise_mean", "noise_var") + (("square_sums",) if self.square_sums is not None else ())
        for name in names:
            if as_array(getattr(self, name), name, ndim=2).shape != (m, p.size):
                raise ValueError(f"{name} must have shape (len(temperatures), len(positions)) = {(m, p.size)}")
        as_count(self.draws, "draws", minimum=2)


def monte_carlo_parts(n, temperatures, *, draws=200, periods=1, rng=None,
                      smoother=None) -> ErrorParts:
    """Run the head on ``draws`` noise draws of a sine, for every temperature.

    Parameters
    ----------
    n : int
        Number of samples on [0, 1], at least 2.
    temperatures : array_like, shape (m,)
        Temperatures ``tau > 0``.
    draws : int
        Number of noise draws ``R``, at least 2.
    periods : float
        Periods of the sine ``f(p) = sin(2 pi periods p)``.
    rng : int, numpy.random.Generator or None
        Seed or generator of the unit noise, shape (R, n).
    smoother : callable, optional
        ``smoother(positions, temperatures) -> weights``, shapes (n,), (c,)
        and (c, n, n): the weights of a linear smoother, such as a layer of
        several heads, at each temperature; the engineered head's,
        :func:`~selfattention.head.attention_matrices`, when omitted.

    Returns
    -------
    ErrorParts
    """
    n = as_count(n, "n", minimum=2)
    draws = as_count(draws, "draws", minimum=2)
    taus = as_temperatures(temperatures, "temperatures")
    rng = as_rng(rng)
    weights_at = _as_smoother(smoother)
    c = _temperatures_per_product(n, draws, taus.size)  # memory checked
    p, f, _ = noisy_sine(n, 0.0, periods=periods)  # (n,), (n,): the clean sine
    # (R + 1, n): the unit noise, and the clean sine last
    zf = np.vstack([rng.standard_normal((draws, n)), f])
    parts = np.empty((4, taus.size, n))
    for block in (slice(t, t + c) for t in range(0, taus.size, c)):
        A = _smoother_weights(weights_at, p, taus[block])  # (c, n, n)
        # (R + 1, c, n): the responses to every draw and to the sine at once
        out = (zf @ A.reshape(-1, n).T).reshape(draws + 1, -1, n)
        az = out[:-1]  # (R, c, n): the head's response to every draw
        square_sums = np.einsum("cij,cij->ci", A, A)  # (c, n): sum_j A_ij**2
        parts[:, block] = (out[-1] - f, az.mean(axis=0), az.var(axis=0),
                           square_sums)
    return ErrorParts(p, taus, *parts[:3], draws, parts[3])


def _temperatures_per_product(n: int, draws: int, count: int) -> int:
    """How many of ``count`` temperatures :func:`monte_carlo_parts` puts in one product; refused when its
    arrays (``draws`` draws of ``n`` samples, that many ``n x n`` matrices) exceed the memory limit."""
    c = min(count, max(1, _BLOCK // (n * n)))
    memory.require(8 * ((draws + 1) * n * (c + 1) + 4 * count * n) + memory.BYTES_PER_ENTRY * c * n * n,
                   "n and draws", f"{draws} draws of {n} samples and {c} {n} x {n} attention matrices")
    return c


def _as_smoother(smoother):
    """``smoother``, or :func:`~selfattention.head.attention_matrices` when it is None; refused unless callable."""
    if smoother is None:
        return attention_matrices
    if not callable(smoother):
        raise InputTypeError(f"smoother must be a callable (positions, temperatures) -> weights, "
                             f"got {type(smoother).__name__}")
    return smoother


def _smoother_weights(smoother, positions, temperatures) -> np.ndarray:
    """``smoother(positions, temperatures)``, checked: finite weights of shape (c, n, n)."""
    A = smoother(positions, temperatures)
    shape = (temperatures.size, positions.size, positions.size)
    if not isinstance(A, np.ndarray) or A.shape != shape or not np.isfinite(A).all():
        raise ValueError(f"smoother must return finite weights of shape {shape} (temperatures, n, n), "
                         f"got {getattr(A, 'shape', type(A).__name__)}")
    return A


def region_mask(positions, region) -> np.ndarray:
    """Which positions lie inside a region of :data:`REGIONS` (bounds included).

    Parameters
    ----------
    positions : array_like, shape (n,)
    region : {"whole", "interior"}

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    low, high = REGIONS[as_choice(region, "region", REGIONS)]
    p = as_array(positions, "positions", ndim=1)
    return (p >= low) & (p <= high)


def risk(parts: ErrorParts, sigma, region="whole", *, expected=False):
    """Squared bias and variance, averaged over a region, for each temperature.

    Parameters
    ----------
    parts : ErrorParts
    sigma : float
        Noise standard deviation, ``>= 0``.
    region : {"whole", "interior"}
    expected : bool
        The exact expectation over the noise instead of the draws' estimate:
        the bias of the noise-free signal and ``sigma**2 sum_j A_ij**2``
        (needs ``parts.square_sums``).

    Returns
    -------
    bias2 : ndarray, shape (m,)
        Mean over the region of ``bias_i**2``.
    variance : ndarray, shape (m,)
        Mean over the region of ``variance_i``; ``bias2 + variance`` is the MSE.
    """
    if not isinstance(parts, ErrorParts):
        raise TypeError(f"parts must be the ErrorParts of monte_carlo_parts, got {type(parts).__name__}")
    sigma = as_nonnegative_scalar(sigma, "sigma")
    inside = region_mask(parts.positions, region)  # (n,)
    if as_flag(expected, "expected") and parts.square_sums is None:
        raise ValueError("expected: parts has no square_sums to compute the exact expectation from")
    noise_mean = 0.0 if expected else parts.noise_mean[:, inside]
    noise_var = parts.square_sums if expected else parts.noise_var
    with np.errstate(over="ignore", invalid="ignore"):
        bias = parts.smooth_bias[:, inside] + sigma * noise_mean  # (m, n_in)
        variance = sigma * sigma * noise_var[:, inside]  # (m, n_in)
        out = (bias**2).mean(axis=1), variance.mean(axis=1)
    return finite_result(out, f"sigma: the error at sigma = {sigma:g} overflows the double range")


def expected_risk(n, sigma, temperatures, region="whole", *, periods=1):
    """The exact expectation of :func:`risk` as the number of draws grows.

    Because the head is linear, ``E[A (f + sigma z)] = A f`` and
    ``Var[(A (f + sigma z))_i] = sigma**2 sum_j A_ij**2``, with no sampling.

    Parameters
    ----------
    n : int
        Number of samples on [0, 1], at least 2.
    sigma : float
        Noise standard deviation, ``>= 0``.
    temperatures : array_like, shape (m,)
        Temperatures ``tau > 0``.
    region : {"whole", "interior"}
    periods : float
        Periods of the sine ``f(p) = sin(2 pi periods p)``.

    Returns
    -------
    bias2, variance : ndarray, shape (m,)
        As :func:`risk` returns them, without Monte Carlo noise.
    """
    n = as_count(n, "n", minimum=2)
    sigma = as_nonnegative_scalar(sigma, "sigma")
    taus = as_temperatures(temperatures, "temperatures")
    p, f, _ = noisy_sine(n, 0.0, periods=periods)  # (n,), (n,): the clean sine
    inside = region_mask(p, region)
    memory.require_matrix(n, n, "n")
    out = np.empty((2, taus.size))
    for t, tau in enumerate(taus):
        with naming("temperatures", "temperature"):
            smoothed, A = gaussian_head(f, p, tau)
        with np.errstate(over="ignore"):
            out[:, t] = ((smoothed - f)[inside] ** 2).mean(), sigma * sigma * (A[inside] ** 2).sum(axis=1).mean()
    finite_result(out, f"sigma: the variance at sigma = {sigma:g} overflows the double range")
    return out[0], out[1]


def refined_argmin(temperatures, mse) -> float:
    r"""The temperature minimising an error curve, refined between grid points.

    A parabola in ``log tau`` through the smallest value and its two
    neighbours gives the minimum between grid points. With the three
    temperatures :math:`\tau_1 < \tau_2 < \tau_3` of the grid around its
    smallest error and their logarithms :math:`\ell_1, \ell_2, \ell_3`, the vertex is

    .. math:: \log \tau^* = \ell_2 - \frac{(\ell_2 - \ell_1)^2\, \big(\text{MSE}(\tau_2) - \text{MSE}(\tau_3)\big)
        - (\ell_2 - \ell_3)^2\, \big(\text{MSE}(\tau_2) - \text{MSE}(\tau_1)\big)}
        {2\,\big[(\ell_2 - \ell_1)\big(\text{MSE}(\tau_2) - \text{MSE}(\tau_3)\big)
        - (\ell_2 - \ell_3)\big(\text{MSE}(\tau_2) - \text{MSE}(\tau_1)\big)\big]},

    where the denominator is negative because :math:`\text{MSE}(\tau_2)` is the first smallest value.

    Parameters
    ----------
    temperatures : array_like, shape (m,)
        Increasing temperatures, ``m >= 3``.
    mse : array_like, shape (m,)
        The error curve, one value per temperature.

    Returns
    -------
    float
        The temperature at the vertex of the parabola.

    Raises
    ------
    ValueError
        If the minimum sits at either end of the grid (the grid is too narrow).
    """
    return refined_minimum(temperatures, mse)[0]


def refined_minimum(temperatures, mse):
    """:func:`refined_argmin`, and the parabola's value at its vertex: the least error between grid points.

    Parameters
    ----------
    temperatures : array_like, shape (m,)
    mse : array_like, shape (m,)
        As for :func:`refined_argmin`.

    Returns
    -------
    temperature : float
    error : float
        The parabola's value at ``temperature``; at most the least value of ``mse``.
    """
    taus = as_temperatures(temperatures, "temperatures")
    err = as_array(mse, "mse", ndim=1)
    if err.shape != taus.shape or taus.size < 3 or (np.diff(taus) <= 0).any():
        raise ValueError("temperatures must increase and match mse in length, with at least 3 values")
    k = int(np.argmin(err))
    if k in (0, taus.size - 1):
        raise ValueError(f"temperatures: the minimum is at the end of the grid (tau = {taus[k]:g}); widen it")
    x, y = np.log(taus[k - 1 : k + 2]), err[k - 1 : k + 2]
    scale = power_of_two(np.abs(y).max())
    y = y / scale  # exactly, to within (-2, 2): no overflow below
    numerator = (x[1] - x[0]) ** 2 * (y[1] - y[2]) - (x[1] - x[2]) ** 2 * (y[1] - y[0])
    denominator = (x[1] - x[0]) * (y[1] - y[2]) - (x[1] - x[2]) * (y[1] - y[0])
    vertex = np.clip(x[1] - numerator / (2 * denominator), x[0], x[2])
    # The parabola through the three points (Lagrange's form), at its vertex; never above y_1.
    value = sum(y[a] * np.prod([(vertex - x[b]) / (x[a] - x[b]) for b in range(3) if b != a]) for a in range(3))
    with np.errstate(over="ignore"):  # the least error may lie below -1.8e308: reported by name below
        error = finite_result(np.float64(min(value, y[1])) * scale, "mse: the least error between grid points "
                              "overflows the double range")
    return float(np.exp(vertex)), float(error)


def leading_bias(temperature, *, periods=1):
    """Leading-order bias of the head on ``f(p) = sin(2 pi periods p)``.

    At ``p = 0`` every neighbour lies on one side, at a mean distance of
    ``h sqrt(2 / pi)`` (a half-Gaussian), so the bias is first order in
    ``h``: ``f'(0) h sqrt(2 / pi)``. Away from the ends the two sides cancel
    to first order and the bias is ``h**2 f''(p) / 2``, largest in size
    where ``|f''|`` is, ``h**2 (2 pi periods)**2 / 2``.

    Parameters
    ----------
    temperature : float
        The head's ``tau > 0``; ``h = sqrt(tau / 2)``.
    periods : float
        Periods of the sine, ``> 0``.

    Returns
    -------
    end : float
        The bias at ``p = 0`` (positive: pulled up toward the inside).
    interior : float
        The largest size of the interior bias.
    """
    h = np.sqrt(as_temperature(temperature, "temperature") / 2)
    omega = 2 * np.pi * as_positive_scalar(periods, "periods")
    with np.errstate(over="ignore"):
        end, interior = omega * h * np.sqrt(2 / np.pi), h * h * omega * omega / 2
    finite_result((end, interior), "temperature and periods: the bias overflows the double range")
    return float(end), float(interior)
