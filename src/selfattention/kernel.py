r"""Kernel regression: the classical estimator the engineered head reproduces.

The Nadaraya-Watson estimator with a Gaussian kernel of bandwidth ``h``,

.. math:: \hat f(p) = \frac{\sum_j \kappa_h(p - p_j)\, s_j}{\sum_j \kappa_h(p - p_j)},
    \qquad \kappa_h(u) = \exp\!\left(-\frac{u^2}{2 h^2}\right),

is the engineered attention head with temperature ``tau = 2 h**2``
(:func:`temperature_to_bandwidth` converts back).
:func:`nadaraya_watson` is written from this formula, independently of the
attention code, so that the two can be checked against each other. The
temperature is picked by leave-one-out cross-validation, which for this
estimator is the head itself with the diagonal of its attention masked out.
The same search serves the Laplace kernel ``exp(-|p_i - p_j| / tau)``, the
weights of an ALiBi head of slope ``1 / tau``
(:func:`~selfattention.positional.alibi_head`).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from . import memory
from ._validation import (
    as_array,
    as_choice,
    as_temperature,
    as_temperatures,
    finite_result,
    power_of_two,
    same_length,
)
from .head import centre_positions

#: Candidate temperatures searched by :func:`choose_temperature` by default, and
#: by every "best tau" control of the book (the in-page explorer and the widget):
#: ``10**(k / 20)`` for ``k`` from -120 to 20, 1e-6 to 10, each computed in
#: 28-digit decimal arithmetic and rounded once to a double, the same on every
#: machine. (``np.logspace`` rounds through numpy's SIMD loops, whose last bits
#: depend on the processor; the explorer embeds the candidates of the machine
#: that built the site, the widget uses those of the reader's kernel.)
DEFAULT_CANDIDATES = np.array([float(Decimal(10) ** (Decimal(k) / 20)) for k in range(-120, 21)])
#: Leave-one-out errors within this relative distance of the least one are tied;
#: :func:`pick_temperature` then takes the largest tied temperature, the
#: smoothest output. The in-page explorer applies the same rule.
TIE_TOLERANCE = 1e-9
#: The kernels :func:`leave_one_out_scores` searches: each query's scores before
#: dividing by the temperature, as a function of the distance ``|p_i - p_j|``.
KERNELS = {"gaussian": "-(p_i - p_j)**2", "laplace": "-|p_i - p_j|"}
#: Entries of the (candidates, n, n) weight blocks of :func:`leave_one_out_scores`.
_BLOCK = 2**22


def nadaraya_watson(x_query, x, y, bandwidth):
    """Gaussian-kernel Nadaraya-Watson estimate at ``x_query``.

    Parameters
    ----------
    x_query : array_like, shape (m,)
        Where to estimate.
    x : array_like, shape (n,)
        Sample locations.
    y : array_like, shape (n,)
        Sample values.
    bandwidth : float
        Kernel standard deviation ``h > 0``.

    Returns
    -------
    estimate : ndarray, shape (m,)
    weights : ndarray, shape (m, n)
        Normalised kernel weights; row ``i`` sums to 1.
    """
    xq, x, y, h = _as_samples(x_query, x, y, bandwidth)
    memory.require_matrix(xq.size, x.size, "x_query and x")
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        d = finite_result(np.abs(xq[:, None] - x[None, :]), _FAR)  # (m, n)
        d_min = d.min(axis=1, keepdims=True)  # (m, 1): the nearest sample
        # log K_h(d) - log K_h(d_min) = -(d**2 - d_min**2) / (2 h**2),
        # factored so that it cannot overflow
        log_k = -0.5 * ((d - d_min) / h) * (d / h + d_min / h)
        log_k[d == d_min] = 0.0  # the nearest sample gets exp(0) = 1
        k = np.exp(log_k)  # (m, n)
        weights = k / k.sum(axis=1, keepdims=True)
        # an average of y lies within y's range, whatever the rounding
        estimate = np.clip(weights @ y, y.min(), y.max())
    return estimate, weights


#: What :func:`nadaraya_watson` says when a distance leaves the double range.
_FAR = "x_query and x: a distance overflows"


def _as_samples(x_query, x, y, bandwidth):
    """:func:`nadaraya_watson`'s arguments checked: three 1-D arrays (``x`` and ``y`` alike, not empty), ``h > 0``."""
    xq = as_array(x_query, "x_query", ndim=1)
    x = as_array(x, "x", ndim=1)
    y = as_array(y, "y", ndim=1)
    same_length(x, y, "x", "y")
    if x.size == 0:
        raise ValueError("x must hold at least one sample")
    return xq, x, y, as_temperature(bandwidth, "bandwidth")


