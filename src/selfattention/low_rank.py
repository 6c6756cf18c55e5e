r"""The head's weight matrix as a matrix of low rank: its singular values.

The Gaussian head's weights :math:`A` are smooth in both positions: a
wide kernel makes neighbouring rows nearly equal, and :math:`A` is then
close to a matrix of low rank. Its singular values
:math:`\operatorname{sv}_1(A) \ge \operatorname{sv}_2(A) \ge \dots`
(:func:`singular_values`) say how close: the best matrix of rank ``r`` is
off by the ``(r + 1)``-th in the spectral norm (Eckart and Young, 1936).
:func:`numerical_rank` counts the singular values above a tolerance
relative to the largest. The head of ``D`` random frequencies
has weights :math:`\operatorname{diag}(\Psi \Psi^\top \mathbf 1)^{-1}
\Psi \Psi^\top` (:func:`feature_weights`), of rank at most ``2 D``, since
:math:`\Psi` has ``2 D`` columns.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_array, as_positive_scalar, finite_result
from .head import centre_positions, gaussian_head
from .random_features import fourier_features

#: The default tolerance of :func:`numerical_rank`: a matrix of that rank is
#: within 1e-6 of the largest singular value, the accuracy the heads promise
#: their weights (:data:`selfattention.head.ROUNDING_TOLERANCE`).
TOLERANCE = 1e-6


def singular_values(positions, temperature) -> np.ndarray:
    r"""The singular values of the exact head's weights, largest first.

    .. math:: a_{ij} = \frac{\exp(-(p_i - p_j)^2/\tau)}{\sum_l
        \exp(-(p_i - p_l)^2/\tau)}

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.

    Returns
    -------
    ndarray, shape (n,)
    """
    p = as_array(positions, "positions", ndim=1)
    memory.require_matrix(p.size, p.size, "positions", count=3)  # A, U, V
    _, weights = gaussian_head(np.zeros_like(p), p, temperature)  # (n, n)
    return np.linalg.svd(weights, compute_uv=False)  # (n,)


def numerical_rank(values, tolerance=TOLERANCE) -> int:
    r"""How many singular values exceed ``tolerance`` times the largest.

    That is, the count of ``values > tolerance * max(values)``.

    Parameters
    ----------
    values : array_like, shape (n,)
        Singular values, non-negative, not all 0.
    tolerance : float
        In (0, 1), so that the largest counts: the rank is at least 1.

    Returns
    -------
    int
    """
    sigma = as_array(values, "values", ndim=1)
    tol = as_positive_scalar(tolerance, "tolerance")
    if tol >= 1:
        raise ValueError(f"tolerance must be below 1, got {tol!r}")
    if sigma.size == 0 or (sigma < 0).any() or sigma.max() == 0:
        raise ValueError("values must be non-negative singular values, "
                         "not all 0")
    return int((sigma > tol * sigma.max()).sum())  # tol < 1: no overflow


def feature_weights(positions, frequencies) -> np.ndarray:
    r"""The weights of the head of random frequencies, formed whole (for study only).

    .. math:: \hat A = \operatorname{diag}(\Psi \Psi^\top
        \mathbf 1)^{-1}\, \Psi \Psi^\top, \qquad \operatorname{rank}
        \hat A \le 2 D

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequencies : array_like, shape (D,)
        Positive.

    Returns
    -------
    ndarray, shape (n, n)
        Refused (naming ``frequencies``) where a row's estimated
        denominator is 0.
    """
    p = as_array(positions, "positions", ndim=1)
    memory.require_matrix(p.size, p.size, "positions")
    psi = fourier_features(centre_positions(p), frequencies)  # (n, 2D)
    kernel = psi @ psi.T  # (n, n)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        weights = kernel / kernel.sum(axis=1, keepdims=True)
    return finite_result(weights, "frequencies: a row's estimated "
                         "denominator is 0 (draw more frequencies)")
