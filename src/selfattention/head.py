r"""The hand-engineered attention head that smooths a signal.

Tokens carry a signal value ``s`` and a position ``p``. Augmenting each token
to ``x = [s, p, p**2, 1]`` lets fixed projections make the query-key dot
product equal

.. math:: q_i \cdot k_j = -(p_i - p_j)^2 = -p_i^2 + 2 p_i p_j - p_j^2,

so that, after the softmax, token ``i`` attends to its neighbours with
Gaussian weights ``exp(-(p_i - p_j)^2 / tau)`` and the head returns a local
average of the signal.

The three terms of the expansion are each as large as ``p**2``, while their
sum is only ``-(p_i - p_j)**2``: far from the origin the sum cancels
catastrophically. Because the scores depend on the positions only through
``p_i - p_j``, the head first centres them (:func:`centre_positions`), which
changes no score and keeps the terms as small as the spread of the positions
allows; it then refuses, rather than return wrong weights, the inputs whose
rounding error is still too large (:data:`ROUNDING_TOLERANCE`).
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_real_scalar, as_series, as_temperature, as_temperatures, finite_result, naming
from .core import _softmax_inplace, attention

#: The largest spread of positions the head (and :mod:`~selfattention.kernel`)
#: accepts: the squared distances ``(p_i - p_j)**2`` must stay below 1e308.
MAX_SPREAD = 1e154
#: The farthest a query ``p_i + delta`` may lie from the centre of the positions: the terms of the
#: expanded square sum to at most ``4 (max|p| + |delta|)**2``, which must stay below the largest double
#: (1.8e308); any positions within :data:`MAX_SPREAD` reach it with ``delta = 0``.
MAX_REACH = 6.7e153
#: The head refuses inputs on which its rounding could move a row of weights by
#: more than this in total: the bound is ``4 eta (1 - max_j a_ij)``, with
#: ``eta = 16 eps (max|p - p_mid| + |delta|)**2 / tau`` bounding the rounding of every scaled score
#: (``eps`` the double precision, ``p_mid`` the centre of :func:`centre_positions`;
#: see ``_check_rounding``).
ROUNDING_TOLERANCE = 1e-6
#: Above this ``eta`` the first-order bound above no longer holds: always refused.
_MAX_ETA = 1e-3


def positional_features(signal, positions) -> np.ndarray:
    """Augment a 1-D signal with quadratic position features.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)

    Returns
    -------
    X : ndarray, shape (n, 4)
        Columns ``[signal, p, p**2, 1]``.

    Raises
    ------
    ValueError
        If a position is so large that its square overflows (``|p| > 1.3e154``).
    """
    s, p = as_series(signal=signal, positions=positions)
    if np.abs(p).max() > np.sqrt(np.finfo(float).max):
        raise ValueError("positions: their squares overflow the double range (|positions| must stay below 1.3e154)")
    return np.column_stack([s, p, p**2, np.ones_like(p)])  # (n, 4)


def centre_positions(positions) -> np.ndarray:
    r"""Positions shifted so that the middle of their range is 0.

    .. math:: p_i - p_{\text{mid}}, \qquad p_{\text{mid}} = \tfrac12 \big(\min_j p_j + \max_j p_j\big)

    The head's scores ``-(p_i - p_j)**2`` depend on differences of positions
    only, so the shift changes no score; it makes ``max |p - p_mid|`` as small
    as it can be, half the spread, which keeps the three terms of the
    expanded square small (see the module's docstring).

    Parameters
    ----------
    positions : array_like, shape (n,)
        Spread (``max - min``) at most :data:`MAX_SPREAD`.

    Returns
    -------
    ndarray, shape (n,)
    """
    (p,) = as_series(positions=positions)
    if p.max() / 2 - p.min() / 2 > MAX_SPREAD / 2:
        raise ValueError(f"positions must span at most {MAX_SPREAD:g}, so that (p_i - p_j)**2 stays finite")
    return _centred_on_midrange(p)  # (n,)


def _centred_on_midrange(x: np.ndarray) -> np.ndarray:
    """``x`` (a checked 1-D array) shifted so that the middle of its range, ``(min + max) / 2``, is 0."""
    return x - (x.min() / 2 + x.max() / 2)  # (n,)


def gaussian_head_weights(d_k=3, offset=0.0):
    r"""The fixed projections of the engineered head.

    With ``d_k = 3`` each of the three terms of ``-(p_i - p_j)**2`` gets its
    own dimension::

        q_i = [sqrt(2) p_i, -p_i**2, 1]
        k_j = [sqrt(2) p_j, 1, -p_j**2]
        q_i . k_j = 2 p_i p_j - p_i**2 - p_j**2 = -(p_i - p_j)**2

    With ``d_k = 2`` the middle dimension is dropped, and ``q_i . k_j =
    2 p_i p_j - p_j**2 = -(p_i - p_j)**2 + p_i**2``. The extra ``p_i**2`` is
    the same for every key of row ``i``, and the softmax of a row does not
    change when one number is added to all its scores: the weights are the
    same.

    An ``offset`` ``delta`` moves the query to ``p_i + delta``; the shift is
    linear in the token ``[s, p, p**2, 1]`` (its constant rides on the last
    feature), so the projections stay fixed matrices:

    .. math:: q_i \cdot k_j = -(p_i + \delta - p_j)^2,

    and row ``i``'s weights peak at ``p_j = p_i + delta``: ahead of token
    ``i`` for ``delta > 0``, behind it for ``delta < 0``.

    Parameters
    ----------
    d_k : {3, 2}
        The dimension of the queries and keys.
    offset : float
        ``delta``, finite; 0 gives the band centred on the diagonal.

    Returns
    -------
    W_Q : ndarray, shape (4, d_k)
    W_K : ndarray, shape (4, d_k)
    W_V : ndarray, shape (4, 1)
        ``W_V`` copies the signal column, so the head averages the signal.
    """
    whole = isinstance(d_k, int | np.integer) and not isinstance(d_k, bool)
    if not whole or d_k not in (2, 3):
        raise ValueError(f"d_k must be 3 or 2, got {d_k!r}")
    delta = _as_offset(offset)
    r2 = np.sqrt(2.0)
    # One row per feature s, p, p**2, 1. The query's columns:
    # sqrt(2) (p + delta), -(p + delta)**2 = -p**2 - 2 delta p - delta**2, 1
    W_Q = np.array([[0, 0, 0],
                    [r2, -2 * delta, 0],
                    [0, -1, 0],
                    [r2 * delta, -delta**2, 1]], dtype=float)
    W_K = np.array([[0, 0, 0],
                    [r2, 0, 0],
                    [0, 0, -1],
                    [0, 1, 0]], dtype=float)
    W_V = np.array([[1], [0], [0], [0]], dtype=float)  # copies the signal
    # d_k = 2 drops the query's own term, -(p_i + delta)**2
    keep = [0, 1, 2] if d_k == 3 else [0, 2]
    return W_Q[:, keep], W_K[:, keep], W_V


def _check_reach(centred, delta: float) -> None:
    """Refuse, naming positions and offset, a query ``p_i + delta`` farther than :data:`MAX_REACH` from the centre."""
    reach = float(np.max(np.abs(centred))) + abs(delta)
    if reach > MAX_REACH:
        raise ValueError(f"positions and offset: a query p_i + offset lies {reach:.3g} from the positions' centre, "
                         f"more than {MAX_REACH:g}, so the scores -(p_i + offset - p_j)**2 would overflow")


def _as_offset(offset) -> float:
    """``offset`` as a float, refused by name unless finite and small enough to square."""
    delta = as_real_scalar(offset, "offset")
    if abs(delta) > MAX_SPREAD:
        raise ValueError(f"offset must be at most {MAX_SPREAD:g} in size, so that its square stays finite")
    return delta


def fixed_divisor_weights(temperature):
    r"""Projections that give the head at ``temperature`` when the scores are divided by ``sqrt(d_k)``.

    A transformer always divides the scores by ``sqrt(d_k)``; it has no
    temperature knob. Scaling ``W_Q`` by ``sqrt(d_k) / tau`` gives the same
    weights as the book's head at temperature ``tau``:

    .. math:: \frac{(X W_Q \tfrac{\sqrt{d_k}}{\tau})(X W_K)^\top}{\sqrt{d_k}}
        = \frac{Q K^\top}{\tau}.

    Parameters
    ----------
    temperature : float
        The book's ``tau > 0``.

    Returns
    -------
    W_Q : ndarray, shape (4, 3)
        :func:`gaussian_head_weights`'s ``W_Q`` times ``sqrt(3) / tau``.
    W_K : ndarray, shape (4, 3)
    W_V : ndarray, shape (4, 1)
    """
    tau = as_temperature(temperature, "temperature")
    W_Q, W_K, W_V = gaussian_head_weights()
    return W_Q * (np.sqrt(W_Q.shape[1]) / tau), W_K, W_V


def gaussian_head(signal, positions, temperature, *, offset=0.0, mask=None):
    r"""Run the engineered head on a signal: a Gaussian smoother.

    .. math:: \text{output}_i = \sum_j a_{ij} s_j, \qquad
        a_{ij} = \frac{\exp(-(p_i + \delta - p_j)^2 / \tau)}{\sum_l \exp(-(p_i + \delta - p_l)^2 / \tau)}

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``; the kernel's bandwidth is ``sqrt(tau / 2)``.
    offset : float
        ``delta``: row ``i``'s band is centred on ``p_i + delta``
        (:func:`gaussian_head_weights`); 0 by default.
    mask : array_like of bool, shape (n, n), optional
        Passed to :func:`attention`; ``False`` entries get weight 0.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)

    Raises
    ------
    ValueError
        On bad input; if the ``(n, n)`` weights need more memory than
        :mod:`selfattention.memory` allows; or if the rounding of the
        expanded square could move the weights by more than
        :data:`ROUNDING_TOLERANCE` (a temperature too small for the spread
        of the positions and the offset).
    """
    tau = as_temperature(temperature, "temperature")
    p = centre_positions(positions)  # (n,): scores depend on p_i - p_j only
    memory.require_matrix(p.size, p.size, "positions")
    X = positional_features(signal, p)  # (n, 4)
    delta = _as_offset(offset)
    _check_reach(p, delta)
    W_Q, W_K, W_V = gaussian_head_weights(offset=delta)
    output, weights = attention(X @ W_Q, X @ W_K, X @ W_V, tau, mask=mask)
    _check_rounding(p, tau, weights, delta)
    return output[:, 0], weights  # (n,), (n, n)


def attention_matrices(positions, temperatures, *, offset=0.0) -> np.ndarray:
    r"""The engineered head's attention matrices at several temperatures, its scores computed once.

    The scores ``-(p_i + delta - p_j)**2`` do not depend on the temperature:
    they are computed once, as :func:`gaussian_head` computes them, and each
    temperature costs one softmax of them, the one
    :func:`~selfattention.core.attention` takes. The same operations on the
    same numbers: the matrices are :func:`gaussian_head`'s weights, to the
    last bit, and are refused where it refuses them.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperatures : array_like, shape (c,)
        Each ``tau > 0``.
    offset : float
        ``delta``, as for :func:`gaussian_head`.

    Returns
    -------
    ndarray, shape (c, n, n)
        ``[k]`` is the weights of ``gaussian_head(signal, positions,
        temperatures[k], offset=offset)``, whatever the signal.
    """
    taus = as_temperatures(temperatures, "temperatures")
    p = centre_positions(positions)  # (n,)
    memory.require_matrix(p.size, p.size, "positions and temperatures", count=taus.size + 2, bytes_per_entry=8)
    delta = _as_offset(offset)
    _check_reach(p, delta)
    X = positional_features(np.zeros_like(p), p)  # (n, 4): the weights do not depend on the signal
    W_Q, W_K, _ = gaussian_head_weights(offset=delta)
    weights = np.empty((taus.size, p.size, p.size))  # (c, n, n)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = finite_result((X @ W_Q) @ (X @ W_K).T, "Q and K: the scores Q K^T overflow the double range")
        for A, tau in zip(weights, taus, strict=True):
            A[...] = scores  # (n, n)
            _softmax_inplace(A, -1, "scores", tau)
            with naming("temperatures", "temperature"):
                _check_rounding(p, tau, A, delta)
    return weights


def _check_rounding(centred, temperature, weights, offset=0.0) -> None:
    r"""Raise unless the rounding of the scores moves every row of ``weights`` by at most :data:`ROUNDING_TOLERANCE`.

    The expanded square adds three terms as large as ``P**2``, with
    ``P = max|p| + |delta|`` bounding ``|p_i + delta|`` and ``|p_j|``,
    each rounded to ``eps`` of its size (``eps`` = 2.2e-16), so every scaled
    score is off by at most

    .. math:: \eta = 16\, \text{eps}\, P^2 / \tau

    (16 covers the roundings of the projections and of the sum; the worst
    case measured over random positions is about 10). Perturbing the scaled
    scores by at most ``eta`` moves row ``i`` of a softmax by at most
    ``4 eta (1 - max_j a_ij)`` in total, to first order: rows that attend
    to a single key (small temperatures) are safe even when ``eta`` is not
    tiny. Beyond ``eta = 1e-3`` the first order is not trusted.

    Parameters
    ----------
    centred : ndarray, shape (n,)
        The positions the head used, as from :func:`centre_positions`.
    temperature : float
    weights : ndarray, shape (n, n)
        The head's weights on them.
    offset : float
        The head's ``delta``.
    """
    largest = np.max(np.abs(centred)) + abs(offset)  # P, at most MAX_REACH (_check_reach)
    score_error = 16 * np.finfo(float).eps * largest**2
    with np.errstate(over="ignore"):  # a tiny temperature: inf, refused
        eta = score_error / temperature
    if _weight_shift(eta, weights) > ROUNDING_TOLERANCE:
        raise ValueError(
            f"temperature {temperature:.3g} is too small for positions spanning {2 * np.max(np.abs(centred)):.3g}"
            + (f" with offset {offset:.3g}" if offset else "")
            + ": the rounding of the expanded square -p_i**2 + 2 p_i p_j - p_j**2 could move the weights by more "
            f"than {ROUNDING_TOLERANCE:g} (a temperature of {4 * score_error / ROUNDING_TOLERANCE:.3g} or more is safe)"
        )


def _weight_shift(eta: float, weights: np.ndarray) -> float:
    r"""The most that scaled scores, each off by at most ``eta``, can move a row of ``weights`` in total.

    To first order, :math:`4 \eta (1 - \max_j a_{ij})` for row ``i`` (the
    largest over the rows is returned); ``inf`` beyond ``eta = 1e-3`` (or for
    ``eta = inf``), where the first order is not trusted. The heads compare it
    with :data:`ROUNDING_TOLERANCE`.
    """
    return 4 * eta * float(np.max(1 - weights.max(axis=1))) if eta <= _MAX_ETA else np.inf
