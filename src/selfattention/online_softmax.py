r"""Exact attention in linear memory: each row's softmax computed online, a block of keys at a time.

A row of attention needs its largest score, the sum of its exponentials and
the weighted sum of its values. All three can be carried along as the keys
arrive in blocks (an *online softmax*, Milakov and Gimelshein 2018; Rabe and
Staats 2021): with :math:`\hat e_i` the largest score of row ``i`` seen so
far, :math:`\ell_i` the sum of :math:`\exp((e_{ij} - \hat e_i)/\tau)` and
:math:`\phi_i` the sum of those exponentials times the values, a new block of
keys :math:`\mathcal J` gives

.. math::
    \hat e_i' = \max\big(\hat e_i, \max_{j \in \mathcal J} e_{ij}\big), \qquad
    \ell_i' = \ell_i\, \exp((\hat e_i - \hat e_i')/\tau)
        + \sum_{j \in \mathcal J} \exp((e_{ij} - \hat e_i')/\tau),

    \phi_i' = \phi_i\, \exp((\hat e_i - \hat e_i')/\tau)
        + \sum_{j \in \mathcal J} \exp((e_{ij} - \hat e_i')/\tau)\, v_j,

and after the last block the output is :math:`\phi_i / \ell_i`, the
softmax-weighted average of the values: the exact head, not an estimate.
Only one block of weights, ``n_queries x block``, is held at once, so the
memory beyond the inputs and outputs grows as ``n``, not ``n**2``; the time
still grows as ``n**2`` (every pair is scored), and
:func:`~selfattention.work.require_work` checks it first.
:func:`rescaling_identity` checks the rules with sympy.
"""

from __future__ import annotations

import numpy as np

from . import memory, work
from ._validation import as_count, as_positive_scalar, as_series, as_temperature, power_of_two
from .core import _SCORES_OVERFLOW, _between, _check_qkv
from .head import _check_reach, _check_rounding, centre_positions, gaussian_head_weights, positional_features

#: Keys per block, by default: a block of weights is ``n_queries x 256`` doubles.
BLOCK = 256
#: Bytes per entry of a block budgeted with the memory guard: its weights (8,
#: computed in place from the scores) and the mask of their finiteness (1),
#: with room for the few arrays of ``n`` numbers held beside them (measured
#: peak: about 9 an entry; ``tests/unit/test_online_softmax.py`` checks it stays below).
BYTES_PER_ENTRY = 16


def online_attention(Q, K, V, temperature=None, *, block=BLOCK) -> np.ndarray:
    r"""Scaled dot-product attention, exact, computed a block of keys at a time.

    .. math:: \text{output} = \operatorname{softmax}(Q K^\top / \tau)\, V

    as :func:`~selfattention.core.attention` computes it, but without the
    ``(n_queries, n_keys)`` weights: the running largest score, sum and
    weighted sum of each row are rescaled as each block of keys arrives
    (see the module's docstring).

    Parameters
    ----------
    Q : array_like, shape (n_queries, d_k)
    K : array_like, shape (n_keys, d_k)
    V : array_like, shape (n_keys, d_v)
    temperature : float, optional
        The divisor ``tau`` of the scores; ``sqrt(d_k)`` when omitted.
    block : int
        Keys per block, at least 1 (the last block may be shorter).

    Returns
    -------
    output : ndarray, shape (n_queries, d_v)

    Raises
    ------
    ValueError
        On bad input; naming ``Q and K`` if the ``n_queries * n_keys`` pairs
        pass the work limit (:mod:`~selfattention.work`), ``block`` if one
        block of weights passes the memory limit, or if the scores overflow.
    """
    Q, K, V = _check_qkv(Q, K, V, temperature)
    tau = np.sqrt(Q.shape[1]) if temperature is None else as_positive_scalar(temperature, "temperature")
    block = as_count(block, "block")
    output, _ = _online(Q, K, V, tau, block, "Q and K")
    return output


