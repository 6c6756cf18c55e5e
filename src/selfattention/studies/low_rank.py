r"""The numerical rank of the head's weights as the temperature changes.

:func:`rank_sweep` computes the singular values of the exact head's
weights (:func:`~selfattention.low_rank.singular_values`) at each
temperature, their numerical rank, and the log-log slope of the rank
against the temperature: near :math:`-1/2` if the rank grows as
:math:`1/\sqrt\tau`.
"""

from __future__ import annotations

import numpy as np

from .. import low_rank
from .._validation import as_temperatures, naming
from ..cost import loglog_slope


def rank_sweep(positions, temperatures, tolerance=low_rank.TOLERANCE) -> dict:
    r"""Singular values and numerical ranks of the head's weights at each temperature.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperatures : array_like, shape (k,)
        Increasing, at least two.
    tolerance : float
        Of :func:`~selfattention.low_rank.numerical_rank`.

    Returns
    -------
    dict
        ``"values"`` (k, n), each row the singular values at one
        temperature; ``"ranks"`` (k,); ``"slope"``, the log-log slope of
        the ranks against the temperatures.
    """
    taus = as_temperatures(temperatures, "temperatures")
    if taus.size < 2 or (np.diff(taus) <= 0).any():
        raise ValueError("temperatures must be at least two, increasing")
    with naming("temperatures", "temperature"):
        values = np.array([low_rank.singular_values(positions, t) for t in taus])
    ranks = np.array([low_rank.numerical_rank(v, tolerance) for v in values])  # each >= 1
    return {"values": values, "ranks": ranks, "slope": loglog_slope(taus, ranks)}
