r"""The Gaussian head cut to a window: a query sees the keys within ``U``.

The Gaussian head's weights fall as :math:`\exp(-u^2 / \tau)` with the
distance :math:`u = p_i - p_j`; beyond a few :math:`\sqrt\tau` they are
below anything a double can add to a row's sum. Keeping only the keys
within :math:`|u| \le U` changes the output by about the weight left out,
:math:`\exp(-U^2 / \tau)` of the row's largest, and costs :math:`m_i`
scores for query ``i`` instead of ``n``: :math:`O(n m)` for windows of
about ``m`` keys. The positions must be sorted, so that every window is a
run of neighbouring tokens found by bisection.

.. math:: \text{output}_i = \frac{\sum_{|p_i - p_j| \le U}
    \exp(-(p_i - p_j)^2 / \tau)\, s_j}{\sum_{|p_i - p_l| \le U}
    \exp(-(p_i - p_l)^2 / \tau)}
"""

from __future__ import annotations

import numpy as np

from . import memory, work
from ._validation import (
    as_nonnegative_scalar,
    as_series,
    as_temperature,
    finite_result,
    power_of_two,
)

#: Entries of the (queries, m) blocks a window head holds at once.
_BLOCK = 2**20


def window_head(signal, positions, temperature, half_width):
    r"""The Gaussian head on the keys within ``half_width`` of each query.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
        Sorted, increasing (ties allowed).
    temperature : float
        ``tau > 0``.
    half_width : float
        ``U >= 0``, at most the span of the positions (``U`` equal to
        the span keeps every key: the exact head).

    Returns
    -------
    output : ndarray, shape (n,)
    keys : ndarray of int, shape (n,)
        ``m_i``, the keys in query ``i``'s window.
    """
    s, p, tau, U = _window_inputs(signal, positions, temperature, half_width)
    first = np.searchsorted(p, p - U, side="left")  # (n,)
    keys = np.searchsorted(p, p + U, side="right") - first  # (n,): m_i
    width = int(keys.max())
    work.require_work(p.size * width, "positions and half_width",
                      f"a window head on {p.size} tokens with windows "
                      f"of up to {width} keys")
    scale = power_of_two(float(np.max(np.abs(s))))
    output = np.empty(p.size)
    for rows in _blocks(p.size, width):
        j = first[rows, None] + np.arange(width)  # (block, m): key indices
        inside = np.arange(width) < keys[rows, None]  # (block, m)
        j = np.minimum(j, p.size - 1)
        weights = _window_weights(p[rows], p[j], tau) * inside
        sums = np.sum(weights * (s[j] / scale), axis=1)  # (block,)
        output[rows] = sums / weights.sum(axis=1)  # the query's own is 1
    return _rescaled(output, scale), keys


def _window_weights(p_query: np.ndarray, p_keys: np.ndarray,
                    tau: float) -> np.ndarray:
    """``exp(-(p_i - p_j)**2 / tau)``, (block, m); the query itself gets 1."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        u = p_query[:, None] - p_keys  # (block, m)
        weights = np.exp(-(u * (u / tau)))
    weights[np.isnan(weights)] = 0.0
    return weights


def _rescaled(output: np.ndarray, scale: float) -> np.ndarray:
    with np.errstate(over="ignore"):
        return finite_result(output * scale, "signal: the output leaves the "
                             "double range")


def _window_inputs(signal, positions, temperature, half_width):
    """The arguments checked: sorted positions, a window within their span."""
    s, p = as_series(signal=signal, positions=positions)
    tau = as_temperature(temperature, "temperature")
    U = as_nonnegative_scalar(half_width, "half_width")
    if (p[1:] < p[:-1]).any():
        raise ValueError("positions must be sorted, increasing")
    with np.errstate(over="ignore"):
        span = p[-1] - p[0]
    if U > span:
        raise ValueError(f"half_width {U:.3g} is wider than the signal: the "
                         f"positions span {span:.3g}, and a window of half-"
                         "width equal to the span already holds every key")
    return s, p, tau, U


def _blocks(n: int, width: int) -> list[slice]:
    rows = max(1, min(n, _BLOCK // width))
    memory.require(4 * 8 * rows * width, "half_width",
                   f"blocks of {rows} x {width} window weights")
    return [slice(start, start + rows) for start in range(0, n, rows)]
