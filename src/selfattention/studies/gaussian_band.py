r"""The engineered head's attention matrix is a Gaussian band.

Dividing the scores ``-(p_i - p_j)**2`` by ``tau`` and taking the softmax of
row ``i`` gives

.. math:: a_{ij} = \frac{\exp(-(p_i - p_j)^2 / \tau)}{\sum_l \exp(-(p_i - p_l)^2 / \tau)},

a Gaussian in ``p_j`` centred on ``p_i`` with standard deviation
``h = sqrt(tau / 2)``, normalised over the positions that exist. The weights
depend on the positions only, never on the signal values. The functions
here compute the band and set its rows next to the Gaussian the formula
predicts.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_array, as_count, as_temperature, as_temperatures, naming
from ..head import gaussian_head
from ..kernel import temperature_to_bandwidth


def band_weights(positions, temperature) -> np.ndarray:
    """The engineered head's attention matrix for tokens at ``positions``.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
        ``tau > 0``.

    Returns
    -------
    weights : ndarray, shape (n, n)
        Row ``i`` holds the weights of query ``i``; they do not depend on the
        signal, so the head is run on zeros.
    """
    p = as_array(positions, "positions", ndim=1)
    _, weights = gaussian_head(np.zeros_like(p), p, temperature)  # (n, n)
    return weights


def attention_row(positions, temperature, row):
    r"""One row of the head's weights next to the Gaussian the trick predicts.

    .. math:: a_{ij} \propto \exp\!\left(-\frac{(p_i - p_j)^2}{\tau}\right),
        \text{ a Gaussian in } p_j \text{ with standard deviation } \sqrt{\tau / 2}

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
    row : int
        The query ``i``.

    Returns
    -------
    measured : ndarray, shape (n,)
        Row ``i`` of the head's attention matrix.
    predicted : ndarray, shape (n,)
        The normalised Gaussian, computed from the formula alone.
    """
    p = as_array(positions, "positions", ndim=1)
    tau = as_temperature(temperature, "temperature")
    i = as_count(row, "row", minimum=0)
    if i >= p.size:
        raise ValueError(f"row must be below the number of positions {p.size}, got {row!r}")
    weights = band_weights(p, tau)  # (n, n)
    with np.errstate(over="ignore", under="ignore"):  # far keys: exp(-inf) = 0
        g = np.exp(-((p - p[i]) ** 2) / tau)  # (n,)
    return weights[i], g / g.sum()


def row_profiles(positions, temperatures, row):
    """:func:`attention_row` at several temperatures, with each row's width.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperatures : array_like, shape (m,)
    row : int
        The query ``i``.

    Returns
    -------
    measured, predicted : ndarray, shape (m, n)
        One :func:`attention_row` per temperature.
    bandwidths : ndarray, shape (m,)
        ``sqrt(tau / 2)``, the standard deviation of each predicted Gaussian.
    """
    taus = as_temperatures(temperatures, "temperatures")
    with naming("temperatures", "temperature"):
        rows = [attention_row(positions, tau, row) for tau in taus]
    measured, predicted = (np.array(column) for column in zip(*rows, strict=True))  # (m, n) each
    return measured, predicted, np.array([temperature_to_bandwidth(tau) for tau in taus])
