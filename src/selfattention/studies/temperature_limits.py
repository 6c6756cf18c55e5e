r"""The temperature's two limits: the identity and the uniform average.

The head divides the scores ``-(p_i - p_j)**2`` by ``tau``. As ``tau -> 0``
every off-diagonal score divided by ``tau`` runs to ``-inf`` and the
attention matrix tends to the identity (no smoothing); as ``tau -> inf``
every scaled score tends to 0 and the matrix tends to the uniform ``1/n``
(every output is the signal's mean):

.. math:: \lim_{\tau \to 0} A = I, \qquad \lim_{\tau \to \infty} A = \tfrac{1}{n} \mathbf{1}\mathbf{1}^\top .

The functions here run the head across temperatures and measure how close
it comes to each limit.
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_array, as_temperatures, finite_result, naming, power_of_two
from ..head import gaussian_head
from ..metrics import distance_from_identity, distance_from_uniform


def head_at_temperatures(signal, positions, temperatures):
    """The head's output and weights at each of several temperatures.

    Parameters
    ----------
    signal : array_like, shape (n,)
    positions : array_like, shape (n,)
    temperatures : array_like, shape (m,)
        Temperatures ``tau > 0``.

    Returns
    -------
    outputs : ndarray, shape (m, n)
    weights : ndarray, shape (m, n, n)
    """
    taus = as_temperatures(temperatures, "temperatures")
    n = as_array(positions, "positions", ndim=1).size
    memory.require((8 * taus.size + memory.BYTES_PER_ENTRY) * n * n, "positions and temperatures",
                   f"{taus.size} matrices of {n} x {n} attention weights")
    with naming("temperatures", "temperature"):
        runs = [gaussian_head(signal, positions, tau) for tau in taus]
    outputs, weights = (np.array(column) for column in zip(*runs, strict=True))
    return outputs, weights  # (m, n), (m, n, n)


def temperature_sweep(signal, positions, temperatures):
    """How the head's weights and output change with the temperature.

    Parameters
    ----------
    signal : array_like, shape (n,)
        The head's input (the noisy observations).
    positions : array_like, shape (n,)
    temperatures : array_like, shape (m,)
        Temperatures ``tau > 0`` to try.

    Returns
    -------
    dict of ndarray, each shape (m,)
        ``identity``: :func:`~selfattention.metrics.distance_from_identity` of the weights;
        ``uniform``: :func:`~selfattention.metrics.distance_from_uniform` of the weights;
        ``input_gap``: ``max |output - signal|``, 0 when nothing is smoothed;
        ``mean_gap``: ``max |output - mean(signal)|``, 0 when the output is flat.
    """
    s = as_array(signal, "signal", ndim=1)
    scale = power_of_two(np.abs(s).max(initial=0.0))  # |signal| / scale < 2, exactly
    mean = np.mean(s / scale) * scale  # so that the sum cannot overflow
    rows = []
    for tau in as_temperatures(temperatures, "temperatures"):  # one (n, n) matrix at a time
        with naming("temperatures", "temperature"):
            output, weights = gaussian_head(s, positions, tau)  # (n,), (n, n)
        with np.errstate(over="ignore"):
            gaps = np.max(np.abs(output - s)), np.max(np.abs(output - mean))
        rows.append((distance_from_identity(weights), distance_from_uniform(weights),
                     *finite_result(gaps, "signal: its gaps to the output overflow the double range")))
    columns = np.array(rows).T  # (4, m)
    return dict(zip(("identity", "uniform", "input_gap", "mean_gap"), columns, strict=True))
