r"""The bilateral head: attention that is local in position *and* in value.

The quadratic-expansion trick of the engineered head, applied twice: once to
the position column, as before, and once to the signal column. Every token
becomes the row ``x = [s, s**2, p, p**2, 1]``, and fixed projections make
the score

.. math:: e_{ij} = -\frac{(p_i - p_j)^2}{\tau_p} - \frac{(s_i - s_j)^2}{\tau_s},

so that token ``i`` averages the tokens that are near it in position and
have a similar value. This is the bilateral filter of image processing.
The temperatures are folded into the query projection, and the generic
attention runs with temperature 1.
"""

from __future__ import annotations

import numpy as np

from . import memory
from ._validation import as_temperature, finite_result, naming
from .core import attention
from .head import _centred_on_midrange, centre_positions, gaussian_head_weights, positional_features

#: Names of the five input features, in column order.
FEATURES = ("s", "s^2", "p", "p^2", "1")
#: Which temperature divides each of the six query dimensions.
SCORE_TERMS = ("position",) * 3 + ("signal",) * 3
#: The arguments of :func:`bilateral_head` that an overflow of its scores may come from.
_ALL = "signal, positions, temperature or signal_temperature"


def content_features(signal, positions) -> np.ndarray:
    """Augment a 1-D signal with quadratic signal and position features: ``X``, shape (n, 5).

    The columns are ``[s, s**2, p, p**2, 1]``. Parameters are those of
    :func:`~selfattention.head.positional_features`.
    """
    X = positional_features(signal, positions)  # (n, 4): [s, p, p^2, 1], checked
    with np.errstate(over="ignore"):
        squares = finite_result(X[:, 0] ** 2, "signal: its squares overflow the double range")  # (n,)
    return np.insert(X, 1, squares, axis=1)  # (n, 5)


def _route(rows) -> np.ndarray:
    """(5, 3): copies features ``rows`` of ``[s, s^2, p, p^2, 1]`` into the columns of a (3, .) block."""
    route = np.zeros((len(FEATURES), 3))
    route[[FEATURES.index(r) for r in rows], [0, 1, 2]] = 1.0
    return route


def bilateral_head_weights(temperature=1.0, signal_temperature=1.0):
    r"""The fixed projections of the bilateral head.

    The engineered head's block (the rows ``p, p**2, 1`` of
    :func:`~selfattention.head.gaussian_head_weights`) is used twice: on
    ``(p, p**2, 1)`` for the first three dimensions and on ``(s, s**2, 1)``
    for the last three, and the query's dimensions are divided by their
    temperature (:data:`SCORE_TERMS`)::

        q_i = [sqrt(2) p_i, -p_i**2, 1] / tau_p  ++  [sqrt(2) s_i, -s_i**2, 1] / tau_s
        k_j = [sqrt(2) p_j, 1, -p_j**2]          ++  [sqrt(2) s_j, 1, -s_j**2]

    Parameters
    ----------
    temperature : float
        ``tau_p > 0``, the temperature of the position term.
    signal_temperature : float
        ``tau_s > 0``, the temperature of the signal term.

    Returns
    -------
    W_Q : ndarray, shape (5, 6)
    W_K : ndarray, shape (5, 6)
    W_V : ndarray, shape (5, 1)
        Copies the signal column.
    """
    tau_p = as_temperature(temperature, "temperature")
    tau_s = as_temperature(signal_temperature, "signal_temperature")
    divisors = {"position": tau_p, "signal": tau_s}
    block_Q, block_K, _ = gaussian_head_weights()  # (4, 3): rows s, p, p^2, 1
    block_Q, block_K = block_Q[1:], block_K[1:]  # (3, 3): rows p, p^2, 1
    position = _route(("p", "p^2", "1"))  # (5, 3): p, p^2, 1 out of x
    signal = _route(("s", "s^2", "1"))  # (5, 3): s, s^2, 1 out of x
    W_Q = np.hstack([position @ block_Q, signal @ block_Q])  # (5, 6)
    W_K = np.hstack([position @ block_K, signal @ block_K])  # (5, 6)
    W_Q = W_Q / np.array([divisors[term] for term in SCORE_TERMS])
    W_V = np.zeros((len(FEATURES), 1))
    W_V[FEATURES.index("s"), 0] = 1.0  # the head averages the signal
    return W_Q, W_K, W_V


def bilateral_head(signal, positions, temperature, signal_temperature):
    r"""Run the bilateral head on a signal, through :func:`~selfattention.core.attention`.

    .. math:: \text{output}_i = \sum_j a_{ij} s_j, \qquad
        a_{ij} = \operatorname{softmax}_j\!\Big(-\frac{(p_i - p_j)^2}{\tau_p}
        - \frac{(s_i - s_j)^2}{\tau_s}\Big)

    The scores depend on differences only, so the queries and keys are built
    from the positions and the signal with the middle of each range moved to
    0; the values are the signal as given. This keeps the terms of the
    expanded squares small far from the origin, as in
    :func:`~selfattention.head.gaussian_head`.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperature : float
        ``tau_p > 0``.
    signal_temperature : float
        ``tau_s > 0``; a very large value gives back the Gaussian head.

    Returns
    -------
    output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
    """
    X = content_features(signal, positions)  # (n, 5): the values
    memory.require_matrix(X.shape[0], X.shape[0], "positions")
    # The scores depend on p_i - p_j and s_i - s_j only: the queries and keys see both centred, which
    # keeps the expanded squares' terms small far from the origin (as in gaussian_head).
    centred = content_features(_centred_on_midrange(X[:, 0]), centre_positions(X[:, 2]))  # (n, 5)
    W_Q, W_K, W_V = bilateral_head_weights(temperature, signal_temperature)
    with np.errstate(over="ignore", invalid="ignore"):
        Q = finite_result(centred @ W_Q, f"{_ALL}: the queries overflow the double range")  # (n, 6)
    with naming(_ALL, "Q and K"):
        output, weights = attention(Q, centred @ W_K, X @ W_V, 1.0)
    return output[:, 0], weights  # (n,), (n, n)

