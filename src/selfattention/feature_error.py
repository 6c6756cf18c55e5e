r"""How far the cosine head's random features stray: at the worst pair, and in the head's ratio.

The features :math:`\psi` of :func:`~selfattention.random_features.fourier_features`, ``D`` frequencies
drawn from :math:`\mathcal N(0, 2/\tau)`, estimate the kernel at every pair. Rahimi and Recht (2007,
their Claim 1) give a bound of this form on the chance that the largest error over all pairs of a set of
points in ``d_k`` dimensions whose two farthest points lie :math:`\operatorname{diam}` apart reaches a
tolerance :math:`\text{tol}`:

.. math:: \mathbb{P}\big(\text{err}_\infty \ge \text{tol}\big) \le 2^8\,
    \frac{\mathbb{E} \lVert \omega \rVert^2\, \operatorname{diam}^2}{\text{tol}^2}
    \exp\Big(-\frac{D\, \text{tol}^2}{4 (d_k + 2)}\Big)

It applies to these features: with a cosine and a sine for each frequency, the estimate
:math:`\psi(p) \cdot \psi(p') = \frac1D \sum_r \cos(\omega_r \cdot (p - p'))` depends on
:math:`p - p'` alone, each term in :math:`[-1, 1]`. A proof covers the differences with small balls, applies
Hoeffding's inequality at their centres and Markov's to the slope of the error between them, and chooses
the radius to balance the two; when :math:`\sqrt{\mathbb{E} \lVert \omega \rVert^2}\, \operatorname{diam}
\ge \text{tol}`, what remains is at most the right-hand side above. (Random-phase features'
estimate depends on :math:`p + p'` as well.)

:func:`uniform_bound` solves it for the tolerance at a given chance, :func:`uniform_bound_count` for
``D`` at a given tolerance; :func:`sup_error` measures
:math:`\text{err}_\infty` on given positions.

The head's output is a ratio, :math:`\text{num}_i / \text{den}_i`, of two averages over the
frequencies, whose means are the exact head's numerator and denominator. To first order in their
errors (the delta method) its variance is that of :math:`\text{num}_i - \text{output}_i\, \text{den}_i`
over :math:`(\mathbb{E}\, \text{den}_i)^2`, with :math:`\text{output}_i` the exact head's.
:func:`frequency_moments` gives the exact moments of the two at ``D = 1``, from

.. math:: \mathbb{E}\big[\cos(\omega u) \cos(\omega u')\big] = \tfrac12 \big(\kappa_h(u - u')
    + \kappa_h(u + u')\big),

with :math:`\kappa_h(u) = \exp(-u^2 / \tau)`, the head's kernel at its bandwidth :math:`h = \sqrt{\tau / 2}`

(:func:`~selfattention.delta_method.cosine_product_mean` derives it); :func:`delta_sd` the standard
deviation of the output they predict.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import (
    as_count,
    as_positive_scalar,
    as_series,
    as_temperature,
    finite_result,
    power_of_two,
    same_length,
)
from .random_features import fourier_features

#: The constant of the uniform bound (the form of Rahimi and Recht's Claim 1), :math:`2^8`.
CLAIM_CONSTANT = 2.0**8


def uniform_bound(failure, count, dims, second_moment, diameter) -> float:
    r"""The tolerance that the uniform bound (the form of Rahimi and Recht's Claim 1) gives at a chance of failure.

    The :math:`\text{tol}` at which the bound's right-hand side equals ``failure``:

    .. math:: 2^8\, \frac{\mathbb{E} \lVert \omega \rVert^2\, \operatorname{diam}^2}{\text{tol}^2}
        \exp\Big(-\frac{D\, \text{tol}^2}{4 (d_k + 2)}\Big) = \text{failure}

    With ``a = D / (4 (d_k + 2))`` and ``x = a tol**2`` it reads ``x + log x = L``,
    ``L = log(2**8 second_moment diameter**2 a / failure)``, solved by Newton's method in ``log x``
    (convex and increasing there, so the steps converge from any start). The left-hand side falls
    as the tolerance grows: at most ``failure`` of the draws of ``D`` frequencies have a largest
    error at or above the result. The bound holds in this form when
    :math:`\sqrt{\mathbb{E} \lVert \omega \rVert^2}\, \operatorname{diam} \ge \text{tol}`; it is up
    to the caller to check that.

    Parameters
    ----------
    failure : float
        The chance, in (0, 1].
    count : int
        ``D``, the frequencies (each a cosine and a sine).
    dims : int
        ``d_k``, the dimension of the positions or keys.
    second_moment : float
        :math:`\mathbb{E} \lVert \omega \rVert^2`, ``2 d_k / tau`` for the Gaussian kernel.
    diameter : float
        :math:`\operatorname{diam}`, the largest distance between two points of the set.

    Returns
    -------
    float
        :math:`\text{tol}`.
    """
    chance = as_positive_scalar(failure, "failure")
    if chance > 1:
        raise ValueError(f"failure must be a chance, at most 1, got {chance!r}")
    count, dims = as_count(count, "count"), as_count(dims, "dims")
    moment = as_positive_scalar(second_moment, "second_moment")
    diam = as_positive_scalar(diameter, "diameter")
    log_a = np.log(count) - np.log(4.0 * (dims + 2))
    level = np.log(CLAIM_CONSTANT) + np.log(moment) + 2 * np.log(diam) + log_a - np.log(chance)  # L
    y = np.log(level) if level > 1 else level  # log x; x + log x = L
    for _ in range(200):
        step = (np.exp(y) + y - level) / (np.exp(y) + 1)
        y -= step
        if abs(step) <= 1e-15 * max(1.0, abs(y)):
            break
    return float(np.exp((y - log_a) / 2))  # tol = sqrt(x / a): no overflow, at worst 0


def uniform_bound_count(tolerance, failure, dims, second_moment, diameter) -> float:
    r"""The ``D`` at which the uniform bound (the form of Rahimi and Recht's Claim 1) gives a tolerance.

    The bound's right-hand side is at most ``failure`` from

    .. math:: D = \frac{4 (d_k + 2)}{\text{tol}^2} \log\Big(2^8\, \frac{\mathbb{E} \lVert \omega \rVert^2\,
        \operatorname{diam}^2}{\text{tol}^2\, \text{failure}}\Big)

    on (0 where the logarithm is negative: any ``D`` will do), as a real number.

    Parameters
    ----------
    tolerance : float
        :math:`\text{tol} > 0`.
    failure : float
        The chance, in (0, 1].
    dims : int
        ``d_k``.
    second_moment : float
        :math:`\mathbb{E} \lVert \omega \rVert^2`.
    diameter : float

    Returns
    -------
    float
    """
    tol = as_positive_scalar(tolerance, "tolerance")
    chance = as_positive_scalar(failure, "failure")
    if chance > 1:
        raise ValueError(f"failure must be a chance, at most 1, got {chance!r}")
    dims = as_count(dims, "dims")
    moment = as_positive_scalar(second_moment, "second_moment")
    diam = as_positive_scalar(diameter, "diameter")
    log_tol = np.log(tol)
    level = np.log(CLAIM_CONSTANT) + np.log(moment) + 2 * np.log(diam) - 2 * log_tol - np.log(chance)
    if level <= 0:
        return 0.0
    with np.errstate(over="ignore"):
        count = 4.0 * (dims + 2) * level * np.exp(-2 * log_tol)
    return float(finite_result(count, "tolerance: the frequencies it needs leave the double range"))


def sup_error(positions, frequencies, temperature) -> float:
    r"""The largest error of the features' kernel over all pairs of positions, :math:`\text{err}_\infty`.

    .. math:: \text{err}_\infty = \max_{i, j} \big|\psi(p_i) \cdot \psi(p_j)
        - \exp(-(p_i - p_j)^2 / \tau)\big|

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies : array_like, shape (D,)
        Positive, as from :func:`~selfattention.random_features.gaussian_frequencies`.
    temperature : float

    Returns
    -------
    float
    """
    (p,) = as_series(positions=positions)
    tau = as_temperature(temperature, "temperature")
    kernel, _ = _kernels(p, tau)  # (n, n)
    psi = fourier_features(p - np.median(p), frequencies)  # (n, 2D): differences only matter
    return float(np.abs(psi @ psi.T - kernel).max())


def frequency_moments(signal, positions, temperature) -> dict:
    r"""The exact moments of the head's estimated numerator and denominator at one frequency, at every query.

    At ``D = 1`` (:math:`\omega \sim \mathcal N(0, 2/\tau)`),
    :math:`\text{num}_i = \sum_j \cos(\omega (p_i - p_j))\, s_j` and
    :math:`\text{den}_i = \sum_j \cos(\omega (p_i - p_j))`; ``D`` frequencies average ``D`` such
    draws, which keeps the means and divides the variances and the covariance by ``D``. The cosines
    of keys ``j`` and ``l`` have the covariance

    .. math:: \tfrac12 \big(\kappa_h(p_j - p_l) + \kappa_h(2 p_i - p_j - p_l)\big)
        - \kappa_h(p_i - p_j)\, \kappa_h(p_i - p_l),

    with :math:`\kappa_h(u) = \exp(-u^2/\tau)` (:math:`h = \sqrt{\tau/2}`); summed against
    :math:`s_j s_l`, :math:`s_j` and 1 it gives :math:`\operatorname{Var} \text{num}_i`,
    :math:`\operatorname{Cov}(\text{num}_i, \text{den}_i)` and :math:`\operatorname{Var} \text{den}_i`.
    Time grows as ``n**3``.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float

    Returns
    -------
    dict
        ``"mean_num"``, ``"mean_den"``, ``"var_num"``, ``"cov"``, ``"var_den"``: each (n,), at ``D = 1``.
    """
    s, p = as_series(signal=signal, positions=positions)
    same_length(s, p, "signal", "positions")
    tau = as_temperature(temperature, "temperature")
    scale = power_of_two(float(np.max(np.abs(s))))
    kernel, pairs = _kernels(p, tau)
    values = np.column_stack([s / scale, np.ones_like(s)])  # (n, 2)
    means = kernel @ values  # (n, 2): E X, E Y
    found = np.empty((p.size, 3))
    for i in range(p.size):
        m = (kernel + pairs(i)) / 2 - np.outer(kernel[i], kernel[i])  # (n, n): M^(i)
        second = values.T @ m @ values  # (2, 2)
        found[i] = second[0, 0], second[0, 1], second[1, 1]
    with np.errstate(over="ignore", invalid="ignore"):
        moments = {"mean_num": means[:, 0] * scale, "mean_den": means[:, 1], "var_num": found[:, 0] * scale * scale,
                   "cov": found[:, 1] * scale, "var_den": found[:, 2]}
    for name, value in moments.items():
        finite_result(value, f"signal: the moment {name} leaves the double range")
    return moments


def delta_sd(signal, positions, temperature, count) -> np.ndarray:
    r"""The delta method's standard deviation of the cosine head's output, for ``D`` frequencies.

    .. math:: \operatorname{Var} \frac{\text{num}_i}{\text{den}_i} \approx
        \frac{\operatorname{Var} \text{num}_i - 2\, \text{output}_i \operatorname{Cov}(\text{num}_i,
        \text{den}_i) + \text{output}_i^2 \operatorname{Var} \text{den}_i}{(\mathbb{E}\, \text{den}_i)^2}

    with the moments of :func:`frequency_moments` over ``D`` and :math:`\text{output}_i =
    \mathbb{E}\,\text{num}_i / \mathbb{E}\,\text{den}_i`, the exact head's. The numerator is the
    variance of :math:`\text{num}_i - \text{output}_i\, \text{den}_i`, whose mean is 0: computed as
    its mean square, ``1 / D`` times

    .. math:: \tfrac12 \sum_{j, l} (s_j - \text{output}_i)(s_l - \text{output}_i)
        \big(\kappa_h(p_j - p_l) + \kappa_h(2 p_i - p_j - p_l)\big),

    a sum that cannot cancel below 0.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    count : int
        ``D``.

    Returns
    -------
    ndarray, shape (n,)
    """
    s, p = as_series(signal=signal, positions=positions)
    same_length(s, p, "signal", "positions")
    tau = as_temperature(temperature, "temperature")
    count = as_count(count, "count")
    scale = power_of_two(float(np.max(np.abs(s))))
    kernel, pairs = _kernels(p, tau)
    den = kernel.sum(axis=1)  # (n,): E Y, at least 1
    output = kernel @ (s / scale) / den  # (n,): the exact head's, within s / scale
    square = np.empty(p.size)
    for i in range(p.size):
        c = s / scale - output[i]  # (n,)
        square[i] = c @ (kernel + pairs(i)) @ c / 2  # E (X - output Y)**2
    with np.errstate(over="ignore"):
        sd = np.sqrt(np.maximum(square, 0.0) / count) / den * scale
    return finite_result(sd, "signal: the standard deviation leaves the double range")


def _kernels(p: np.ndarray, tau: float):
    """``k(p_l - p_j)`` (n, n), and a function of ``i`` giving ``k(2 p_i - p_j - p_l)`` (n, n)."""
    memory.require_matrix(p.size, p.size, "positions", count=4)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        z = finite_result((p - np.median(p)) / np.sqrt(tau),
                          "positions and temperature: (p - median) / sqrt(tau) leaves the double range")
        gaps = finite_result(z[:, None] - z[None, :], "positions and temperature: a difference "
                             "(p_i - p_j) / sqrt(tau) leaves the double range")  # (n, n)
    with np.errstate(over="ignore", under="ignore"):
        kernel = np.exp(-(gaps**2))  # (n, n)

    def pairs(i: int) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            both = gaps[i][:, None] + gaps[i][None, :]  # (n, n): (2 p_i - p_j - p_l) / sqrt(tau)
            return np.exp(-(both**2))  # a sum that overflows: two far keys, weight 0
    return kernel, pairs
