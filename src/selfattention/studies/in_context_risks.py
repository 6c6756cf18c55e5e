r"""What the learners of :mod:`~selfattention.studies.in_context` are expected to score, in closed form.

On linear tasks (standard normal :math:`\varphi`, inputs and query, noise :math:`\sigma`): one step of
gradient descent at any :math:`\eta` (:func:`one_step_risk`) and at its best (:func:`best_one_step`), and
least squares at any number of examples (:func:`least_squares_risk`). On the sines: the error of predicting
:math:`0` (:func:`sine_zero_error`) and that of each sine's best line (:func:`sine_line_error`), the limit of
least squares. Every expectation is over the tasks, the examples and the query.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_count, as_nonnegative_scalar, finite_result
from .in_context import AMPLITUDES


def sine_zero_error() -> float:
    r"""The expected error of predicting :math:`0` on the sines, :math:`\mathbb E f(p)^2`.

    A sine of the tasks has the mean square ``amplitude**2 / 2`` over its inputs, uniform on a period
    :math:`[0, 1]`, whatever its phase; the amplitude is uniform on
    :data:`~selfattention.studies.in_context.AMPLITUDES` ``= (lo, hi)``, whose mean square is
    ``(lo**2 + lo * hi + hi**2) / 3``.
    """
    lo, hi = AMPLITUDES
    return (lo * lo + lo * hi + hi * hi) / 6


def sine_line_error() -> float:
    r"""The expected error of each sine's best line through it, on inputs uniform on :math:`[0, 1]`.

    Least squares on the inputs ``[p, 1]`` tends to that line as ``N`` grows. On :math:`[0, 1]`, the sine
    ``sin(2 pi p + phase)`` has mean :math:`0` and covariance ``-cos(phase) / (2 pi)`` with :math:`p`, whose
    variance is ``1/12``: the best line removes ``12 cos(phase)**2 / (2 pi)**2 = 3 cos(phase)**2 / pi**2`` of its
    mean square ``1/2``. Over a uniform phase ``cos(phase)**2`` averages ``1/2``, so the line leaves

    .. math:: \mathbb E f(p)^2 \Big(1 - \frac{3}{\pi^2}\Big),

    with :math:`\mathbb E f(p)^2` of :func:`sine_zero_error`.
    """
    return sine_zero_error() * (1 - 3 / np.pi**2)


def one_step_risk(eta, examples, dimension, noise) -> float:
    r"""The expected error of one step on linear tasks (standard normal :math:`\varphi` and inputs).

    .. math:: \mathbb E\big[(\hat f(p_{N+1}) - f(p_{N+1}))^2\big]
        = \eta^2 d\, \frac{N + d + 1 + \sigma^2}{N} - 2 \eta d + d

    Parameters
    ----------
    eta : float
        The step size :math:`\eta \ge 0`.
    examples : int
        ``N``, the examples of each prompt.
    dimension : int
        ``d``, the inputs' coordinates.
    noise : float
        :math:`\sigma \ge 0`, the standard deviation of the labels' noise.
    """
    step = np.float64(as_nonnegative_scalar(eta, "eta"))  # a numpy float: its overflow is inf, not an exception
    N, d, sigma = _sizes(examples, dimension, noise)
    with np.errstate(over="ignore", invalid="ignore"):
        risk = step**2 * d * ((N + d + 1) / N + sigma**2 / N) - 2 * step * d + d
    return float(finite_result(risk, "eta, examples, dimension and noise: the error overflows"))


def best_one_step(examples, dimension, noise):
    r"""The step that minimises :func:`one_step_risk`, :math:`\eta^* = N / (N + d + 1 + \sigma^2)`, and its error.

    Parameters
    ----------
    examples : int
        ``N``, the examples of each prompt.
    dimension : int
        ``d``, the inputs' coordinates.
    noise : float
        :math:`\sigma \ge 0`, the standard deviation of the labels' noise.

    Returns
    -------
    eta : float
        :math:`\eta^*`.
    risk : float
        Its expected error, :math:`d (d + 1 + \sigma^2) / (N + d + 1 + \sigma^2)`.
    """
    N, d, sigma = _sizes(examples, dimension, noise)
    with np.errstate(over="ignore", invalid="ignore"):
        total = finite_result(N + d + 1 + sigma**2, "noise: N + d + 1 + sigma**2 overflows")
        risk = finite_result(d * (d + 1 + sigma**2) / total, "dimension and noise: the error overflows")
        return float(N / total), float(risk)


def _sizes(examples, dimension, noise):
    sigma = np.float64(as_nonnegative_scalar(noise, "noise"))  # a numpy float: sigma**2 overflows to inf
    return as_count(examples, "examples"), as_count(dimension, "dimension"), sigma


def least_squares_risk(examples, dimension, noise) -> float:
    r"""The expected error of least squares (the shortest :math:`\hat\varphi`) on linear tasks, at any ``N``.

    With standard normal :math:`\varphi`, inputs and query, the error at the query is
    :math:`\mathbb E \lVert \hat\varphi - \varphi \rVert^2`. Write ``P`` for the inputs (N, d). For
    ``N >= d``, :math:`\hat\varphi` is :math:`\varphi` plus the labels' noise sent through the inputs, of mean
    square :math:`\sigma^2` times the mean of ``trace(inv(P.T @ P))``; for ``N < d``, it recovers
    :math:`\varphi` along the ``N`` directions the inputs span (an error of ``d - N`` from the others, left at
    :math:`0`) and adds the noise, :math:`\sigma^2` times the mean of ``trace(inv(P @ P.T))``. The inverse of a
    Wishart matrix of size ``k`` with ``m`` degrees of freedom has the mean ``I / (m - k - 1)``, finite only for
    ``m >= k + 2``:

    .. math:: \mathbb E\big[(\hat f(p_{N+1}) - f(p_{N+1}))^2\big] = \begin{cases}
        (d - N) + \sigma^2 N / (d - N - 1) & N \le d - 2, \\
        \infty & d - 1 \le N \le d + 1, \\
        \sigma^2 d / (N - d - 1) & N \ge d + 2,
        \end{cases}

    the middle case for any :math:`\sigma > 0` (for :math:`\sigma = 0` the error is ``d - N`` below ``d`` and
    :math:`0` from ``d`` on).

    Parameters
    ----------
    examples : int
        ``N``, the examples of each prompt.
    dimension : int
        ``d``, the inputs' coordinates.
    noise : float
        :math:`\sigma \ge 0`, the standard deviation of the labels' noise.

    Raises
    ------
    ValueError
        Naming ``examples``, for :math:`d - 1 \le N \le d + 1` with noise: the expected error is infinite.
    """
    N, d, sigma = _sizes(examples, dimension, noise)
    if abs(N - d) <= 1 and sigma > 0:
        raise ValueError(f"examples must differ from dimension by at least 2 for a finite error with noise "
                         f"(least squares' expected error is infinite for {d - 1} <= N <= {d + 1}), got {N}")
    seen = min(N, d)  # (d - seen) directions the inputs do not span, each an error of 1
    with np.errstate(over="ignore", invalid="ignore"):
        noise_part = sigma**2 * seen / (abs(d - N) - 1) if sigma > 0 else 0.0  # d - N - 1 or N - d - 1
        return float(finite_result((d - seen) + noise_part, "noise: the error overflows"))