def online_gaussian_head(signal, positions, temperature, *, block=BLOCK) -> np.ndarray:
    r"""The engineered Gaussian head, exact, in memory linear in ``n``.

    .. math:: \text{output}_i = \frac{\sum_j \exp(-(p_i - p_j)^2 / \tau)\, s_j}
        {\sum_l \exp(-(p_i - p_l)^2 / \tau)}

    The same tokens, projections and scores as
    :func:`~selfattention.head.gaussian_head` (positions centred, the
    expanded square), and the same refusal of a temperature so small that
    rounding could move the weights by more than
    :data:`~selfattention.head.ROUNDING_TOLERANCE`; the keys are taken
    ``block`` at a time by :func:`online_attention`'s rules, so no
    ``n x n`` matrix is formed and the memory guard lets through ``n`` far
    beyond the exact head's.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.
    block : int
        Keys per block, at least 1.

    Returns
    -------
    output : ndarray, shape (n,)
    """
    tau = as_temperature(temperature, "temperature")
    p = centre_positions(positions)  # (n,): scores depend on p_i - p_j only
    block = as_count(block, "block")
    X = positional_features(signal, p)  # (n, 4)
    _check_reach(p, 0.0)
    W_Q, W_K, W_V = gaussian_head_weights()
    output, total = _online(X @ W_Q, X @ W_K, X @ W_V, tau, block, "positions")
    # The largest weight of row i is 1 / total_i: its exponential is exp(0) = 1.
    _check_rounding(p, tau, (1 / total)[:, None])
    return output[:, 0]  # (n,)


