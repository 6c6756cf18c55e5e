r"""Several attention heads side by side, combined by an output projection.

Multi-head attention, as Vaswani et al. (2017) write it, runs ``M`` heads on
the same tokens, each with projections of its own, and mixes their outputs
with one more matrix, the output projection ``W_O``:

.. math:: \operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_M)\, W_O,

where each head is ``softmax((X W_Q)(X W_K)^T / tau) X W_V`` with its own
projections and temperature.

A :class:`Head` holds one head's three projections and its temperature;
:func:`multi_head` runs a list of them and applies ``W_O``. When every head
has ``d_v = 1`` and the layer one output, the layer is again a linear
smoother of the values, with the weights of :func:`layer_weights`,
which need not be non-negative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory
from ._validation import as_array, as_instances, as_positive_scalar, as_temperature, finite_result, naming
from .core import attention
from .head import _as_offset, centre_positions, gaussian_head_weights, positional_features


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: its fields are arrays
class Head:
    r"""One attention head: its projections and its temperature.

    .. math:: \text{head}_1(X) = \operatorname{softmax}\!\big((X W_Q^{(1)})(X W_K^{(1)})^\top / \tau^{(1)}\big)\,
        X W_V^{(1)}

    for head 1 of a layer, and so on.

    Attributes
    ----------
    W_Q : ndarray, shape (d_model, d_k)
    W_K : ndarray, shape (d_model, d_k)
    W_V : ndarray, shape (d_model, d_v)
    temperature : float
        ``tau > 0``, the divisor of the scores: a normal double (at least
        the smallest, 2.2e-308), as every temperature of the package.

    The arrays are stored as read-only float copies, so a head cannot change
    after it is made.
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    temperature: float

    def __post_init__(self):
        W_Q, W_K, W_V = (as_array(getattr(self, name), name, ndim=2) for name in ("W_Q", "W_K", "W_V"))
        if W_K.shape != W_Q.shape or W_V.shape[0] != W_Q.shape[0] or 0 in W_Q.shape + W_V.shape:
            raise ValueError("W_Q, W_K and W_V must have shapes (d_model, d_k), (d_model, d_k) and (d_model, d_v), "
                             f"none of them empty; got {W_Q.shape}, {W_K.shape} and {W_V.shape}")
        for name, value in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
            frozen = np.array(value, dtype=float)  # a copy of its own
            frozen.flags.writeable = False
            object.__setattr__(self, name, frozen)
        object.__setattr__(self, "temperature", as_temperature(self.temperature, "temperature"))

    @property
    def d_model(self) -> int:
        """The width of the tokens the head reads."""
        return self.W_Q.shape[0]

    @property
    def d_v(self) -> int:
        """The width of the head's output."""
        return self.W_V.shape[1]

    def __call__(self, X, mask=None):
        """Run the head on tokens ``X``, shape (n, d_model).

        ``mask``, shape (n, n), optional, is :func:`~selfattention.core.attention`'s
        (``causal_mask(n)`` for a head that may not look ahead).

        Returns
        -------
        output : ndarray, shape (n, d_v)
        weights : ndarray, shape (n, n)
        """
        X = _as_tokens(X, self.d_model)
        with np.errstate(over="ignore", invalid="ignore"), naming("X", "Q", "K", "V"):  # attention names overflows
            return attention(X @ self.W_Q, X @ self.W_K, X @ self.W_V, self.temperature,
                             mask=mask)  # (n, d_v), (n, n)


def offset_head(offset, temperature) -> Head:
    r"""The engineered head whose band is centred ``offset`` away from each token.

    Its scores are ``-(p_i + delta - p_j)**2`` on the tokens ``[s, p, p**2, 1]``
    (:func:`~selfattention.head.gaussian_head_weights` with that offset).

    Parameters
    ----------
    offset : float
        ``delta``, finite.
    temperature : float
        ``tau > 0``.

    Returns
    -------
    Head
        With ``d_model = 4``, ``d_k = 3``, ``d_v = 1``.
    """
    W_Q, W_K, W_V = gaussian_head_weights(offset=_as_offset(offset))
    return Head(W_Q, W_K, W_V, as_temperature(temperature, "temperature"))


def signal_tokens(signal, positions) -> np.ndarray:
    """The tokens ``[s, p, p**2, 1]`` that the engineered heads read, from centred positions.

    The positions are centred (:func:`~selfattention.head.centre_positions`)
    as :func:`~selfattention.head.gaussian_head` centres them: the scores
    depend on differences of positions only, and the terms of the expanded
    square stay small.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)

    Returns
    -------
    ndarray, shape (n, 4)
    """
    return positional_features(signal, centre_positions(positions))  # (n, 4)


