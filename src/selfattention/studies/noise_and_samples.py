r"""How the engineered head's error changes with the noise and the number of samples.

The error of a smoothed signal is its root-mean-square distance from the
clean sine, :func:`~selfattention.metrics.rmse`. Averaging ``m`` independent
noise values divides their standard deviation by ``sqrt(m)``, so the head
removes more noise the more samples its Gaussian bump covers; what is left
is the blur of the bump itself.

Each function takes every setting as an explicit argument and its noise from
an ``rng`` (a seed or a :class:`numpy.random.Generator`), so a chapter, a
test and a benchmark calling it with the same arguments get the same numbers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import memory
from .._validation import as_array, as_count, as_counts, as_rng, as_seed, naming
from ..head import gaussian_head
from ..metrics import effective_neighbours, rmse
from ..signals import noisy_sine


class SmoothedSine(NamedTuple):
    """One noisy sine, the head's output and weights on it, and both errors."""

    #: Sample positions, shape (n,).
    positions: np.ndarray
    #: The sine without noise, shape (n,).
    clean: np.ndarray
    #: The noisy observations, the head's input, shape (n,).
    noisy: np.ndarray
    #: The head's output, shape (n,).
    output: np.ndarray
    #: The head's attention matrix, shape (n, n).
    weights: np.ndarray
    #: ``RMSE(noisy, clean)``: the error before smoothing.
    rmse_input: float
    #: ``RMSE(output, clean)``: the error after smoothing.
    rmse_output: float


def smoothed_sine(n, sigma, temperature, *, periods=1, rng=None) -> SmoothedSine:
    """The head at temperature ``tau`` on :func:`~selfattention.noisy_sine`.

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
    SmoothedSine
    """
    memory.require_matrix(as_count(n, "n"), n, "n")
    positions, clean, noisy = noisy_sine(n, sigma, periods=periods, rng=rng)
    output, weights = gaussian_head(noisy, positions, temperature)  # (n,), (n, n)
    return SmoothedSine(positions, clean, noisy, output, weights, rmse(noisy, clean), rmse(output, clean))


def smoothing_errors(n, sigma, temperature, *, periods=1, rng=None):
    """RMSE of the noisy input and of the head's output against the clean sine.

    Parameters are those of :func:`smoothed_sine`.

    Returns
    -------
    rmse_input : float
        ``RMSE(noisy, clean)``: the error before smoothing.
    rmse_output : float
        ``RMSE(output, clean)``: the error after smoothing.
    """
    result = smoothed_sine(n, sigma, temperature, periods=periods, rng=rng)
    return result.rmse_input, result.rmse_output


def noise_levels(n, sigmas, temperature, *, periods=1, rng=None) -> list[SmoothedSine]:
    """The head on the same noise draws scaled to several noise levels.

    Parameters
    ----------
    n : int
    sigmas : array_like, shape (m,)
        Noise standard deviations, ``>= 0``.
    temperature : float
    periods : float
    rng : int, numpy.random.Generator or None
        Seed or generator of the draws; a generator gives one seed, so every
        level scales the same standard normal draws and the levels differ by
        the noise's size only.

    Returns
    -------
    list of SmoothedSine, length m
    """
    levels = as_array(sigmas, "sigmas", ndim=1)
    if levels.size == 0 or (levels < 0).any():
        raise ValueError("sigmas must be a non-empty array of non-negative numbers")
    seed = as_seed(rng)
    with naming("sigmas", "sigma"):
        return [smoothed_sine(n, sigma, temperature, periods=periods, rng=seed) for sigma in levels.tolist()]


def noise_sweep(n, sigmas, temperature, *, periods=1, rng=None):
    """Input and output RMSE of the head for several noise levels.

    Parameters are those of :func:`noise_levels`.

    Returns
    -------
    rmse_input, rmse_output : ndarray, shape (m,)
    """
    levels = noise_levels(n, sigmas, temperature, periods=periods, rng=rng)
    return np.array([s.rmse_input for s in levels]), np.array([s.rmse_output for s in levels])


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
    counts = as_counts(sample_counts, "sample_counts", minimum=2)
    memory.require_matrix(max(counts), max(counts), "sample_counts")
    n_draws = as_count(n_draws, "n_draws")
    # A seed (8 bytes in numpy, a Python int in a list: about 40 more) and two errors per count for each draw.
    memory.require((48 + 16 * len(counts)) * n_draws, "n_draws", f"{n_draws} draws")
    seeds = _child_seeds(rng, n_draws)
    with naming("sample_counts", "n"):
        errors = np.array([[smoothing_errors(n, sigma, temperature, periods=periods, rng=seed)
                            for seed in seeds] for n in counts])  # (m, n_draws, 2)
    mean = errors.mean(axis=1)  # (m, 2)
    return mean[:, 0], mean[:, 1]


def neighbours_vs_samples(sample_counts, temperature) -> np.ndarray:
    r"""Effective number of neighbours of the middle token, for each number of samples.

    .. math:: N_{\text{eff},i} = 1 \Big/ \sum_j a_{ij}^2, \qquad i = \lfloor N/2 \rfloor

    (0-based ``i``). The weights depend on the positions only, not on the signal.

    Parameters
    ----------
    sample_counts : sequence of int, length m
        The numbers of samples ``N``, each at least 2.
    temperature : float

    Returns
    -------
    ndarray, shape (m,)
    """
    counts = as_counts(sample_counts, "sample_counts", minimum=2)
    memory.require_matrix(max(counts), max(counts), "sample_counts")
    found = []
    for n in counts:
        _, weights = gaussian_head(np.zeros(n), np.linspace(0.0, 1.0, n), temperature)  # (n, n)
        found.append(effective_neighbours(weights)[n // 2])
    return np.array(found)  # (m,)


def _child_seeds(rng, k: int) -> list[int]:
    """``k`` seeds drawn from ``rng``: independent noise draws, reproducibly."""
    return as_rng(rng).integers(0, 2**63 - 1, size=k).tolist()