def temperature_to_bandwidth(temperature) -> float:
    """``h = sqrt(tau / 2)``: the bandwidth equivalent to a temperature."""
    return float(np.sqrt(as_temperature(temperature, "temperature") / 2.0))


def bandwidth_to_temperature(bandwidth) -> float:
    """``tau = 2 h**2``: the temperature whose rows are Gaussians of standard deviation ``h``."""
    h = as_temperature(bandwidth, "bandwidth")
    with np.errstate(over="ignore", under="ignore"):
        tau = 2.0 * np.square(h)
    if not 0 < tau < np.inf:
        raise ValueError(f"bandwidth {h!r} gives a temperature 2 h**2 outside the double range")
    return float(tau)


def candidate_temperatures(candidates=None) -> np.ndarray:
    """The temperatures a leave-one-out search tries, checked.

    Parameters
    ----------
    candidates : array_like, shape (m,), optional
        Temperatures, all ``> 0``; :data:`DEFAULT_CANDIDATES` when omitted.

    Returns
    -------
    ndarray, shape (m,)
    """
    return DEFAULT_CANDIDATES if candidates is None else as_temperatures(candidates, "candidates")


def leave_one_out_scores(signal, positions, candidates=None, *,
                         kernel="gaussian") -> np.ndarray:
    r"""Leave-one-out error of the masked head for many temperatures at once.

    Leave-one-out predicts every sample from all the others: it is the
    engineered head with the diagonal of its attention masked out,

    .. math:: \mathrm{LOO}(\tau) = \frac{1}{N} \sum_i
        \Big(s_i - \sum_{j \ne i} a^{(-i)}_{ij} s_j\Big)^2 .

    The head's scores ``-(p_i - p_j)**2`` (or, for the Laplace kernel,
    ``-|p_i - p_j|``) are computed once, from the
    distances themselves (the same numbers as the head's projections give,
    without the rounding of the expanded square), shifted so that each row's
    largest is 0 (its nearest other sample), with ``-inf`` on the diagonal.
    Each block of candidates then costs one batched softmax (exponentials,
    divided by their row sums) and one batched product with the signals.

    Cost: ``m n**2`` exponentials for ``m`` candidates and ``n`` samples, and
    memory for ``n**2`` scores plus blocks of ``2**22`` weights; about 1 s at
    ``n = 1000`` with the 141 default candidates on the book's 2-core
    machine (``benchmarks/bench_kernel_chapter.py``).

    Parameters
    ----------
    signal : array_like, shape (n,) or (k, n)
        One signal, or ``k`` signals sampled at the same positions; ``n >= 2``.
    positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        Temperatures ``> 0``; :data:`DEFAULT_CANDIDATES` when omitted.
    kernel : {"gaussian", "laplace"}
        The weights ``exp(-(p_i - p_j)**2 / tau)`` of the engineered head, or
        ``exp(-|p_i - p_j| / tau)`` of the ALiBi head of slope ``1 / tau``
        (:data:`KERNELS`).

    Returns
    -------
    scores : ndarray, shape (m,) or (k, m)
        ``scores[..., t]`` is the leave-one-out mean squared error at ``candidates[t]``.
    """
    s = _as_signals(signal)  # (n,) or (k, n)
    taus = candidate_temperatures(candidates)
    kernel = as_choice(kernel, "kernel", KERNELS)
    # errors scale as signal**2: compute them on signal / scale, exactly
    scale = power_of_two(np.abs(s).max())
    S = np.atleast_2d(s) / scale  # (k, n)
    # (n, n): row maxima 0, and -inf on the diagonal: no token sees itself
    scores = _masked_scores(positions, S.shape[1], kernel)
    errors = np.empty((S.shape[0], taus.size))  # (k, m)
    step = max(1, _BLOCK // scores.size)  # candidates per batch
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, taus.size, step):
            block = taus[start : start + step]  # (c,)
            weights = scores / block[:, None, None]  # (c, n, n)
            np.exp(weights, out=weights)  # the softmax's numerators
            total = weights.sum(axis=-1)[..., None]  # (c, n, 1)
            prediction = (weights @ S.T) / total  # (c, n, k)
            squared = (S.T - prediction) ** 2  # (c, n, k)
            errors[:, start : start + step] = np.mean(squared, axis=1).T
        errors *= scale  # twice, so that a zero error stays 0
        errors *= scale
    finite_result(errors, "signal: its leave-one-out errors overflow the "
                  f"double range (|signal| up to {scale:.3g})")
    return errors[0] if s.ndim == 1 else errors


