r"""Attention that looks at content: sines with a jump, smoothed by position and by value.

The experiments of the chapter: a family of step sines (a sine plus a jump
at a random position), the errors of a head near the jump and away from it,
the best engineered bilateral head, and heads learned on some step sines and
measured on others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_array, as_count, as_nonnegative_scalar, as_positive_scalar
from ..bilateral import bilateral_head
from ..head import gaussian_head
from ..learning import FitResult, fit_head, learned_head, token_features
from ..signals import step_sine

#: Tokens closer to the jump than this (in position) count as "near the jump".
NEAR = 0.05


@dataclass(frozen=True)
class StepSignals:
    """Step sines sampled at the same positions.

    Attributes
    ----------
    positions : ndarray, shape (n,)
    jumps : ndarray, shape (k,)
        Where each signal jumps.
    clean : ndarray, shape (k, n)
    noisy : ndarray, shape (k, n)
    second : ndarray, shape (k, n)
        A second, independent noisy draw of each clean signal.
    """

    positions: np.ndarray
    jumps: np.ndarray
    clean: np.ndarray
    noisy: np.ndarray
    second: np.ndarray


def step_signals(count, n, sigma, *, jump=1.5, low=0.2, high=0.8, rng=None) -> StepSignals:
    r"""``count`` step sines with jumps at positions drawn uniformly from ``[low, high]``.

    Parameters
    ----------
    count : int
    n : int
        Samples per signal.
    sigma : float
    jump : float
        The height of every jump.
    low, high : float
        The range of the jump positions.
    rng : int, numpy.random.Generator or None
        Draws the jump positions and, from child seeds, the two noise draws.

    Returns
    -------
    StepSignals
    """
    count = as_count(count, "count")
    low, high = as_nonnegative_scalar(low, "low"), as_positive_scalar(high, "high")
    if not low < high <= 1:
        raise ValueError(f"low and high must satisfy 0 <= low < high <= 1, got {low!r} and {high!r}")
    gen = np.random.default_rng(rng)
    jumps = gen.uniform(low, high, count)  # (k,)
    seeds = gen.integers(0, 2**63 - 1, size=count)
    ones = [step_signal(n, sigma, jump=jump, at=at, rng=seed) for at, seed in zip(jumps, seeds, strict=True)]
    clean, noisy, second = (np.concatenate([getattr(one, field) for one in ones])
                            for field in ("clean", "noisy", "second"))
    return StepSignals(ones[0].positions, jumps, clean, noisy, second)  # (k, n) each


def step_signal(n, sigma, *, jump=1.5, at=0.5, rng=None) -> StepSignals:
    """One step sine with its jump at ``at``, observed twice, as a :class:`StepSignals` of one signal."""
    seeds = np.random.default_rng(rng).integers(0, 2**63 - 1, size=2)
    (positions, clean, noisy), (_, _, second) = (step_sine(n, sigma, jump=jump, at=at, rng=seed) for seed in seeds)
    return StepSignals(positions, np.array([float(at)]), clean[None], noisy[None], second[None])


def near_jump(positions, jumps, width=NEAR) -> np.ndarray:
    """``(k, n)`` booleans: which tokens of each signal lie within ``width`` of its jump."""
    p = as_array(positions, "positions", ndim=1)
    at = as_array(jumps, "jumps", ndim=1)
    return np.abs(p[None, :] - at[:, None]) < as_positive_scalar(width, "width")


def region_errors(estimates, signals: StepSignals, width=NEAR) -> dict:
    """RMSE against the clean signals over all tokens, near the jumps and away from them.

    Parameters
    ----------
    estimates : array_like, shape (k, n)
    signals : StepSignals
    width : float

    Returns
    -------
    dict with keys ``"whole"``, ``"near"``, ``"away"`` -> float
    """
    err = as_array(estimates, "estimates", ndim=2) - signals.clean  # (k, n)
    near = near_jump(signals.positions, signals.jumps, width)  # (k, n)
    return {region: float(np.sqrt(np.mean(err[where] ** 2)))
            for region, where in (("whole", np.ones_like(near)), ("near", near), ("away", ~near))}


def gaussian_outputs(signals: StepSignals, temperature) -> np.ndarray:
    """(k, n): the engineered position-only head on every noisy signal."""
    return np.array([gaussian_head(s, signals.positions, temperature)[0] for s in signals.noisy])


def bilateral_outputs(signals: StepSignals, temperature, signal_temperature) -> np.ndarray:
    """(k, n): the engineered bilateral head on every noisy signal."""
    return np.array([bilateral_head(s, signals.positions, temperature, signal_temperature)[0]
                     for s in signals.noisy])


def weight_across(weights, positions, jump, width=NEAR) -> float:
    """The weight the queries near ``jump`` give, on average, to keys on the other side of it.

    Parameters
    ----------
    weights : array_like, shape (n, n)
    positions : array_like, shape (n,)
    jump : float
        Where the signal jumps: keys at ``p >= jump`` are after it.
    width : float
        The queries within ``width`` of the jump are averaged.
    """
    p = as_array(positions, "positions", ndim=1)
    w = as_array(weights, "weights", ndim=2)
    after = p >= jump  # (n,)
    near = np.abs(p - jump) < as_positive_scalar(width, "width")  # (n,)
    if not near.any():
        raise ValueError(f"no position lies within width {width!r} of jump {jump!r}")
    other_side = after[None, :] != after[:, None]  # (n, n): key j on the other side of query i
    return float(np.mean(np.sum(w * other_side, axis=1)[near]))


def mean_distance(weights, positions) -> float:
    r"""How far, on average, queries look: :math:`\frac1N \sum_i \sum_j a_{ij} |p_i - p_j|`.

    Parameters
    ----------
    weights : array_like, shape (n, n) or (k, n, n)
        One attention matrix, or one per signal (then averaged over all of them).
    positions : array_like, shape (n,)
    """
    p = as_array(positions, "positions", ndim=1)
    w = as_array(weights, "weights")
    if w.ndim not in (2, 3) or w.shape[-2:] != (p.size, p.size):
        raise ValueError(f"weights must have shape (n, n) or (k, n, n) with n = {p.size}, got {w.shape}")
    return float(np.mean(np.sum(w * np.abs(p[:, None] - p[None, :]), axis=-1)))


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
    taus_p = as_array(temperatures, "temperatures", ndim=1)
    taus_s = as_array(signal_temperatures, "signal_temperatures", ndim=1)
    gauss = [_second_draw_mse(gaussian_outputs(signals, tau), signals) for tau in taus_p]  # (a,)
    grid = np.array([[_second_draw_mse(bilateral_outputs(signals, tp, ts), signals) for ts in taus_s]
                     for tp in taus_p])  # (a, b)
    a, b = np.unravel_index(np.argmin(grid), grid.shape)
    return float(taus_p[np.argmin(gauss)]), (float(taus_p[a]), float(taus_s[b]))
def _second_draw_mse(estimates, signals: StepSignals) -> float:
    return float(np.mean((estimates - signals.second) ** 2))


def head_features(signals: StepSignals, *, content: bool) -> np.ndarray:
    """(k, n, d): the learned heads' tokens, ``[pt, pt^2, 1]`` or ``[s, s^2, pt, pt^2, 1]``."""
    s = signals.noisy
    if content:
        return token_features(signals.positions, s, signal_square=True)  # (k, n, 5)
    return np.broadcast_to(token_features(signals.positions), (*s.shape, 3))  # (k, n, 3)


