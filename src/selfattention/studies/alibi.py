r"""ALiBi: a Laplace kernel from a bias, set next to the Gaussian head.

The ALiBi head's weights are ``exp(-zeta |p_i - p_j|)``, normalised by rows.
The matrix of ``|p_i - p_j|`` of distinct positions has full rank, so no
query-key product of fewer than ``N - 1`` dimensions gives these weights
(:func:`score_ranks` measures the ranks); each head's temperature, or slope,
is chosen by leave-one-out (:func:`loo_comparison`, with
:func:`~selfattention.kernel.choose_temperature`), and at the same width of
its rows the Laplace kernel averages fewer neighbours
(:func:`neighbours_at_equal_width`).
"""

from __future__ import annotations

import numpy as np

from .. import memory
from .._validation import as_count, as_counts, as_positive_scalar, as_series, finite_result, naming
from ..head import centre_positions, gaussian_head
from ..kernel import (
    candidate_temperatures,
    choose_temperature,
    leave_one_out_scores,
    pick_temperature,
    temperature_to_bandwidth,
)
from ..metrics import effective_neighbours, rmse
from ..positional import alibi_head
from ..signals import noisy_sine


def score_ranks(positions, frequency) -> dict:
    r"""The numerical ranks of three heads' score matrices on ``positions``.

    * ``"gaussian"``: :math:`-(p_i - p_j)^2`, rank at most 3 (``p_i^2``,
      ``p_i p_j``, ``p_j^2``);
    * ``"cosine"``: one frequency, :math:`\cos(\omega (p_i - p_j))`, rank at
      most 2 (its cosine and sine parts);
    * ``"laplace"``: :math:`-|p_i - p_j|`, full rank for distinct positions.

    A positive factor (``1 / tau``, ``xi``, ``zeta``) changes no rank, so none
    is applied. The rank is numpy's: the singular values above ``N eps``
    times the largest.

    Parameters
    ----------
    positions : array_like, shape (n,)
    frequency : float
        ``omega > 0``.

    Returns
    -------
    dict of str -> int, and ``"laplace_smallest"``: the Laplace matrix's
    smallest singular value relative to its largest.
    """
    p = centre_positions(positions)  # (n,): the spread checked, so that the squares stay finite
    omega = as_positive_scalar(frequency, "frequency")
    memory.require_matrix(p.size, p.size, "positions", count=3)
    difference = p[:, None] - p[None, :]  # (n, n)
    with np.errstate(over="ignore", invalid="ignore"):
        cosine = finite_result(np.cos(omega * difference), "frequency and positions: an angle overflows")
    laplace = -np.abs(difference)
    singular = np.linalg.svd(laplace, compute_uv=False)  # (n,), largest first
    return {
        "gaussian": int(np.linalg.matrix_rank(-(difference**2))),
        "cosine": int(np.linalg.matrix_rank(cosine)),
        "laplace": int(np.linalg.matrix_rank(laplace)),
        "laplace_smallest": float(singular[-1] / singular[0]) if singular[0] > 0 else 0.0,
    }


def loo_comparison(signal, clean, positions, candidates=None) -> dict:
    """The Gaussian and the ALiBi head, each at the setting leave-one-out chooses.

    Parameters
    ----------
    signal, clean, positions : array_like, shape (n,)
    candidates : array_like, shape (m,), optional
        The temperatures searched for both (the ALiBi head's slope is
        ``1 / tau``); :data:`~selfattention.kernel.DEFAULT_CANDIDATES` when omitted.

    Returns
    -------
    dict
        ``"temperature"`` and ``"slope"``: the choices; ``"gaussian"`` and
        ``"alibi"``: the two outputs, shape (n,); ``"gaussian_rmse"`` and
        ``"alibi_rmse"``: their errors against ``clean``.
    """
    s, f, p = as_series(signal=signal, clean=clean, positions=positions)
    tau, _ = choose_temperature(s, p, candidates)
    laplace_tau, _ = choose_temperature(s, p, candidates, kernel="laplace")
    slope = 1.0 / laplace_tau
    with naming("candidates", "temperature", "slope"):  # both chosen from the candidates
        gaussian, _ = gaussian_head(s, p, tau)
        alibi, _ = alibi_head(s, p, slope)
    with naming("signal and clean", "estimate and truth"):  # the outputs, from signal, against clean
        errors = {"gaussian_rmse": rmse(gaussian, f), "alibi_rmse": rmse(alibi, f)}
    return {"temperature": tau, "slope": slope, "gaussian": gaussian, "alibi": alibi, **errors}