def rounding_bound(signal, positions, temperature, *, block=BLOCK) -> float:
    r"""How far :func:`online_gaussian_head` and :func:`~selfattention.head.gaussian_head` can part by rounding alone.

    Both compute the same projections; then each scaled score
    :math:`(e_{ij} - \hat e_i)/\tau` is a dot product of three terms of total
    size at most :math:`4 P^2` (:math:`P`, half the spread of the
    positions; three roundings), a subtraction and a division: the two
    heads' can differ by :math:`20\, \text{eps}\, P^2/\tau`, and the
    rescalings' exponents add :math:`4\, \text{eps}\, P^2/\tau` (the largest
    score of a row rises by at most :math:`4 P^2` in all): by
    :math:`24\, \text{eps}\, P^2/\tau` in all. A weight then moves by a
    factor of at most :math:`\exp(48\, \text{eps}\, P^2/\tau)`, and by its
    own roundings: its exponential (2), the sum of ``n`` terms, and the
    rescalings (an exponential and a product, 3 a block). The output, an
    average of the signal, moves by at most :math:`\max|s|` times that, plus
    the ``2 n`` roundings of its own sum:

    .. math:: \max|s| \big(\exp(48\, \text{eps}\, P^2/\tau) - 1
        + \text{eps}\,(3 n + 3 n_\text{blocks} + 2)\big)

    (``eps`` = 2**-52; to first order: every term is far below 1).

    Parameters
    ----------
    signal, positions : array_like, shape (n,)
    temperature : float
    block : int

    Returns
    -------
    float
    """
    s, p = as_series(signal=signal, positions=positions)
    tau, block = as_temperature(temperature, "temperature"), as_count(block, "block")
    half = np.max(p) / 2 - np.min(p) / 2  # P, a numpy double: its square may overflow to inf
    eps = float(np.finfo(float).eps)
    with np.errstate(over="ignore", invalid="ignore"):  # 0 x inf, a zero signal far apart: refused below
        gap = 24 * eps * half**2 / tau  # the scaled scores' rounding
        blocks = -(-s.size // block)
        bound = float(np.max(np.abs(s))) * (np.expm1(2 * gap) + eps * (3 * s.size + 3 * blocks + 2))
    if not np.isfinite(bound):
        raise ValueError("signal, positions and temperature: the bound leaves the double range")
    return float(bound)


def _online(Q, K, V, tau, block, name):
    """Output (n_q, d_v) and each row's sum of exponentials (n_q,), a block of keys at a time."""
    n_q, n_k = Q.shape[0], K.shape[0]
    work.require_work(n_q * n_k, name,
                      f"attention of {n_q} queries on {n_k} keys")
    width = min(block, n_k)
    memory.require_matrix(n_q, width, f"{name} and block",
                          bytes_per_entry=BYTES_PER_ENTRY)
    scale = power_of_two(float(np.max(np.abs(V), initial=0.0)))
    top = np.full(n_q, -np.inf)  # (n_q,): e_hat, the largest score so far
    total = np.zeros(n_q)  # (n_q,): l, the sum of exponentials
    weighted = np.zeros((n_q, V.shape[1]))  # (n_q, d_v): phi
    for start in range(0, n_k, width):
        keys = slice(start, start + width)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = Q @ K[keys].T  # (n_q, b): e_ij of the block's keys
        top, total, weighted = _absorb(scores, V[keys] / scale, tau,
                                       top, total, weighted)
        del scores  # freed before the next block is scored
    with np.errstate(over="ignore"):  # clipped: rounding may pass the range
        return _between(weighted / total[:, None] * scale, V), total


def _absorb(scores, values, tau, top, total, weighted):
    r"""One block: the running ``e_hat, l, phi`` updated by the module's rules; ``scores`` (n_q, b) is overwritten.

    As :func:`~selfattention.core.attention`'s softmax, the largest score is
    subtracted before dividing by ``tau``: no exponent is positive.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(scores).all():
            raise ValueError(_SCORES_OVERFLOW)
        new_top = np.maximum(top, scores.max(axis=1))  # (n_q,): e_hat'
        shrink = np.exp((top - new_top) / tau)  # (n_q,): 0 at first
        scores -= new_top[:, None]
        scores /= tau
        np.exp(scores, out=scores)  # (n_q, b): at most 1
    total = total * shrink + scores.sum(axis=1)  # (n_q,)
    weighted = weighted * shrink[:, None] + scores @ values  # (n_q, d_v)
    return new_top, total, weighted


def rescaling_identity(old=2, new=2):
    r"""The online rules checked with sympy on ``old`` keys seen and ``new`` keys arriving, for one row.

    With symbolic scores :math:`e_{ij}` of one row, values :math:`v_j`, a
    temperature :math:`\tau` and any references :math:`\hat e_i` (the old
    largest score) and :math:`\hat e_i'` (the new), the rescaled statistics
    are those of all the keys taken at once:

    .. math:: \ell_i' - \sum_j \exp((e_{ij} - \hat e_i')/\tau) = 0, \qquad
        \frac{\phi_i'}{\ell_i'} - \frac{\sum_j \exp(e_{ij}/\tau) v_j}{\sum_j \exp(e_{ij}/\tau)} = 0.

    The references cancel: any would do, and the largest is taken only so
    that no exponent is positive (none overflows).

    Parameters
    ----------
    old, new : int
        Keys before and in the block, from 1 to 8 each.

    Returns
    -------
    rules : dict of str to sympy.Expr
        ``"l"``, ``"phi"``: the rescaled sums :math:`\ell_i'` and :math:`\phi_i'`.
    gaps : dict of str to sympy.Expr
        ``"l"``: :math:`\ell_i'` minus the sum over all keys at :math:`\hat e_i'`;
        ``"output"``: :math:`\phi_i'/\ell_i'` minus the softmax average. Both
        simplify to 0.
    """
    import sympy as sp  # here only: import selfattention needs no sympy

    old, new = as_count(old, "old", maximum=8), as_count(new, "new", maximum=8)
    e = sp.symbols(f"e_1:{old + new + 1}", real=True)
    v = sp.symbols(f"v_1:{old + new + 1}", real=True)
    e_hat, e_new = sp.Symbol(r"\hat e", real=True), sp.Symbol(r"\hat e'", real=True)
    tau = sp.Symbol("tau", positive=True)

    def weight(j, top):
        return sp.exp((e[j] - top) / tau)

    seen, arriving, every = range(old), range(old, old + new), range(old + new)
    shrink = sp.exp((e_hat - e_new) / tau)
    ell = shrink * sum(weight(j, e_hat) for j in seen) + sum(weight(j, e_new) for j in arriving)
    phi = shrink * sum(weight(j, e_hat) * v[j] for j in seen) + sum(weight(j, e_new) * v[j] for j in arriving)
    average = sum(sp.exp(e[j] / tau) * v[j] for j in every) / sum(sp.exp(e[j] / tau) for j in every)
    gaps = {"l": sp.powsimp(sp.expand(ell - sum(weight(j, e_new) for j in every))),
            "output": sp.simplify(sp.powsimp(sp.expand(phi / ell - average)))}
    return {"l": ell, "phi": phi}, gaps
