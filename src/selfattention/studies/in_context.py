r"""Who learns best from ``N`` examples: regression prompts drawn at random, and each learner's error.

Two kinds of task, each drawn with an explicit ``rng``:

* linear (:func:`linear_tasks`): :math:`f(p) = p \cdot \varphi`, labels
  :math:`s_j = f(p_j) + \sigma z_j`, with
  :math:`\varphi` and the inputs :math:`p_{N+1}` standard normal in ``d`` dimensions;
* smooth (:func:`sine_tasks`): the book's sine with a random amplitude
  (uniform on [0.5, 1.5]) and phase (uniform on [0, 2 pi)), at positions uniform on :math:`[0, 1]`, each input
  written ``[p, 1]`` so that a linear learner may fit a line with an
  intercept (the constant cancels in a distance).

The query's true label is the clean one. The learners, each over a batch
of prompts: least squares (:func:`least_squares_batch`), one step of
gradient descent (:func:`one_step_batch`), the softmax head that is
Nadaraya-Watson regression (:func:`kernel_batch`), and a trained layer
(:func:`~selfattention.in_context_training.layer_predictions`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import memory
from .._validation import (
    as_array,
    as_count,
    as_counts,
    as_instance,
    as_nonnegative_scalar,
    as_rng,
    as_temperatures,
    finite_result,
    naming,
    same_length,
)
from ..core import softmax
from ..in_context_training import LayerFit, _as_batch, layer_predictions

#: The chapter's linear tasks: inputs in DIMENSION coordinates, labels with noise NOISE.
DIMENSION, NOISE = 5, 0.25
#: The numbers of examples of the comparison, and the prompts drawn for each (validation and test alike).
COUNTS, TASKS = (2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40, 60, 80), 1000
#: The step sizes searched for one step of gradient descent.
ETAS = np.linspace(0.02, 1.5, 75)
#: The sines' amplitudes are uniform on this interval.
AMPLITUDES = (0.5, 1.5)


class Prompts(NamedTuple):
    """``B`` prompts: inputs (B, N, d), labels (B, N), query (B, d), and the queries' clean labels, target (B,)."""

    inputs: np.ndarray
    labels: np.ndarray
    query: np.ndarray
    target: np.ndarray


def _draws(tasks, examples, dimension, names="tasks, examples and dimension"):
    B, N, d = as_count(tasks, "tasks"), as_count(examples, "examples"), as_count(dimension, "dimension")
    memory.require(8 * 3 * B * (N + 1) * (d + 1), names, f"{B} prompts of {N} examples")
    return B, N, d


def linear_tasks(tasks, examples, dimension, *, noise=0.0, rng=None) -> Prompts:
    r"""Prompts of random linear functions :math:`f(p) = p \cdot \varphi`, inputs in ``d`` dimensions.

    Parameters
    ----------
    tasks : int
        ``B``, the number of prompts, each of its own :math:`\varphi` (standard normal, ``(d,)``).
    examples : int
        ``N``, the examples of each prompt.
    dimension : int
        ``d``, the inputs' coordinates; the inputs and the query are standard normal.
    noise : float
        :math:`\sigma \ge 0`, the standard deviation of the normal noise added to the examples' labels.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    Prompts
        inputs (B, N, d), labels (B, N), query (B, d), and the queries' clean labels, target (B,).
    """
    B, N, d = _draws(tasks, examples, dimension)
    sigma, gen = as_nonnegative_scalar(noise, "noise"), as_rng(rng)
    phi = gen.standard_normal((B, d))  # (B, d): one function per prompt
    P = gen.standard_normal((B, N + 1, d))  # (B, N + 1, d): the examples, then the query
    clean = np.einsum("bnd,bd->bn", P, phi)  # (B, N + 1)
    return Prompts(P[:, :N], _noisy(clean[:, :N], sigma, gen), P[:, N], clean[:, N])


def sine_tasks(tasks, examples, *, noise=0.0, rng=None) -> Prompts:
    r"""Prompts of sines of random amplitude (uniform on [0.5, 1.5]) and phase (on [0, 2 pi)), inputs ``[p, 1]``.

    Parameters
    ----------
    tasks : int
        ``B``, the number of prompts, each of its own sine.
    examples : int
        ``N``, the examples of each prompt; the positions ``p`` are uniform on :math:`[0, 1]`.
    noise : float
        :math:`\sigma \ge 0`, the standard deviation of the normal noise added to the examples' labels.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    Prompts
        inputs (B, N, 2), labels (B, N), query (B, 2), and the queries' clean labels, target (B,).
    """
    B, N, _ = _draws(tasks, examples, 2, "tasks and examples")
    sigma, gen = as_nonnegative_scalar(noise, "noise"), as_rng(rng)
    amplitude, phase = gen.uniform(*AMPLITUDES, (B, 1)), gen.uniform(0.0, 2 * np.pi, (B, 1))
    p = gen.uniform(0.0, 1.0, (B, N + 1))  # (B, N + 1): the examples, then the query
    clean = amplitude * np.sin(2 * np.pi * p + phase)  # (B, N + 1)
    P = np.stack([p, np.ones_like(p)], axis=2)  # (B, N + 1, 2): [p, 1]
    return Prompts(P[:, :N], _noisy(clean[:, :N], sigma, gen), P[:, N], clean[:, N])


