"""Measurements of the engineered head as its knobs turn (chapters 5 and 6).

Each function takes every setting as an explicit argument and its noise from
an ``rng`` (a seed or a :class:`numpy.random.Generator`), so a chapter, a
test and a benchmark calling it with the same arguments get the same numbers.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_array, as_count, as_positive_scalar, same_length
from .head import gaussian_head
from .signals import noisy_sine, unit_noise


def rmse(estimate, truth) -> float:
    """Root-mean-square error of ``estimate`` against ``truth``.

    .. math:: \\mathrm{RMSE} = \\sqrt{\\tfrac{1}{n} \\sum_i (\\hat y_i - y_i)^2}

    Parameters
    ----------
    estimate, truth : array_like, shape (n,)
    """
    e = as_array(estimate, "estimate", ndim=1)
    t = as_array(truth, "truth", ndim=1)
    same_length(e, t, "estimate", "truth")
    if e.size == 0:
        raise ValueError("estimate must hold at least one value")
    return float(np.sqrt(np.mean((e - t) ** 2)))


def smoothing_errors(n, sigma, temperature, *, periods=1, rng=None):
    """RMSE of the noisy input and of the head's output against the clean sine.

    Parameters
    ----------
    n : int
        Number of samples.
    sigma : float
        Noise standard deviation.
    temperature : float
        The head's temperature ``tau``.
    periods : float
        Periods of the sine on [0, 1].
    rng : int, numpy.random.Generator or None
        Seed or generator of the noise.

    Returns
    -------
    rmse_input : float
        ``RMSE(noisy, clean)``: the error before smoothing.
    rmse_output : float
        ``RMSE(output, clean)``: the error after smoothing.
    """
    positions, clean, noisy = noisy_sine(n, sigma, periods=periods, rng=rng)
    output, _ = gaussian_head(noisy, positions, temperature)  # (n,)
    return rmse(noisy, clean), rmse(output, clean)


def distance_from_identity(weights) -> float:
    """``max |W - I|``: how far an attention matrix is from "attend to yourself".

    Parameters
    ----------
    weights : array_like, shape (n, n)
    """
    w = _square(weights)
    return float(np.max(np.abs(w - np.eye(w.shape[0]))))


def distance_from_uniform(weights) -> float:
    """``max |W - 1/n|``: how far an attention matrix is from "attend to all equally".

    Parameters
    ----------
    weights : array_like, shape (n, n)
    """
    w = _square(weights)
    return float(np.max(np.abs(w - 1.0 / w.shape[0])))


def effective_neighbours(weights) -> np.ndarray:
    """How many tokens each query really averages: ``1 / sum_j w_ij**2``.

    A row that puts weight ``1/k`` on ``k`` tokens gives exactly ``k``;
    averaging independent noise of standard deviation ``sigma`` with row
    ``i`` leaves noise of standard deviation ``sigma / sqrt(k_i)``.

    Parameters
    ----------
    weights : array_like, shape (n, n)

    Returns
    -------
    ndarray, shape (n,)
    """
    w = _square(weights)
    return 1.0 / np.sum(w**2, axis=1)  # (n,)


def _square(weights) -> np.ndarray:
    w = as_array(weights, "weights", ndim=2)
    if w.shape[0] != w.shape[1] or w.size == 0:
        raise ValueError(f"weights must be a non-empty square matrix, got shape {w.shape}")
    return w


def temperature_sweep(signal, positions, temperatures):
    """How the head's weights and output change with the temperature.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The head's input (the noisy observations).
    positions : array_like, shape (n,)
    temperatures : array_like, shape (m,)
        Temperatures ``tau > 0`` to try.

    Returns
    -------
    dict of ndarray, each shape (m,)
        ``identity``: :func:`distance_from_identity` of the weights;
        ``uniform``: :func:`distance_from_uniform` of the weights;
        ``input_gap``: ``max |output - signal|``, 0 when nothing is smoothed;
        ``mean_gap``: ``max |output - mean(signal)|``, 0 when the output is flat.
    """
    s = as_array(signal, "signal", ndim=1)
    taus = _temperatures(temperatures)
    rows = []
    for tau in taus:
        output, weights = gaussian_head(s, positions, tau)  # (n,), (n, n)
        rows.append((distance_from_identity(weights), distance_from_uniform(weights),
                     np.max(np.abs(output - s)), np.max(np.abs(output - s.mean()))))
    cols = np.array(rows).T  # (4, m)
    return dict(zip(("identity", "uniform", "input_gap", "mean_gap"), cols))


def _temperatures(temperatures) -> np.ndarray:
    taus = as_array(temperatures, "temperatures", ndim=1)
    if taus.size == 0 or (taus <= 0).any():
        raise ValueError("temperatures must be a non-empty array of positive numbers")
    return taus


def noise_sweep(n, sigmas, temperature, *, periods=1, rng=None):
    """Input and output RMSE of the head for several noise levels.

    Every level scales the same standard normal draws, so the levels differ
    by the noise's size only.

    Parameters
    ----------
    n : int
    sigmas : array_like, shape (m,)
        Noise standard deviations, ``>= 0``.
    temperature : float
    periods : float
    rng : int, numpy.random.Generator or None
        Seed or generator of the (shared) noise draws.

    Returns
    -------
    rmse_input, rmse_output : ndarray, shape (m,)
    """
    sig = as_array(sigmas, "sigmas", ndim=1)
    if sig.size == 0 or (sig < 0).any():
        raise ValueError("sigmas must be a non-empty array of non-negative numbers")
    positions, clean, _ = noisy_sine(n, 0.0, periods=periods)
    z = unit_noise(positions.size, rng)  # (n,) the draws noisy_sine(n, sigma, rng=rng) scales
    errors = []
    for s in sig:
        noisy = clean + s * z  # (n,)
        output, _ = gaussian_head(noisy, positions, temperature)  # (n,)
        errors.append((rmse(noisy, clean), rmse(output, clean)))
    return tuple(np.array(errors).T)  # (m,), (m,)


def error_vs_samples(sample_counts, sigma, temperature, *, n_draws=20, periods=1, rng=None):
    """Mean output RMSE of the head as the number of samples grows.

    For each ``N`` the error is averaged over ``n_draws`` independent noise
    draws; draw ``k`` uses the same seed for every ``N``.

    Parameters
    ----------
    sample_counts : sequence of int, length m
        The numbers of samples ``N`` to try, each at least 2.
    sigma : float
    temperature : float
    n_draws : int
    periods : float
    rng : int, numpy.random.Generator or None

    Returns
    -------
    rmse_input, rmse_output : ndarray, shape (m,)
        Mean over the draws of the input and output RMSE for each ``N``.
    """
    counts = [as_count(n, "sample_counts", minimum=2) for n in np.atleast_1d(sample_counts).tolist()]
    seeds = _child_seeds(rng, as_count(n_draws, "n_draws"))
    errors = np.array([[smoothing_errors(n, sigma, temperature, periods=periods, rng=seed)
                        for seed in seeds] for n in counts])  # (m, n_draws, 2)
    mean = errors.mean(axis=1)  # (m, 2)
    return mean[:, 0], mean[:, 1]


def _child_seeds(rng, k: int) -> list[int]:
    """``k`` seeds drawn from ``rng``: independent noise draws, reproducibly."""
    return np.random.default_rng(rng).integers(0, 2**63 - 1, size=k).tolist()


def attention_row(positions, temperature, row):
    """One row of the head's weights next to the Gaussian the trick predicts.

    .. math:: w_{ij} \\propto \\exp\\!\\left(-\\frac{(p_i - p_j)^2}{\\tau}\\right),
        \\text{ a Gaussian in } p_j \\text{ with standard deviation } \\sqrt{\\tau / 2}

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
    row : int
        The query ``i``.

    Returns
    -------
    measured : ndarray, shape (n,)
        Row ``i`` of the head's attention matrix.
    predicted : ndarray, shape (n,)
        The normalised Gaussian, computed from the formula alone.
    """
    p = as_array(positions, "positions", ndim=1)
    tau = as_positive_scalar(temperature, "temperature")
    i = as_count(row, "row", minimum=0)
    if i >= p.size:
        raise ValueError(f"row must be below the number of positions {p.size}, got {row!r}")
    _, weights = gaussian_head(np.zeros_like(p), p, tau)  # (n, n)
    g = np.exp(-((p - p[i]) ** 2) / tau)  # (n,)
    return weights[i], g / g.sum()