def other_draws(n, sigma, seeds, candidates=None):
    """:func:`loo_comparison`'s two errors on the book's sine with the noise of each seed.

    Every draw has the same positions, so each kernel's leave-one-out scores
    the draws together (:func:`~selfattention.kernel.leave_one_out_scores`
    takes a stack of signals): the candidates' weights are computed once,
    not once per draw.

    Parameters
    ----------
    n : int
        At least 2.
    sigma : float
    seeds : sequence of int
    candidates : array_like, shape (m,), optional

    Returns
    -------
    gaussian, alibi : ndarray, shape (r,)
        The RMSE of each head at its leave-one-out choice, one per seed.
    """
    n, seeds = as_count(n, "n", minimum=2), as_counts(seeds, "seeds", minimum=0)
    taus = candidate_temperatures(candidates)
    draws = [noisy_sine(n, sigma, rng=seed) for seed in seeds]
    (p, f, _), S = draws[0], np.array([s for _, _, s in draws])  # (n,), (n,), (r, n): one grid, one sine
    errors = []
    with naming("sigma", "signal", "clean"):  # the noisy sines' values are sigma's doing
        gaussian_taus = pick_temperature(leave_one_out_scores(S, p, taus), taus)  # (r,)
        laplace_taus = pick_temperature(leave_one_out_scores(S, p, taus, kernel="laplace"), taus)  # (r,)
        with naming("candidates", "temperature", "slope"):  # both chosen from the candidates
            for s, tau, laplace_tau in zip(S, gaussian_taus, laplace_taus, strict=True):
                gaussian, _ = gaussian_head(s, p, tau)
                alibi, _ = alibi_head(s, p, 1.0 / laplace_tau)
                errors.append((rmse(gaussian, f), rmse(alibi, f)))
    gaussian, alibi = np.array(errors).T  # (r,) each
    return gaussian, alibi


def neighbours_at_equal_width(positions, temperature, row=None) -> dict:
    r"""The effective number of neighbours of the Gaussian head and of a Laplace head as wide.

    The Gaussian row has standard deviation :math:`h = \sqrt{\tau / 2}`; the
    ALiBi row of slope :math:`\zeta = \sqrt 2 / h` has the same, and therefore the
    same leading blur :math:`\tfrac12 h^2 f''`. Far from the ends, on a
    dense grid, the two average :math:`2 \sqrt{\pi}\, h` and
    :math:`2 \sqrt 2\, h` samples per unit of position, a ratio of
    :math:`\sqrt{2 / \pi}`.

    Parameters
    ----------
    positions : array_like, shape (n,)
    temperature : float
        The Gaussian head's ``tau``.
    row : int, optional
        The query; the middle one (``n // 2``) when omitted.

    Returns
    -------
    dict
        ``"slope"``, and ``"gaussian"``, ``"laplace"``: ``N_eff`` of the row.
    """
    (p,) = as_series(positions=positions)
    h = temperature_to_bandwidth(temperature)
    i = p.size // 2 if row is None else as_count(row, "row", minimum=0)
    if i >= p.size:
        raise ValueError(f"row must be below the number of positions {p.size}, got {row!r}")
    zeros = np.zeros_like(p)
    _, gaussian = gaussian_head(zeros, p, temperature)
    slope = np.sqrt(2) / h
    _, laplace = alibi_head(zeros, p, slope)
    return {"slope": float(slope), "gaussian": float(effective_neighbours(gaussian)[i]),
            "laplace": float(effective_neighbours(laplace)[i])}

