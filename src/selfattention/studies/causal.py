r"""Causal heads: what a head that may look only at the past does to a signal, and to its next sample.

With the causal mask (:func:`~selfattention.core.causal_mask`) every row of
the Gaussian head is half a bell, behind its query: the output lags the
signal. An offset ``delta > 0`` centres the bell ahead of the query
(:func:`~selfattention.head.gaussian_head`), which the mask cuts at the
query: the row is steeper, its lag smaller, and it averages fewer samples.
:func:`offset_sweep` measures the three; :func:`matching_temperature` finds
the narrower band without offset that averages as many. A causal head's
output at token ``i`` is a prediction of the next sample, which it never
saw (:func:`next_token`).
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_count,
    as_real_scalar,
    as_series,
    as_temperature,
    as_temperatures,
    finite_result,
    naming,
    power_of_two,
)
from ..core import causal_mask
from ..head import gaussian_head
from ..kernel import candidate_temperatures, pick_temperature
from ..metrics import effective_neighbours, mean_offset, rmse


def _causal_mask(n: int):
    """The causal mask of ``n`` positions, refused by name (``positions``) before the heads' memory is allocated."""
    memory.require_matrix(n, n, "positions")
    return causal_mask(n)


def _row(row, n: int) -> int:
    i = n // 2 if row is None else as_count(row, "row", minimum=0)
    if i >= n:
        raise ValueError(f"row must be below the number of positions {n}, got {row!r}")
    return i


def offset_sweep(signal, clean, positions, temperature, offsets, row=None) -> dict:
    r"""The causal Gaussian head at each offset: its lag, its effective neighbours, its error.

    The lag of row ``i`` is minus its mean offset,
    :math:`-\sum_j a^{(\le i)}_{ij} (p_j - p_i)`.

    Parameters
    ----------
    signal, clean, positions : array_like, shape (n,)
    temperature : float
    offsets : array_like, shape (m,)
        The offsets ``delta`` to try.
    row : int, optional
        The query whose lag and ``N_eff`` are reported; the middle one when omitted.

    Returns
    -------
    dict of str -> ndarray, shape (m,)
        ``"lag"``, ``"neighbours"`` (of ``row``) and ``"rmse"`` (against ``clean``, every token).
    """
    s, f, p = as_series(signal=signal, clean=clean, positions=positions)
    deltas = as_array(offsets, "offsets", ndim=1)
    mask, i = _causal_mask(p.size), _row(row, p.size)
    lags, neighbours, errors = [], [], []
    for delta in deltas:
        with naming("offsets", "offset"):
            output, weights = gaussian_head(s, p, temperature, offset=delta, mask=mask)
        lags.append(-mean_offset(weights, p)[i])
        neighbours.append(effective_neighbours(weights)[i])
        with naming("signal and clean", "estimate and truth"):  # the output, from signal, against clean
            errors.append(rmse(output, f))
    return {"lag": np.array(lags), "neighbours": np.array(neighbours), "rmse": np.array(errors)}


def matching_temperature(positions, temperature, offset, row=None) -> float:
    """The temperature of the causal head without offset whose row averages as many samples.

    The causal head at ``temperature`` and ``offset`` has some ``N_eff`` in
    ``row``; a narrower causal band without offset has fewer. Bisection on
    ``log tau`` (``N_eff`` grows with ``tau``), to a relative 1e-9.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
    offset : float
        ``delta >= 0``.
    row : int, optional

    Returns
    -------
    float
        In ``[temperature * 1e-6, temperature]``.
    """
    (p,) = as_series(positions=positions)
    tau, delta = as_temperature(temperature, "temperature"), as_real_scalar(offset, "offset")
    if delta < 0:
        raise ValueError(f"offset must not be negative (a band behind the query averages more), got {offset!r}")
    mask, i, zeros = _causal_mask(p.size), _row(row, p.size), np.zeros_like(p)

    def neighbours(t, d=0.0):
        return effective_neighbours(gaussian_head(zeros, p, t, offset=d, mask=mask)[1])[i]

    target = neighbours(tau, delta)
    low, high = np.log(tau * 1e-6), np.log(tau)
    while high - low > 1e-9:
        middle = (low + high) / 2
        low, high = (middle, high) if neighbours(np.exp(middle)) < target else (low, middle)
    return float(np.exp(high))


