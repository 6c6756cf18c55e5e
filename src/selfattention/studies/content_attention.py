r"""Attention that looks at content: sines with a jump, smoothed by position and by value.

A family of step sines (a sine plus a jump at a random position), each
observed twice with independent noise; the errors of a head near the jumps
and away from them; how much weight the queries near a jump give to the
other side of it; the engineered Gaussian and bilateral heads on every
signal. Heads learned on such signals are in :mod:`.noise2noise`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_count,
    as_instance,
    as_nonnegative_scalar,
    as_positive_scalar,
    as_real_scalar,
    as_rng,
    as_series,
    as_weights,
    power_of_two,
)
from ..bilateral import bilateral_head
from ..head import gaussian_head
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

    def __post_init__(self):
        (p,) = as_series(positions=self.positions)
        k = as_array(self.jumps, "jumps", ndim=1).size
        for name in ("clean", "noisy", "second"):
            if as_array(getattr(self, name), name, ndim=2).shape != (k, p.size):
                raise ValueError(f"{name} must have shape (len(jumps), len(positions)) = {(k, p.size)}")


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
    count, n = as_count(count, "count"), as_count(n, "n")
    # 8 bytes each: a jump and a seed per signal; its positions, clean, noisy and second draw (n each,
    # the signals one by one) and the three (count, n) arrays they are stacked into.
    memory.require(8 * count * (2 + 7 * n), "count and n", f"{count} signals of {n} samples")
    low, high = as_nonnegative_scalar(low, "low"), as_positive_scalar(high, "high")
    if not low < high <= 1:
        raise ValueError(f"low and high must satisfy 0 <= low < high <= 1, got {low!r} and {high!r}")
    gen = as_rng(rng)
    jumps = gen.uniform(low, high, count)  # (k,)
    seeds = gen.integers(0, 2**63 - 1, size=count)
    ones = [step_signal(n, sigma, jump=jump, at=at, rng=seed) for at, seed in zip(jumps, seeds, strict=True)]
    clean, noisy, second = (np.concatenate([getattr(one, field) for one in ones])
                            for field in ("clean", "noisy", "second"))
    return StepSignals(ones[0].positions, jumps, clean, noisy, second)  # (k, n) each


def step_signal(n, sigma, *, jump=1.5, at=0.5, rng=None) -> StepSignals:
    """One step sine with its jump at ``at``, observed twice.

    Parameters
    ----------
    n, sigma, jump, at
        As in :func:`~selfattention.signals.step_sine`.
    rng : int, numpy.random.Generator or None
        Draws the seeds of the two noise draws.

    Returns
    -------
    StepSignals
        Of one signal: ``clean``, ``noisy`` and ``second`` have shape (1, n).
    """
    seeds = as_rng(rng).integers(0, 2**63 - 1, size=2)
    (positions, clean, noisy), (_, _, second) = (step_sine(n, sigma, jump=jump, at=at, rng=seed) for seed in seeds)
    return StepSignals(positions, np.array([float(at)]), clean[None], noisy[None], second[None])


def without_steps(signals: StepSignals) -> np.ndarray:
    """The first noisy draws with each signal's step taken out: noisy sines with the same noise.

    Parameters
    ----------
    signals : StepSignals

    Returns
    -------
    ndarray, shape (k, n)
        ``sin(2 pi p) + sigma z``, with the ``z`` of ``signals.noisy``.
    """
    signals = as_instance(signals, "signals", StepSignals)
    steps = signals.clean - np.sin(2 * np.pi * signals.positions)  # (k, n): 0 before each jump, J after
    return signals.noisy - steps


def near_jump(positions, jumps, width=NEAR) -> np.ndarray:
    """Which tokens of each signal lie within ``width`` of its jump.

    Parameters
    ----------
    positions : array_like, shape (n,)
    jumps : array_like, shape (k,)
        Where each signal jumps.
    width : float
        The half-width ``> 0`` of the region "near the jump".

    Returns
    -------
    ndarray of bool, shape (k, n)
    """
    p = as_array(positions, "positions", ndim=1)
    at = as_array(jumps, "jumps", ndim=1)
    width = as_positive_scalar(width, "width")
    with np.errstate(over="ignore"):  # an infinite distance is correctly not near
        return np.abs(p[None, :] - at[:, None]) < width  # (k, n)


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
    clean = as_instance(signals, "signals", StepSignals).clean  # (k, n)
    err = as_array(estimates, "estimates", ndim=2)
    if err.shape != clean.shape:
        raise ValueError(f"estimates must have the signals' shape {clean.shape}, got {err.shape}")
    near = near_jump(signals.positions, signals.jumps, width)  # (k, n)
    if near.all() or not near.any():
        raise ValueError(f"width {width!r} leaves no token {'away from' if near.all() else 'near'} the jumps")
    scale = power_of_two(float(np.max(np.abs(err - clean), initial=0.0)))  # squares of err / scale cannot overflow
    return {region: scale * float(np.sqrt(np.mean(((err - clean)[where] / scale) ** 2)))
            for region, where in (("whole", np.ones_like(near)), ("near", near), ("away", ~near))}


def _require_memory(signals, *, count, bytes_per_entry=memory.BYTES_PER_ENTRY) -> None:
    """Refuse, naming ``signals``, ``count`` (n, n) matrices over the memory limit (:mod:`selfattention.memory`)."""
    n = as_instance(signals, "signals", StepSignals).positions.size
    memory.require_matrix(n, n, "signals", count=count, bytes_per_entry=bytes_per_entry)


def gaussian_outputs(signals: StepSignals, temperature) -> np.ndarray:
    """The engineered position-only (Gaussian) head on every noisy signal.

    Parameters
    ----------
    signals : StepSignals
    temperature : float
        The head's ``tau > 0``.

    Returns
    -------
    ndarray, shape (k, n)
    """
    _require_memory(signals, count=1)
    return np.array([gaussian_head(s, signals.positions, temperature)[0] for s in signals.noisy])


def bilateral_outputs(signals: StepSignals, temperature, signal_temperature) -> np.ndarray:
    """The engineered bilateral head on every noisy signal.

    Parameters
    ----------
    signals : StepSignals
    temperature, signal_temperature : float
        ``tau_p`` and ``tau_s``, as in :func:`~selfattention.bilateral.bilateral_head`.

    Returns
    -------
    ndarray, shape (k, n)
    """
    _require_memory(signals, count=1)
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
    w = as_weights(weights, "weights", square=True)
    if w.shape[0] != p.size:
        raise ValueError(f"weights must have shape (n, n) for the {p.size} positions, got {w.shape}")
    jump = as_real_scalar(jump, "jump")
    after = p >= jump  # (n,)
    with np.errstate(over="ignore"):  # a distance beyond the largest double is inf, and not within width: right
        near = np.abs(p - jump) < as_positive_scalar(width, "width")  # (n,)
    if not near.any():
        raise ValueError(f"no position lies within width {width!r} of jump {jump!r}")
    other_side = after[None, :] != after[:, None]  # (n, n): key j on the other side of query i
    return float(np.mean(np.sum(w * other_side, axis=1)[near]))