def _noisy(clean, sigma: float, gen) -> np.ndarray:
    """``clean`` plus standard normal noise of standard deviation ``sigma``, refused by name if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result(clean + sigma * gen.standard_normal(clean.shape), "noise: the labels overflow")


def _checked(prompts) -> Prompts:
    prompts = as_instance(prompts, "prompts", Prompts)
    with naming("prompts", "inputs", "labels", "query", "target"):
        return Prompts(*_as_batch(*prompts))


def one_step_batch(prompts, etas) -> np.ndarray:
    r"""One step of gradient descent from 0, :math:`\frac{\eta}{N} \sum_j s_j\, p_j \cdot p_{N+1}`, each :math:`\eta`.

    Parameters
    ----------
    prompts : Prompts
        ``B`` prompts.
    etas : array_like, shape (k,)
        The step sizes :math:`\eta > 0`.

    Returns
    -------
    predictions : ndarray, shape (len(etas), B)
    """
    P, y, p, _ = _checked(prompts)
    eta = as_temperatures(etas, "etas")  # (k,): positive
    with np.errstate(over="ignore", invalid="ignore"):
        unit = np.einsum("bn,bnd,bd->b", y, P, p) / y.shape[1]  # (B,): the step at eta = 1
        return finite_result(eta[:, None] * unit[None, :], "prompts and etas: a prediction overflows")


def least_squares_batch(prompts) -> np.ndarray:
    r"""Least squares' predictions :math:`p_{N+1} \cdot \hat\varphi` (B,); the shortest :math:`\hat\varphi` if N < d."""
    P, y, p, _ = _checked(prompts)
    with np.errstate(over="ignore", invalid="ignore"):
        phi = np.linalg.pinv(P) @ y[..., None]  # (B, d, 1)
        return finite_result(np.einsum("bd,bd->b", p, phi[..., 0]), "prompts: a prediction overflows")


def kernel_batch(prompts, temperatures) -> np.ndarray:
    r"""The softmax head's prediction, :math:`\sum_j \operatorname{softmax}_j(-\lVert p_{N+1} - p_j \rVert^2/\tau) s_j`.

    Parameters
    ----------
    prompts : Prompts
        ``B`` prompts.
    temperatures : array_like, shape (k,)
        The temperatures :math:`\tau > 0`.

    Returns
    -------
    predictions : ndarray, shape (len(temperatures), B)
    """
    P, y, p, _ = _checked(prompts)
    tau = as_temperatures(temperatures, "temperatures")
    memory.require_matrix(len(tau), y.size, "temperatures and prompts")
    with np.errstate(over="ignore", invalid="ignore"):
        distance = finite_result(np.sum((P - p[:, None, :]) ** 2, axis=2), "prompts: a squared distance overflows")
        gap = distance - distance.min(axis=1, keepdims=True)  # (B, N): the softmax ignores a shift; nearest 0
        weights = softmax(-gap[None] / tau[:, None, None], axis=2)  # (k, B, N); an overflow to -inf is weight 0
        return finite_result(np.einsum("kbn,bn->kb", weights, y), "prompts: a prediction overflows")


