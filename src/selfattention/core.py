r"""Scaled dot-product attention, the softmax it is built on, and the masks it takes.

.. math::

    \operatorname{Attention}(Q, K, V)
        = \operatorname{softmax}\!\left(\frac{Q K^\top}{\tau}\right) V,
    \qquad \tau = \sqrt{d_k} \text{ by default.}

A mask hides keys from queries (weight exactly 0); a bias adds a number to
each scaled score before the softmax (ALiBi's penalty on distance, in
:mod:`~selfattention.positional`). :func:`causal_mask` is the mask of a
language model: every query sees itself and the tokens before it.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_array, as_axis, as_count, as_mask, as_positive_scalar, finite_result


def softmax(x, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax along ``axis``.

    For a row of scores :math:`e_{i1}, \dots, e_{iN}`,

    .. math:: \operatorname{softmax}_j(e_{ij}) = \frac{\exp(e_{ij} - \max_l e_{il})}
        {\sum_l \exp(e_{il} - \max_l e_{il})}

    Subtracting the maximum changes nothing mathematically but keeps every
    exponent at most 0, so scores such as ``1e300`` cannot overflow.

    Parameters
    ----------
    x : array_like
        Scores. ``-inf`` entries are allowed and get weight 0 (a mask); NaN
        and ``+inf`` are not.
    axis : int
        The axis to normalise over.

    Returns
    -------
    ndarray, same shape as ``x``
        Non-negative weights that sum to 1 along ``axis``.

    Raises
    ------
    ValueError
        If ``x`` holds NaN or ``+inf``, or a slice along ``axis`` is all ``-inf``.
    """
    x = as_array(x, "x", allow_neg_inf=True)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension")
    return _softmax_inplace(x.copy(), as_axis(axis, x.ndim), "x")


def _softmax_inplace(z: np.ndarray, axis: int, name: str, temperature: float = 1.0,
                     bias: np.ndarray | None = None) -> np.ndarray:
    """``softmax(z / temperature + bias)`` along ``axis``, computed in ``z`` itself (no n x n copies).

    The maximum is subtracted *before* dividing by the temperature, so that
    no exponent can be positive even when ``temperature`` is tiny. ``bias``
    (checked by the caller; ``-inf`` only where ``z`` is ``-inf``) is added
    after the division, less its largest entry over the keys still open, and
    the row's maximum is subtracted again. Scaled scores more than the double
    range below their row's largest get weight 0.
    """
    m = np.max(z, axis=axis, keepdims=True)
    if np.isneginf(m).any():
        raise ValueError(f"{name} has a slice along the softmax axis that is entirely -inf")
    with np.errstate(over="ignore", invalid="ignore"):  # huge gaps give -inf, whose exp is exactly 0
        z -= m
        z /= temperature
        if bias is not None:
            z += bias  # -inf stays -inf
            z -= np.max(bias, axis=axis, keepdims=True, where=~np.isneginf(z), initial=-np.inf)
            m = np.max(z, axis=axis, keepdims=True)
            if np.isneginf(m).any():
                raise ValueError(f"{name} and bias: every scaled score plus its bias leaves the double range")
            z -= m
    np.exp(z, out=z)
    z /= np.sum(z, axis=axis, keepdims=True)
    return z


#: What :func:`attention` says when ``Q @ K.T`` leaves the double range.
_SCORES_OVERFLOW = "Q and K: the scores Q K^T overflow the double range"