#: What :func:`multi_head` says when its output leaves the double range.
_LAYER_OVERFLOW = "X and W_O: the layer's output overflows the double range"


def multi_head(X, heads, W_O) -> np.ndarray:
    r"""Multi-head attention: the heads' outputs side by side, times the output projection.

    .. math:: \operatorname{Concat}(\text{head}_1(X), \dots, \text{head}_M(X))\, W_O

    Parameters
    ----------
    X : array_like, shape (n, d_model)
        The tokens, one per row.
    heads : sequence of Head, length M
        All reading tokens of width ``d_model``; each has ``d_v`` output
        columns of its own (heads may differ in ``d_v``: then ``M d_v``
        below is the sum of their ``d_v``).
    W_O : array_like, shape (M d_v, d_out)
        The output projection: each row says how much of the matching column
        of the concatenated outputs goes into each output column.

    Returns
    -------
    ndarray, shape (n, d_out)
    """
    concat = head_outputs(X, heads)  # (n, M d_v)
    W_O = _as_output_projection(W_O, concat.shape[1])  # (M d_v, d_out)
    with np.errstate(over="ignore", invalid="ignore"):
        output = concat @ W_O  # (n, d_out)
    return finite_result(output, _LAYER_OVERFLOW)


def head_outputs(X, heads) -> np.ndarray:
    """``Concat(head_1(X), ..., head_M(X))``, the heads' outputs side by side.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
    heads : sequence of Head, length M, all with that ``d_model``

    Returns
    -------
    ndarray, shape (n, M d_v)
        Head 1's columns first; heads that differ in ``d_v`` give the sum of
        their ``d_v`` columns.
    """
    heads = _as_heads(heads)
    X = _as_tokens(X, heads[0].d_model)
    return np.concatenate([head(X)[0] for head in heads], axis=1)  # (n, M d_v)


def layer_weights(X, heads, W_O) -> np.ndarray:
    r"""The weights of a layer of one-value heads with one output: ``W_O[1] A^(1) + ... + W_O[M] A^(M)``.

    For heads with ``d_v = 1`` and ``W_O`` of shape (M, 1), the layer's
    output is ``W_O[1] A^(1) V^(1) + ... + W_O[M] A^(M) V^(M)``; when every
    head has the same values ``V`` (as the engineered heads do: the signal),
    it is ``B V`` with the matrix returned here. Its rows sum to the sum of
    the entries of ``W_O``; an entry ``b_ij`` is negative wherever the heads
    with negative entries of ``W_O``, their weights ``a_ij`` multiplied by
    those entries, outweigh the rest. (Head 1 is ``heads[0]``.)

    Parameters
    ----------
    X : array_like, shape (n, d_model)
    heads : sequence of Head, length M, each with ``d_v = 1``
    W_O : array_like, shape (M, 1)

    Returns
    -------
    B : ndarray, shape (n, n)
    """
    heads = _as_heads(heads)
    if any(head.d_v != 1 for head in heads):
        raise ValueError(f"heads must all have d_v = 1 for one matrix of weights, got {[h.d_v for h in heads]}")
    W_O = _as_output_projection(W_O, len(heads))  # (M, d_out)
    if W_O.shape[1] != 1:
        raise ValueError(f"W_O must have one column for one matrix of weights, got shape {W_O.shape}")
    X = _as_tokens(X, heads[0].d_model)
    memory.require_matrix(X.shape[0], X.shape[0], "X", count=2)
    B = np.zeros((X.shape[0], X.shape[0]))  # (n, n)
    with np.errstate(over="ignore", invalid="ignore"):
        for w, head in zip(W_O[:, 0], heads, strict=True):
            A = head(X)[1]  # (n, n)
            A *= w
            B += A
    return finite_result(B, "W_O: the layer's weights overflow the double range")


def _as_heads(heads) -> list[Head]:
    """``heads`` as a non-empty list of :class:`Head` that all read tokens of one width."""
    heads = as_instances(heads, "heads", Head)
    widths = sorted({head.d_model for head in heads})
    if len(widths) > 1:
        raise ValueError(f"heads must all read tokens of one width d_model, got widths {widths}")
    return heads


def _as_output_projection(W_O, rows: int) -> np.ndarray:
    """``W_O`` as a float array of shape (``rows``, d_out), refused by name otherwise."""
    W_O = as_array(W_O, "W_O", ndim=2)
    if W_O.shape[0] != rows or W_O.shape[1] == 0:
        raise ValueError(f"W_O must have {rows} rows (one per column of the heads' outputs) and at least one "
                         f"column, got shape {W_O.shape}")
    return W_O