def delayed_rmse(estimate, positions, lag, periods=1.0) -> float:
    r"""The error of ``estimate`` against the book's sine delayed by ``lag``.

    .. math:: \sqrt{\tfrac1N \textstyle\sum_i \big(\hat f(p_i) - f(p_i - \text{lag})\big)^2},
        \qquad f(p) = \sin(2 \pi \cdot \text{periods} \cdot p)

    Parameters
    ----------
    estimate, positions : array_like, shape (n,)
    lag : float
    periods : float

    Returns
    -------
    float
    """
    e, p = as_series(estimate=estimate, positions=positions)
    lag, periods = as_real_scalar(lag, "lag"), as_real_scalar(periods, "periods")
    with np.errstate(over="ignore", invalid="ignore"):
        delayed = np.sin(2 * np.pi * periods * (p - lag))  # (n,)
    if not np.isfinite(delayed).all():
        raise ValueError("positions, lag and periods: a phase of the delayed sine overflows the double range")
    return rmse(e, delayed)


def next_token_errors(signal, positions, temperatures, offset=0.0) -> np.ndarray:
    r"""The mean squared error of the causal head's output at token ``i`` as a prediction of ``s_{i+1}``.

    .. math:: \frac{1}{N - 1} \sum_{i=1}^{N-1} \Big(\sum_{j \le i} a^{(\le i)}_{ij} s_j - s_{i+1}\Big)^2

    No row sees the sample it predicts, so, like leave-one-out, this error
    needs no ground truth: in expectation it is the error against
    ``f(p_{i+1})`` plus ``sigma**2``.

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
        ``n >= 2``.
    temperatures : array_like, shape (m,)
    offset : float
        ``delta`` of every head.

    Returns
    -------
    ndarray, shape (m,)
    """
    s, p = as_series(signal=signal, positions=positions)
    if s.size < 2:
        raise ValueError("signal must hold at least two samples: one to predict from, one to predict")
    taus, mask = as_temperatures(temperatures, "temperatures"), _causal_mask(p.size)
    errors = []
    for tau in taus:
        with naming("temperatures", "temperature"):
            output, _ = gaussian_head(s, p, tau, offset=offset, mask=mask)
        with np.errstate(over="ignore"):
            miss = output[:-1] - s[1:]  # (n - 1,): each row's miss of the next sample
            scale = power_of_two(float(np.max(np.abs(miss))))  # so that the squares cannot overflow
            errors.append(scale * scale * np.mean((miss / scale) ** 2))
    return finite_result(np.array(errors), "signal: its next-sample errors overflow the double range")


def next_token(signal, clean, positions, candidates=None) -> dict:
    """The causal Gaussian head as a next-sample predictor, its temperature chosen by its next-sample error.

    Parameters
    ----------
    signal, clean, positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        Temperatures; :data:`~selfattention.kernel.DEFAULT_CANDIDATES` when omitted.
        Of those tied (:func:`~selfattention.kernel.pick_temperature`), the largest.

    Returns
    -------
    dict
        ``"temperature"``; ``"prediction"`` (n - 1,), of ``s_2, ..., s_N``;
        ``"rmse_noisy"`` and ``"rmse_clean"``: its errors against the next
        samples and against the next clean values; ``"rmse_copy"``: the error
        of predicting each sample by the one before it.
    """
    s, f, p = as_series(signal=signal, clean=clean, positions=positions)
    taus = candidate_temperatures(candidates)
    with naming("candidates", "temperatures"):
        tau = pick_temperature(next_token_errors(s, p, taus), taus)
    output, _ = gaussian_head(s, p, tau, mask=_causal_mask(p.size))
    prediction = output[:-1]  # (n - 1,): row i predicts sample i + 1
    # next_token_errors refused a signal whose next-sample errors overflow, and those bound the errors
    # from signal alone (row 0 predicts s_1 by s_0); the error against clean may still overflow.
    with naming("signal and clean", "estimate and truth"):
        error_clean = rmse(prediction, f[1:])
    return {"temperature": tau, "prediction": prediction, "rmse_noisy": rmse(prediction, s[1:]),
            "rmse_clean": error_clean, "rmse_copy": rmse(s[:-1], s[1:])}
