"""Tolerances for floating-point results that two computations reach in different orders.

Two computations of one exact value round differently when they order their
operations differently: OpenBLAS picks its kernels, blocks and threads for the
CPU; numpy picks SIMD loops (AVX512, AVX2 or SSE) for the CPU; numpy sums
pairwise, Python's ``sum`` one term at a time; a browser's JavaScript does what
its engine does. How far apart the two results can be is a property of the
computation, not of the CPU, so each tolerance is a bound derived from it:

- one operation (``+ - * /``, ``sqrt``) rounds its result by at most ``EPS / 2``
  of its size; ``exp``, ``log``, ``sin`` and ``cos`` are accurate to 1 ulp
  (``EPS`` of the result) in numpy's SIMD loops (numpy's own accuracy tests)
  and in the fdlibm code of JavaScript engines: two roundings each;
- a result in the subnormal range (below :data:`TINY`) is off by at most half
  the smallest subnormal, :data:`SUBNORMAL`, instead (Higham's model of
  arithmetic with underflow);
- so a computation that rounds ``k`` times on quantities of size at most ``S``
  is off by at most ``k (EPS / 2 * S + SUBNORMAL / 2)`` (to first order: ``k * EPS`` is
  far below 1), and two of them differ by at most ``k (EPS * S + SUBNORMAL)``:
  :func:`rounding`.

``S`` is the scale of the quantities computed (the largest of them, or the sum
of the sizes of the terms summed), not the entry compared: an entry that is a
small difference of large terms, or zero but for rounding, carries the rounding
of the large terms. So the tolerances are absolute on the scale of the matrix
(``rtol=0``), with one exception: softmax weights, whose errors are relative to
each weight (:func:`softmax_rtol`).
"""

from __future__ import annotations

import numpy as np

#: The relative spacing of doubles at 1 (2**-52): one rounding is off by at most EPS / 2.
EPS = float(np.finfo(float).eps)
#: The smallest normal double: a result below it (subnormal) keeps only an absolute accuracy of about 5e-324.
TINY = float(np.finfo(float).tiny)
#: The smallest subnormal double, 5e-324: a subnormal result is off by at most half of it.
SUBNORMAL = float(np.finfo(float).smallest_subnormal)


def size(x) -> float:
    """The largest absolute value of ``x`` (a number or an array): the scale every function here takes."""
    return float(np.abs(np.asarray(x, dtype=float)).max(initial=0.0))


def rounding(k, scale=1.0) -> float:
    """How far two computations of one value can differ when each rounds ``k`` times on sizes up to ``size(scale)``.

    ``k * (EPS * size(scale) + SUBNORMAL)``. A sum of ``n`` terms, in any order, rounds
    ``n - 1`` additions (and ``n`` products, for a dot product computed
    without fused multiply-adds), each at most the sum of the terms' sizes:
    count ``2 n`` on that sum for a dot product, ``n`` for a plain sum.
    """
    return k * (EPS * size(scale) + SUBNORMAL)


def softmax_rtol(n, score_gap=0.0) -> float:
    """Relative tolerance between two softmax computations of weights over ``n`` scores.

    ``score_gap`` bounds how far apart the two computations' scaled scores
    ``(s_j - max_l s_l) / tau`` can be, roundings of the subtraction and the
    division included. Moving every scaled score by at most ``g`` multiplies
    each weight by a factor between ``exp(-2 g)`` and ``exp(2 g)``: a relative
    change of at most ``expm1(2 g)``, however small the weight. What the
    softmax itself rounds is relative too: the exponential (2 roundings), the
    sum of ``n`` positive terms (``n - 1``) and the division (1):
    ``rounding(n + 2)``.

    A weight below :data:`TINY` has lost its relative accuracy: compare with
    ``atol=TINY`` beside this ``rtol``.
    """
    return float(np.expm1(2 * score_gap)) + rounding(n + 2)