def attention(Q, K, V, temperature=None, *, mask=None, bias=None):
    r"""Scaled dot-product attention, returning the weights as well.

    .. math:: A = \operatorname{softmax}(Q K^\top / \tau + \text{bias}), \qquad
        \text{output} = A V

    (the bias is 0 when omitted).

    Parameters
    ----------
    Q : array_like, shape (n_queries, d_k)
        One query per row.
    K : array_like, shape (n_keys, d_k)
        One key per row.
    V : array_like, shape (n_keys, d_v)
        One value per row.
    temperature : float, optional
        The divisor ``tau`` of the scores; ``sqrt(d_k)`` when omitted.
    mask : array_like of bool, shape (n_queries, n_keys), optional
        ``True`` where query ``i`` may attend to key ``j``. Masked scores are
        set to ``-inf`` before the softmax; ``exp(-inf) = 0``, so a masked key
        gets weight exactly 0 and the row's weight is shared among the others.
    bias : array_like, shape (n_queries, n_keys), optional
        Added to the scaled scores ``Q K^T / tau`` before the softmax: finite,
        or ``-inf`` to mask a key (as ``mask`` does). Only differences within
        a row matter: each row of the bias is shifted so that its largest
        entry over the keys left open is 0.

    Returns
    -------
    output : ndarray, shape (n_queries, d_v)
    weights : ndarray, shape (n_queries, n_keys)
        Row ``i`` holds how much query ``i`` attends to each key; rows sum to 1.

    Raises
    ------
    ValueError
        On bad input, if the scores ``Q K^T`` overflow (or, with a bias, every
        scaled score of a row plus its bias does), or if the weights would
        need more memory than :func:`selfattention.memory.get_limit` allows
        (about :data:`selfattention.memory.BYTES_PER_ENTRY` bytes per entry).
    """
    Q, K, V = _check_qkv(Q, K, V, temperature)
    if temperature is None:
        tau = np.sqrt(Q.shape[1])  # the transformer's sqrt(d_k)
    else:
        tau = as_positive_scalar(temperature, "temperature")
    memory.require_matrix(Q.shape[0], K.shape[0], "Q and K")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: named below
        # (n_queries, n_keys): e_ij = q_i . k_j
        scores = finite_result(Q @ K.T, _SCORES_OVERFLOW)
        bias = _mask_scores(scores, mask, bias)  # a masked score is -inf
        # softmax(scores / tau + bias), row by row, computed in scores itself
        weights = _softmax_inplace(scores, -1, "scores", tau, bias)
        output = weights @ V  # (n_queries, d_v): weighted averages of values
    return _between(output, V), weights



def _mask_scores(scores: np.ndarray, mask, bias) -> np.ndarray | None:
    """Set the scores ``mask`` or ``bias`` hides to ``-inf``, in place; return the checked bias (or None).

    A key is hidden where ``mask`` is False or ``bias`` is ``-inf``; every
    query must keep at least one key.
    """
    allowed = None if mask is None else as_mask(mask, scores.shape)
    penalty = None if bias is None else _as_bias(bias, scores.shape)
    if penalty is not None:
        allowed = np.isfinite(penalty) if allowed is None else allowed & np.isfinite(penalty)
    if allowed is not None:
        _check_rows(allowed, "mask" if bias is None else "mask and bias")
        scores[~allowed] = -np.inf  # masked keys get weight 0
    return penalty


def _check_qkv(Q, K, V, temperature):
    Q = as_array(Q, "Q", ndim=2)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q and K must have the same number of columns d_k, got {Q.shape[1]} and {K.shape[1]}")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K and V must have the same number of rows, got {K.shape[0]} and {V.shape[0]}")
    if K.shape[0] == 0:
        raise ValueError("K must have at least one row (a key to attend to)")
    if temperature is None and Q.shape[1] == 0:
        raise ValueError("Q and K must have at least one column for the default temperature sqrt(d_k)")
    return Q, K, V


def _check_rows(allowed: np.ndarray, name: str) -> None:
    """Raise unless every row of ``allowed`` (what ``name`` leaves open) has a key."""
    if not allowed.any(axis=-1).all():
        raise ValueError(f"{name}: a query is left with no key to attend to")


def _as_bias(bias, shape) -> np.ndarray:
    """``bias`` as a float array of ``shape``: finite entries, or ``-inf`` (a masked key)."""
    B = as_array(bias, "bias", allow_neg_inf=True)
    if B.shape != shape:
        raise ValueError(f"bias must have shape {shape} (n_queries, n_keys), got {B.shape}")
    return B


def causal_mask(n) -> np.ndarray:
    r"""The mask of a causal head: query ``i`` sees the keys ``j <= i``.

    .. math:: a^{(\le i)}_{ij} = 0 \quad \text{for } j > i

    A language model predicts each token from the ones before it; with this
    mask no query sees a token after its own, so none sees the token it must
    predict next.

    Parameters
    ----------
    n : int
        The number of tokens, at least 1.

    Returns
    -------
    ndarray of bool, shape (n, n)
        ``True`` on and below the diagonal (for :func:`attention`'s ``mask``).
    """
    n = as_count(n, "n")
    memory.require_matrix(n, n, "n", bytes_per_entry=1)
    return np.tri(n, dtype=bool)  # (n, n): row i is True up to column i


def _between(output: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Clip weighted averages of ``V`` to its range: only rounding can take them out of it.

    Near the largest double that rounding could overflow to ``inf``; the
    clipped average is then the correct one to within rounding.
    """
    if V.size:
        np.clip(output, V.min(axis=0), V.max(axis=0), out=output)
    return output