def learned_outputs(fit: FitResult, signals: StepSignals, *, content: bool):
    """A learned head on every noisy signal: outputs (k, n) and attention matrices (k, n, n)."""
    X = head_features(signals, content=content)
    runs = [learned_head(fit.W_Q, fit.W_K, x, s) for x, s in zip(X, signals.noisy, strict=True)]
    return np.array([out for out, _ in runs]), np.array([w for _, w in runs])


def train_position_head(signals: StepSignals, *, steps=600, learning_rate=0.1, rng=None) -> FitResult:
    """A head on tokens ``[pt, pt^2, 1]``, trained to predict the second draws from the first."""
    X = head_features(signals, content=False)  # (k, n, 3)
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
        As in :func:`~selfattention.learning.fit_head`.
    """
    init = None
    if start is not None:
        init = [np.vstack([np.zeros((2, w.shape[1])), w]) for w in (start.W_Q, start.W_K)]  # (5, d_k) each
    X = head_features(signals, content=True)  # (k, n, 5)
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
    W_QK = fit.W_Q @ fit.W_K.T  # (5, 5): rows and columns [s, s^2, pt, pt^2, 1]
    return {"tau_s from s.s": 2 / W_QK[0, 0], "tau_s from 1.s^2": -1 / W_QK[4, 1],
            "tau_p from pt.pt": 1 / (2 * W_QK[2, 2]), "tau_p from 1.pt^2": -1 / (4 * W_QK[4, 3])}