def squared_errors(predictions, prompts) -> np.ndarray:
    r"""Each prompt's squared error :math:`(\hat f(p_{N+1}) - f(p_{N+1}))^2`, for each row of ``predictions``.

    Parameters
    ----------
    predictions : array_like, shape (k, B)
        ``k`` learners' (or knobs') predictions, one column per prompt.
    prompts : Prompts
        The ``B`` prompts, whose ``target`` holds the queries' clean labels.

    Returns
    -------
    errors : ndarray, shape (k, B)
    """
    target = _checked(prompts).target
    guesses = as_array(predictions, "predictions", ndim=2)
    if guesses.shape[1] != target.size:
        raise ValueError(f"predictions must have one column per prompt ({target.size}), got {guesses.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_result((guesses - target) ** 2, "predictions and prompts: an error overflows")  # (k, B)


def errors(predictions, prompts) -> np.ndarray:
    """Mean squared error over the prompts of each row of ``predictions`` (k, B), against the clean labels.

    Parameters are those of :func:`squared_errors`.

    Returns
    -------
    errors : ndarray, shape (k,)
    """
    return np.mean(squared_errors(predictions, prompts), axis=1)  # (k,)


def error_curves(validation, test, etas, temperatures, fit=None) -> dict:
    r"""Each learner's test error for one number of examples, its knob chosen on the validation prompts.

    Parameters
    ----------
    validation, test : Prompts
        Drawn alike; the best :math:`\eta` and :math:`\tau` are those of least validation error.
    etas, temperatures : array_like, shape (k,)
        The candidates.
    fit : LayerFit, optional
        A trained layer, tested as it is.

    Returns
    -------
    dict
        ``"least squares"``, ``"one step"``, ``"softmax head"`` (and ``"trained layer"``): test errors;
        ``"eta"`` and ``"tau"``: the knobs chosen; ``"squared errors"``: each learner's error on each test
        prompt (B,), by name, whose means are the test errors.
    """
    with naming("validation", "prompts"):
        validation = _checked(validation)
    with naming("test", "prompts"):
        test = _checked(test)
    with naming("validation and etas", "prompts", "predictions"):  # a large eta overflows an error
        eta = as_temperatures(etas, "etas")[np.argmin(errors(one_step_batch(validation, etas), validation))]
    with naming("validation and temperatures", "prompts", "predictions"):
        tau = as_temperatures(temperatures, "temperatures")[
            np.argmin(errors(kernel_batch(validation, temperatures), validation))]
    with naming("test", "prompts", "predictions", "inputs", "W_QK and w_V"):
        guesses = {"least squares": least_squares_batch(test), "one step": one_step_batch(test, [eta])[0],
                   "softmax head": kernel_batch(test, [tau])[0]}
        if fit is not None:
            layer = as_instance(fit, "fit", LayerFit)
            guesses["trained layer"] = layer_predictions(layer.W_QK, layer.w_V, *test[:3])
        each = dict(zip(guesses, squared_errors(np.stack(list(guesses.values())), test), strict=True))  # (B,) each
    return {**{name: float(np.mean(e)) for name, e in each.items()}, "eta": eta, "tau": tau, "squared errors": each}


def compare_errors(first, second, *, top=1) -> dict:
    r"""Two learners' squared errors on the same prompts, beyond their means: the typical prompt and the worst.

    Parameters
    ----------
    first, second : array_like, shape (B,)
        Each prompt's squared error of two learners (the ``"squared errors"`` of :func:`error_curves`).
    top : int
        How many of ``first``'s largest errors to weigh against its sum.

    Returns
    -------
    dict
        ``"medians"``: the two learners' median errors; ``"first below"``: the share of the prompts on which
        ``first``'s error is below ``second``'s; ``"top share"``: the share of ``first``'s summed error that
        its ``top`` largest errors carry; ``"difference"``: the mean of ``first - second`` over the prompts,
        and ``"difference se"``, its standard error (the prompts' differences' standard deviation over
        ``sqrt(B)``).
    """
    a, b = as_array(first, "first", ndim=1), as_array(second, "second", ndim=1)
    same_length(a, b, "first", "second")
    k = as_count(top, "top", maximum=a.size)
    if a.size < 2:
        raise ValueError(f"first and second must hold at least 2 prompts (a standard error), got {a.size}")
    if np.any(a < 0) or np.any(b < 0) or not np.any(a > 0):
        raise ValueError("first and second must be squared errors (>= 0), first not all 0")
    with np.errstate(over="ignore", invalid="ignore"):
        total = finite_result(np.sum(a), "first: the sum of the errors overflows")
        share = float(np.sum(np.sort(a)[-k:]) / total)  # the k largest, over the sum
        medians = finite_result(np.array([np.median(a), np.median(b)]), "first and second: a median overflows")
        gap = finite_result(a - b, "first and second: a difference overflows")  # (B,)
        spread = finite_result(np.std(gap, ddof=1) / np.sqrt(a.size), "first and second: the spread overflows")
    return {"medians": (float(medians[0]), float(medians[1])), "first below": float(np.mean(a < b)),
            "top share": share, "difference": float(np.mean(gap)), "difference se": float(spread)}


def wins_from(counts, first, second) -> int:
    r"""The number of examples from which ``first``'s error stays below ``second``'s, at every larger count.

    Parameters
    ----------
    counts : sequence of int, shape (m,)
        The numbers of examples, increasing.
    first, second : array_like, shape (m,)
        Two learners' errors at each count.

    Returns
    -------
    int
        The smallest count :math:`N` with ``first < second`` at :math:`N` and at every count after it.
    """
    N = np.array(as_counts(counts, "counts"))  # (m,)
    a, b = as_array(first, "first", ndim=1), as_array(second, "second", ndim=1)
    if np.any(np.diff(N) <= 0) or a.shape != N.shape or b.shape != N.shape:
        raise ValueError(f"counts must increase, and first and second hold one error each: {N.size}, "
                         f"{a.size}, {b.size}")
    behind = np.flatnonzero(a >= b)  # where first is not ahead
    if behind.size and behind[-1] == N.size - 1:
        raise ValueError("first must be below second at the last of the counts")
    return int(N[behind[-1] + 1]) if behind.size else int(N[0])