def _as_signals(signal) -> np.ndarray:
    """``signal`` checked: shape (n,) or (k, n), with n >= 2."""
    s = as_array(signal, "signal")
    if s.ndim not in (1, 2) or s.shape[-1] < 2:
        raise ValueError(f"signal must have shape (n,) or (k, n) with n >= 2, got {s.shape}")
    return s


def _masked_scores(positions, n: int, kernel: str = "gaussian") -> np.ndarray:
    """``-d_ij + min_{k != i} d_ik``, with ``-inf`` on the diagonal: (n, n).

    ``d_ij`` is ``(p_i - p_j)**2`` for the Gaussian kernel, ``|p_i - p_j|`` for the Laplace kernel.
    """
    p = centre_positions(positions)  # checks them; the shift changes no distance
    if p.size != n:
        raise ValueError(f"signal and positions must have the same length, got {n} and {p.size}")
    memory.require(24 * (n * n + _BLOCK), "positions", f"the {n} x {n} leave-one-out scores (n = {n})")
    distance = np.abs(p[:, None] - p[None, :])  # (n, n)
    scores = -(distance**2 if kernel == "gaussian" else distance)  # (n, n)
    np.fill_diagonal(scores, -np.inf)  # token i may not attend to itself
    scores -= scores.max(axis=1, keepdims=True)  # the nearest other sample gets exp(0) = 1
    return scores


def pick_temperature(scores, candidates):
    """The largest candidate whose score is within :data:`TIE_TOLERANCE` of the least.

    Leave-one-out errors that differ only by rounding must not decide the
    choice: among the candidates tied with the least error (relatively
    within ``TIE_TOLERANCE``), the largest temperature, the smoothest output, wins.

    Parameters
    ----------
    scores : array_like, shape (m,) or (k, m)
        Leave-one-out errors, as from :func:`leave_one_out_scores`.
    candidates : array_like, shape (m,)

    Returns
    -------
    float, or ndarray of shape (k,)
    """
    taus = as_temperatures(candidates, "candidates")
    err = as_array(scores, "scores")
    if err.ndim not in (1, 2) or err.shape[-1] != taus.size:
        raise ValueError(f"scores must have shape (m,) or (k, m) with m = {taus.size}, got {err.shape}")
    if (err < 0).any():
        raise ValueError("scores must not be negative (they are mean squared errors)")
    with np.errstate(over="ignore"):  # a least error near the largest double: everything within inf is tied
        tied = err <= err.min(axis=-1, keepdims=True) * (1 + TIE_TOLERANCE)
    best = np.max(np.where(tied, taus, -np.inf), axis=-1)
    return float(best) if err.ndim == 1 else best


def choose_temperature(signal, positions, candidates=None, *, kernel="gaussian"):
    """Pick the temperature by leave-one-out cross-validation.

    Each candidate is scored by how well the head, with its diagonal masked
    out, predicts every sample from all the others
    (:func:`leave_one_out_scores`); the noise on sample ``i`` then never
    helps to predict sample ``i``, so the score cannot reward copying it.

    Cost: as :func:`leave_one_out_scores`, quadratic in ``n`` in time and
    memory: each of the ``m`` candidates exponentiates an ``n x n`` matrix,
    ``m n**2`` exponentials in all. With the 141 default candidates that is
    about 1 s at ``n = 1000`` on the book's 2-core machine
    (``benchmarks/bench_kernel_chapter.py`` measures it from ``n = 250`` to
    2000). The ``n x n`` scores are refused, before they are allocated,
    beyond :mod:`selfattention.memory`'s limit.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The noisy observations, ``n >= 2``.
    positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        Temperatures to try, all ``> 0``; :data:`DEFAULT_CANDIDATES`
        (log-spaced from 1e-6 to 10) when omitted.
    kernel : {"gaussian", "laplace"}
        As in :func:`leave_one_out_scores`: the engineered head's temperature,
        or ``1 / zeta`` for the ALiBi head of slope ``zeta``.

    Returns
    -------
    best_tau : float
        The candidate with the lowest leave-one-out error; of candidates
        tied with it to within :data:`TIE_TOLERANCE` (relatively), the
        largest (:func:`pick_temperature`).
    scores : ndarray, shape (m,)
        The leave-one-out mean squared error of each candidate.
    """
    s = as_array(signal, "signal", ndim=1)
    p = as_array(positions, "positions", ndim=1)
    same_length(s, p, "signal", "positions")
    taus = candidate_temperatures(candidates)
    scores = leave_one_out_scores(s, p, taus, kernel=kernel)  # (m,)
    return pick_temperature(scores, taus), scores