def average_atol(n, scale, score_gap=0.0) -> float:
    """Absolute tolerance between two computations of softmax-weighted averages of ``n`` values ``scale``.

    Each output ``sum_j w_j v_j`` moves by at most ``sum_j |dw_j| |v_j| <=
    size(scale) * softmax_rtol`` through its weights (which sum to 1; a weight
    that underflows moves by up to ``SUBNORMAL`` besides), and its own sum
    rounds ``2 n`` times (products and additions) on at most ``size(scale)``.
    """
    return size(scale) * (softmax_rtol(n, score_gap) + n * SUBNORMAL) + rounding(2 * n, scale)


def square_scores_error(largest, temperature=1.0, *, expanded=True) -> float:
    """How far one computation of the scaled scores ``-(p_i + delta - p_j)**2 / tau`` can be from their exact value.

    ``largest`` bounds every ``|p_i + delta|`` and ``|p_j|`` (``P``; for the
    head, which centres its positions, half their spread plus ``|delta|``).
    The head's expanded square ``2 (p_i + delta) p_j - (p_i + delta)**2 -
    p_j**2`` adds three terms as large as ``2 P**2``, ``P**2`` and ``P**2``: its
    projections (``sqrt(2)``, the offset's terms) and features (``p**2``), the
    three products and two additions of the dot product round within ``12 EPS
    P**2``; centring the positions shifts each difference ``p_i - p_j`` by two
    roundings on ``P``, its square by ``4 EPS P**2``; subtracting the row's
    maximum and dividing by ``tau`` round twice more on ``4 P**2 / tau``:
    ``20 EPS P**2 / tau`` (the package's own bound,
    :data:`selfattention.head.ROUNDING_TOLERANCE`'s ``eta``, takes 16 without
    the centring). Squaring ``p_i + delta - p_j`` directly (``expanded=False``)
    rounds three times on ``P``, ``2 P`` and ``4 P**2``, then twice on ``4 P**2
    / tau``: ``12 EPS P**2 / tau``. Each rounding may underflow besides: ``SUBNORMAL``
    before the division by ``tau`` and after it.
    """
    count = 20 if expanded else 12
    return count * (EPS * float(largest) ** 2 + SUBNORMAL) / temperature + count * SUBNORMAL


def half_spread(positions, offset=0.0) -> float:
    """The ``P`` of the head, which centres its positions: half their spread, plus ``|delta|``."""
    return (np.max(positions) - np.min(positions)) / 2 + abs(offset)


def square_gap(largest, temperature=1.0) -> float:
    """How far an expanded square's scaled scores can be from the square written out: both their roundings."""
    return square_scores_error(largest, temperature) + square_scores_error(largest, temperature, expanded=False)


def mse_atol(n, residual_scale, prediction_atol=0.0) -> float:
    """Absolute tolerance between two mean squared errors of ``n`` residuals ``y_i - prediction_i``.

    ``size(residual_scale)`` bounds the residuals ``|r|``, ``prediction_atol`` how far
    apart the two computations' predictions can be (``d``): each squared
    residual moves by at most ``2 |r| d + d**2``; the residual, its square, the
    sum of ``n`` squares and the division round ``n + 2`` times on at most
    ``r**2``.
    """
    r, d = size(residual_scale), float(prediction_atol)
    return 2 * r * d + d**2 + rounding(n + 2, r**2)


def assert_close(actual, desired, atol) -> None:
    """``|actual - desired| <= atol`` entry by entry, ``atol`` one number or one per entry (it broadcasts).

    ``numpy.testing.assert_allclose`` takes one absolute tolerance only (an
    array passes but breaks its failure message).
    """
    actual, desired, tolerance = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (actual, desired, atol)))
    gap = np.abs(actual - desired)
    bad = ~(gap <= tolerance)  # NaN on either side is bad too
    if bad.any():
        worst = np.argmax(np.where(bad, gap / np.maximum(tolerance, TINY), -np.inf))
        where = tuple(int(i) for i in np.unravel_index(worst, actual.shape))
        raise AssertionError(f"{bad.sum()} of {bad.size} entries differ by more than their tolerance; the worst, "
                             f"at {where}: {float(actual.flat[worst])!r} against {float(desired.flat[worst])!r} "
                             f"(tolerance {float(tolerance.flat[worst]):.3g})")

