r"""Tuning and training heads on a second noisy draw instead of the ground truth (Noise2Noise).

Each signal is observed twice, :math:`s_i = f(p_i) + \sigma z_i` and
:math:`s'_i = f(p_i) + \sigma z'_i` with independent noise. A head averages
the first draw and is scored against the second: since its output does not
depend on :math:`z'_i`,
:math:`\mathbb E[(\text{output}_i - s'_i)^2] = \mathbb E[(\text{output}_i - f(p_i))^2] + \sigma^2`,
so the criterion has the minimisers of the error against the ground truth,
in expectation, without knowing :math:`f`. The engineered heads' temperatures
are chosen by it, and learned heads are trained on it
(:func:`~selfattention.training.fit_head` with ``targets``).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_flag, as_instance, as_temperatures, finite_result, naming
from ..learning import BYTES_PER_ENTRY as BACKPROP_BYTES
from ..learning import learned_head, token_features
from ..training import FitResult, fit_head
from .content_attention import StepSignals, _require_memory, bilateral_outputs, gaussian_outputs


def best_temperatures(signals: StepSignals, temperatures, signal_temperatures):
    """The engineered heads' temperatures that best predict the second draws of ``signals``.

    The heads average the first noisy draw; their error is measured against
    the second, independent draw, the same criterion the learned heads are
    trained on. Its expectation is the error against the clean signals plus
    ``sigma**2``, so the best temperatures are the same in expectation.

    Parameters
    ----------
    signals : StepSignals
    temperatures : array_like, shape (a,)
        Candidates for the Gaussian head's ``tau`` and the bilateral head's ``tau_p``.
    signal_temperatures : array_like, shape (b,)
        Candidates for ``tau_s``.

    Returns
    -------
    gaussian : float
        The Gaussian head's best ``tau``.
    bilateral : tuple of float
        The bilateral head's best ``(tau_p, tau_s)``.
    """
    _require_memory(signals, count=1)
    taus_p = as_temperatures(temperatures, "temperatures")
    taus_s = as_temperatures(signal_temperatures, "signal_temperatures")
    with naming("temperatures", "temperature"), naming("signal_temperatures", "signal_temperature"):
        gauss = [_second_draw_mse(gaussian_outputs(signals, tau), signals) for tau in taus_p]  # (a,)
        grid = np.array([[_second_draw_mse(bilateral_outputs(signals, tp, ts), signals) for ts in taus_s]
                         for tp in taus_p])  # (a, b)
    a, b = np.unravel_index(np.argmin(grid), grid.shape)
    return float(taus_p[np.argmin(gauss)]), (float(taus_p[a]), float(taus_s[b]))


def _second_draw_mse(estimates, signals: StepSignals) -> float:
    """Mean squared error of ``estimates`` (k, n) against the second draws."""
    return float(np.mean((estimates - signals.second) ** 2))


def head_features(signals: StepSignals, *, content: bool) -> np.ndarray:
    """The learned heads' tokens for every noisy signal (:func:`~selfattention.learning.token_features`).

    Parameters
    ----------
    signals : StepSignals
    content : bool
        ``[s, s^2, pt, pt^2, 1]`` when True, ``[pt, pt^2, 1]`` when False.

    Returns
    -------
    ndarray, shape (k, n, 5) or (k, n, 3)
    """
    s = as_instance(signals, "signals", StepSignals).noisy
    if as_flag(content, "content"):
        return token_features(signals.positions, s, signal_square=True)  # (k, n, 5)
    return np.broadcast_to(token_features(signals.positions), (*s.shape, 3))  # (k, n, 3)


def learned_outputs(fit: FitResult, signals: StepSignals, *, content: bool):
    """A learned head on every noisy signal (no mask).

    Parameters
    ----------
    fit : FitResult
        A head trained on the tokens :func:`head_features` gives for ``content``.
    signals : StepSignals
    content : bool
        As in :func:`head_features`.

    Returns
    -------
    outputs : ndarray, shape (k, n)
    weights : ndarray, shape (k, n, n)
    """
    fit = as_instance(fit, "fit", FitResult)
    X = head_features(signals, content=content)
    _require_memory(signals, count=len(X) + 1)  # the k weights returned, and one attention at work
    runs = [learned_head(fit.W_Q, fit.W_K, x, s) for x, s in zip(X, signals.noisy, strict=True)]
    return np.array([out for out, _ in runs]), np.array([w for _, w in runs])


def train_position_head(signals: StepSignals, *, steps=600, learning_rate=0.1, rng=None) -> FitResult:
    """A head on tokens ``[pt, pt^2, 1]``, trained to predict the second draws from the first.

    Parameters
    ----------
    signals : StepSignals
    steps, learning_rate, rng
        As in :func:`~selfattention.training.fit_head`.

    Returns
    -------
    FitResult
    """
    X = head_features(signals, content=False)  # (k, n, 3)
    _require_memory(signals, count=len(X), bytes_per_entry=BACKPROP_BYTES)
    return fit_head(X, signals.noisy, targets=signals.second, steps=steps, learning_rate=learning_rate, rng=rng)


def train_content_head(signals: StepSignals, *, start: FitResult | None = None, steps=300, learning_rate=0.1,
                       rng=None) -> FitResult:
    """A head on tokens ``[s, s^2, pt, pt^2, 1]``, trained to predict the second draws from the first.

    Parameters
    ----------
    signals : StepSignals
    start : FitResult, optional
        A position-only head to start from: its projections become the rows
        of ``pt, pt^2, 1``, and the rows of ``s, s^2`` start at 0 (plus the
        small random entries every start gets). Without it, the head starts
        from small random projections.
    steps, learning_rate, rng
        As in :func:`~selfattention.training.fit_head`.
    """
    init = None
    if as_instance(start, "start", FitResult | None) is not None:
        init = [np.vstack([np.zeros((2, w.shape[1])), w]) for w in (start.W_Q, start.W_K)]  # (5, d_k) each
    X = head_features(signals, content=True)  # (k, n, 5)
    _require_memory(signals, count=len(X), bytes_per_entry=BACKPROP_BYTES)
    return fit_head(X, signals.noisy, targets=signals.second, steps=steps, learning_rate=learning_rate,
                    init=init, rng=rng)


def read_temperatures(fit: FitResult) -> dict:
    r"""The temperatures a learned content-aware head's :math:`W_{QK}` implies, entry by entry.

    With tokens ``[s, s^2, pt, pt^2, 1]`` the bilateral score
    :math:`-(p_i - p_j)^2/\tau_p - (s_i - s_j)^2/\tau_s`, up to terms of ``i``
    only, has :math:`W_{QK}[s, s] = 2/\tau_s`, :math:`W_{QK}[1, s^2] = -1/\tau_s`,
    :math:`W_{QK}[\tilde p, \tilde p] = 1/(2\tau_p)` and
    :math:`W_{QK}[1, \tilde p^2] = -1/(4\tau_p)` (since :math:`\tilde p = 2p - 1`).

    Returns
    -------
    dict with keys ``"tau_s from s.s"``, ``"tau_s from 1.s^2"``, ``"tau_p from pt.pt"``, ``"tau_p from 1.pt^2"``
    """
    fit = as_instance(fit, "fit", FitResult)
    if fit.W_Q.shape[0] != 5:
        raise ValueError(f"fit must be a head on the 5 tokens [s, s^2, pt, pt^2, 1], got {fit.W_Q.shape[0]} rows")
    with np.errstate(all="ignore"):  # reported by name below
        W_QK = fit.W_Q @ fit.W_K.T  # (5, 5): rows and columns [s, s^2, pt, pt^2, 1]
        read = {"tau_s from s.s": 2 / W_QK[0, 0], "tau_s from 1.s^2": -1 / W_QK[4, 1],
                "tau_p from pt.pt": 1 / (2 * W_QK[2, 2]), "tau_p from 1.pt^2": -1 / (4 * W_QK[4, 3])}
    for key, tau in read.items():
        finite_result(tau, f"fit: its W_Q W_K^T gives no finite {key} (a zero or tiny entry)")
    return {key: float(tau) for key, tau in read.items()}
