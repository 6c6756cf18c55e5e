r"""Sinusoidal encodings as a kernel: shift invariance, the Gaussian limit, aliasing.

With hand-set projections the sinusoidal head's score is a sum of cosines of
``omega (p_i - p_j)`` (:mod:`~selfattention.positional`). With one frequency
and the amplitude ``xi = 2 / (tau omega**2)`` its weights approach the
Gaussian head's at temperature ``tau`` as ``omega`` shrinks; once ``omega``
times the span of the positions passes ``pi`` the cosine rises again within
the span, and from ``2 pi`` on a token a whole period away gets the weight of
the token itself.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, as_real_scalar, as_series, as_temperature, finite_result, naming
from ..head import gaussian_head
from ..metrics import rmse
from ..positional import (
    _as_frequencies,
    gaussian_amplitude,
    sinusoidal_encoding,
    sinusoidal_head,
    sinusoidal_head_weights,
)


def cosine_scores(positions, frequencies, amplitudes) -> np.ndarray:
    r"""The sinusoidal head's scores ``PE(p_i) W_Q W_K^T PE(p_j)^T``, from the positions as given.

    .. math:: \xi_1 \cos(\omega_1 (p_i - p_j)) + \dots + \xi_F \cos(\omega_F (p_i - p_j))

    Unlike the head, this does not centre the positions: it is the encoding
    itself that :func:`shift_gap` tests.

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies, amplitudes : array_like, shape (F,)

    Returns
    -------
    ndarray, shape (n, n)
    """
    (p,) = as_series(positions=positions)
    memory.require_matrix(p.size, p.size, "positions")
    E = sinusoidal_encoding(p, frequencies)  # (n, 2F)
    W_Q, W_K, _ = sinusoidal_head_weights(amplitudes)
    if W_Q.shape[1] != E.shape[1]:
        raise ValueError(f"frequencies and amplitudes must have the same length, got {E.shape[1] // 2} and "
                         f"{W_Q.shape[1] // 2}")
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (E @ W_Q[1:]) @ (E @ W_K[1:]).T  # (n, n): the signal row of the projections is 0
    return finite_result(scores, "amplitudes: the scores overflow the double range")


def shift_gap(positions, frequencies, amplitudes, shift) -> float:
    r"""How much the cosine scores change when every position moves by ``shift``, relative to their size.

    .. math:: \frac{\max_{ij} |e'_{ij} - e_{ij}|}{\max_{ij} |e_{ij}|},

    with :math:`e_{ij}` the scores of the positions :math:`p_i` and
    :math:`e'_{ij}` those of :math:`p_i + \text{shift}`.

    0 in exact arithmetic; rounding makes it about ``eps`` times the largest
    angle ``omega p``.

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies, amplitudes : array_like, shape (F,)
    shift : float

    Returns
    -------
    float
    """
    (p,) = as_series(positions=positions)
    shift = as_real_scalar(shift, "shift")
    with np.errstate(over="ignore"):
        moved = finite_result(p + shift, "positions and shift: a shifted position overflows the double range")
    before = cosine_scores(p, frequencies, amplitudes)  # (n, n)
    after = cosine_scores(moved, frequencies, amplitudes)
    scale = float(np.max(np.abs(before)))
    if scale == 0:
        return 0.0
    with np.errstate(over="ignore"):
        gap = np.max(np.abs(after - before)) / scale
        if not np.isfinite(gap):  # two finite scores near the largest double, of opposite signs: halve them (exact)
            gap = 2 * (np.max(np.abs(after / 2 - before / 2)) / scale)
    return float(finite_result(gap, "amplitudes and shift: the change of the scores overflows beside their size"))


def frequency_sweep(signal, clean, positions, frequencies, temperature) -> dict:
    """One-frequency sinusoidal heads matched to the Gaussian band at ``temperature``, frequency by frequency.

    Each head has the amplitude :func:`~selfattention.positional.gaussian_amplitude`
    of its frequency, so that near the diagonal it is the Gaussian head at
    ``temperature``.

    Parameters
    ----------
    signal, clean, positions : array_like, shape (n,)
        The noisy samples, the ground truth, and where they are.
    frequencies : array_like, shape (m,)
        ``omega > 0`` of each head.
    temperature : float
        ``tau`` of the Gaussian head they are matched to.

    Returns
    -------
    dict
        ``"rmse"`` (m,): each head's error against ``clean``; ``"weight_gap"``
        (m,): the largest difference of its weights from the Gaussian head's;
        ``"gaussian_rmse"``: the Gaussian head's error.
    """
    s, f, p = as_series(signal=signal, clean=clean, positions=positions)
    omegas = _as_frequencies(frequencies)
    tau = as_temperature(temperature, "temperature")
    gauss_output, gauss_weights = gaussian_head(s, p, tau)
    outputs, gaps = [], []
    for omega in omegas:
        with naming("frequencies", "frequency"):
            output, weights = sinusoidal_head(s, p, [omega], [gaussian_amplitude(omega, tau)])
        outputs.append(output)
        gaps.append(float(np.max(np.abs(weights - gauss_weights))))
    with naming("signal and clean", "estimate and truth"):  # the outputs, from signal, against clean
        *errors, gaussian_rmse = (rmse(output, f) for output in (*outputs, gauss_output))
    return {"rmse": np.array(errors), "weight_gap": np.array(gaps), "gaussian_rmse": gaussian_rmse}


def relative_scores(distances, frequencies, temperature) -> np.ndarray:
    r"""Each matched cosine's score at ``distances``, less its score at distance 0.

    .. math:: \xi \big(\cos(\omega u) - 1\big), \qquad \xi = \frac{2}{\tau\, \omega^2}

    the logarithm of a key's weight relative to the query's own (the
    Gaussian head's is ``-u**2 / tau``).

    Parameters
    ----------
    distances : array_like, shape (d,)
        ``u = |p_i - p_j|``.
    frequencies : array_like, shape (m,)
    temperature : float

    Returns
    -------
    ndarray, shape (m, d)
    """
    u = as_array(distances, "distances", ndim=1)
    omegas = _as_frequencies(frequencies)
    tau = as_temperature(temperature, "temperature")
    with naming("frequencies", "frequency"):
        xi = np.array([gaussian_amplitude(omega, tau) for omega in omegas])  # (m,)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = xi[:, None] * (np.cos(omegas[:, None] * u[None, :]) - 1)  # (m, d)
    return finite_result(scores, "distances and frequencies: a score overflows the double range")