def _as_tokens(X, d_model: int) -> np.ndarray:
    X = as_array(X, "X", ndim=2)
    if X.shape[1] != d_model or X.shape[0] == 0:
        raise ValueError(f"X must have shape (n, {d_model}) with n >= 1 to match the heads, got {X.shape}")
    return X


def derivative_layer(offset, temperature):
    r"""Two offset heads and the output projection that make a derivative: a central difference.

    .. math:: \text{output}_i = \frac{\text{head}_1(X)_i - \text{head}_2(X)_i}{2 \delta}
        \approx \frac{\bar f(p_i + \delta) - \bar f(p_i - \delta)}{2 \delta} \approx f'(p_i),

    with head 1 at the offset ``+delta`` and head 2 at ``-delta``.

    Parameters
    ----------
    offset : float
        ``delta > 0``.
    temperature : float
        ``tau > 0``, the temperature of both heads.

    Returns
    -------
    heads : list of Head, length 2
        At offsets ``+delta`` and ``-delta``.
    W_O : ndarray, shape (2, 1)
        ``[1, -1] / (2 delta)``.
    """
    delta = as_temperature(offset, "offset")  # positive and normal, so that 1 / (2 delta) is finite
    heads = [offset_head(delta, temperature), offset_head(-delta, temperature)]
    return heads, np.array([[1.0], [-1.0]]) / (2 * delta)


def curvature_layer(offset, temperature):
    r"""Three offset heads and the output projection that make a second derivative: a second difference.

    .. math:: \text{output}_i = \frac{\text{head}_1(X)_i - 2\, \text{head}_2(X)_i
        + \text{head}_3(X)_i}{\delta^2}
        \approx \frac{\bar f(p_i - \delta) - 2 \bar f(p_i) + \bar f(p_i + \delta)}{\delta^2} \approx f''(p_i),

    with heads 1, 2 and 3 at the offsets ``-delta``, 0 and ``+delta``.

    The rows of the layer's weights sum to 0 (a constant has no curvature),
    and, where the three bands lie inside the signal, so do their first
    moments (nor has a line).

    Parameters
    ----------
    offset : float
        ``delta > 0``, with ``1 / delta**2`` a double.
    temperature : float
        ``tau > 0``, the temperature of the three heads.

    Returns
    -------
    heads : list of Head, length 3
        At offsets ``-delta``, ``0`` and ``+delta``.
    W_O : ndarray, shape (3, 1)
        ``[1, -2, 1] / delta**2``.
    """
    delta = as_temperature(offset, "offset")
    with np.errstate(over="ignore"):
        W_O = np.array([[1.0], [-2.0], [1.0]]) / delta / delta  # divided in turn: delta**2 alone may underflow
    finite_result(W_O, f"offset: 2 / offset**2 overflows the double range, got {offset!r}")
    heads = [offset_head(-delta, temperature), offset_head(0.0, temperature), offset_head(delta, temperature)]
    return heads, W_O


def jackknife_layer(temperature, ratio):
    r"""Two heads at temperatures ``tau`` and ``rho**2 tau`` combined to cancel the ``h**2`` bias.

    A head of bandwidth ``h`` has a bias ``h**2 f''(p) / 2`` in the interior,
    one of bandwidth ``rho h`` (temperature ``rho**2 tau``) ``rho**2`` times
    that; the combination

    .. math:: W_O = \frac{1}{\rho^2 - 1} \begin{bmatrix} \rho^2 \\ -1 \end{bmatrix}

    has weights summing to 1 and cancels the term (a generalised jackknife).

    Parameters
    ----------
    temperature : float
        ``tau > 0``, the first head's.
    ratio : float
        ``rho > 1``, the ratio of the two bandwidths.

    Returns
    -------
    heads : list of Head, length 2
    W_O : ndarray, shape (2, 1)
    """
    rho = as_positive_scalar(ratio, "ratio")
    if not 1 < rho <= 1e150:
        raise ValueError(f"ratio must be greater than 1 (and at most 1e150, so that its square is finite), "
                         f"got {ratio!r}")
    rho2 = rho * rho
    tau = as_temperature(temperature, "temperature")
    if not tau <= np.finfo(float).max / rho2:
        raise ValueError(f"temperature times ratio**2 overflows the double range, got {tau!r} and {ratio!r}")
    heads = [offset_head(0.0, tau), offset_head(0.0, tau * rho2)]
    return heads, np.array([[rho2], [-1.0]]) / (rho2 - 1)
