r"""Checks of what the reader writes first: a softmax, heads and their weights.

Each ``check_...`` takes the reader's function, runs it on seeded random
inputs against the package's own, prints one line and returns it as a
:class:`~selfattention.checks.Verdict`. The wrong answers below are
the typical ones; each gets the hint that names its fault.
"""

from __future__ import annotations

import numpy as np

from .. import defaults
from ..core import softmax
from ..head import gaussian_head, gaussian_head_weights, positional_features
from ..metrics import effective_neighbours
from ..studies.onedim import onedim_head
from ._verdicts import TIME_LIMIT, Exercise, Refused, as_result, close, documented, judge

_ROWS = "columns sum to 1: normalise each row (the last axis)."


def _rows(scores: np.ndarray) -> np.ndarray:
    """(n, m): the softmax of each row of ``scores``, for the wrong answers."""
    return softmax(scores, axis=-1)


def _columns(scores: np.ndarray) -> np.ndarray:
    """(n, m): the softmax of each column instead: a typical wrong answer."""
    return softmax(scores, axis=0)


def _squared_distances(p: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
    """(n, n): ``(p_i - q_j)**2``, ``q = p`` when omitted."""
    q = p if q is None else q
    return (p[:, None] - q[None, :]) ** 2


def _sorted_positions(rng, n: int) -> np.ndarray:
    """(n,): distinct positions in [0, 1], sorted."""
    return np.sort(rng.uniform(0.0, 1.0, n))


def _array(call, args, shape, name, what="the answer", nonfinite=None):
    return as_result(call(*args), name, shape, what, nonfinite)


SOFTMAX = Exercise(
    name="stable_softmax",
    cases=lambda rng: [(rng.normal(size=(4, 6)),), (rng.normal(size=(5, 3)) * 300 + 1000,),
                       (rng.normal(size=(3, 7)) * 300 - 1000,)],
    answer=lambda call, x: _array(call, (x.copy(),), x.shape, "stable_softmax", "the weights",
                                  "an overflow: NaN or inf, as exp(score) is inf; subtract the row max."),
    reference=lambda x: softmax(x),
    faults=lambda x: [
        (_ROWS, _columns(x)),
        ("a missing normalisation: divide each row by its sum.", np.exp(x - x.max(axis=-1, keepdims=True))),
    ],
    verified="softmax of each row, even of scores near a thousand",
    fallback="the weights differ: exp(scores - row max) / row sum.",
)


@documented
def check_softmax(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(scores)``, the softmax of each row, (n, m) -> (n, m), on scores that overflow ``exp``."""
    return judge(SOFTMAX, function, rng, time_limit)


def _one_number_cases(rng):
    return [(rng.normal(size=n) * 0.8, *rng.uniform(0.5, 1.5, 3) * rng.choice([-1, 1], 3)) for n in (7, 10, 12)]


def _one_number_faults(x, w_q, w_k, w_v):
    return [
        ("a missing factor: the values are w_v x_j.", onedim_head(x, w_q, w_k, 1.0)[0]),
        ("a score: a pair's score is the product (w_q x_i)(w_k x_j).",
         _rows(-_squared_distances(x) * w_q * w_k) @ (w_v * x)),
        (_ROWS, _columns(w_q * w_k * np.outer(x, x)) @ (w_v * x)),
    ]


ONE_NUMBER_HEAD = Exercise(
    name="one_number_head",
    cases=_one_number_cases,
    answer=lambda call, x, *w: _array(call, (x.copy(), *w), x.shape, "one_number_head", "the output"),
    reference=lambda x, *w: onedim_head(x, *w)[0],
    faults=_one_number_faults,
    verified="the output of the head of 1 x 1 weights",
    fallback="the output differs: softmax_j(w_q w_k x_i x_j) times w_v x_j.",
)


@documented
def check_one_number_head(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(x, w_q, w_k, w_v)``, the output (n,) of the head on tokens of one number (``tau = 1``)."""
    return judge(ONE_NUMBER_HEAD, function, rng, time_limit)


def _projections(call):
    value = call()
    if value is Ellipsis or value is None:
        as_result(value, "projections", (), "")
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise Refused("Not right: projections must return two matrices, W_Q and W_K.")
    columns = np.shape(value[0])[-1] if np.ndim(value[0]) == 2 else 3  # d_k: the reader's choice
    W_Q = as_result(value[0], "projections", (4, columns), "W_Q")
    W_K = as_result(value[1], "projections", W_Q.shape, "W_K")
    return W_Q, W_K


def _centred_rows(scores: np.ndarray) -> np.ndarray:
    """Scores less each row's mean: the softmax ignores a number added to a whole row."""
    return scores - scores.mean(axis=1, keepdims=True)


def _scores(W_Q, W_K, X):
    return (X @ W_Q) @ (X @ W_K).T  # (n, n)


def _quadratic_answer(call, X):
    """The reader's scores on the tokens ``X``, refused if they change with the signal column."""
    W_Q, W_K = _projections(call)
    other = X.copy()
    other[:, 0] += 1.0  # (n, 4): the same positions, another signal
    if not close(_centred_rows(_scores(W_Q, W_K, other)), _centred_rows(_scores(W_Q, W_K, X))):
        raise Refused("Not right: a wrong row: the scores read the signal s; first rows must be 0.")
    return _scores(W_Q, W_K, X)


def _quadratic_faults(X):
    p = X[:, 1]
    return [
        ("a missing term: -p_j**2 needs its own dimension in the keys.", 2 * np.outer(p, p)),
        ("one term's scale: the cross term is 2 p_i p_j (sqrt(2) in each).",
         np.outer(p, p) - p[None, :] ** 2),
    ]


QUADRATIC = Exercise(
    name="projections",
    cases=lambda rng: [(positional_features(rng.normal(size=n), rng.uniform(-0.5, 0.5, n)),) for n in (6, 9)],
    answer=_quadratic_answer,
    reference=lambda X: _scores(*gaussian_head_weights()[:2], X),
    faults=_quadratic_faults,
    verified="q_i . k_j = -(p_i - p_j)**2 + a number per row",
    fallback="the scores differ: q_i . k_j = 2 p_i p_j - p_i**2 - p_j**2.",
    compare=_centred_rows,
)


@documented
def check_projections(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function()``, returning ``(W_Q, W_K)``, each (4, d_k), on tokens ``[s, p, p**2, 1]``.

    Right when every score :math:`q_i \cdot k_j` is :math:`-(p_i - p_j)^2`
    plus a number the same along each row (which the softmax ignores).
    """
    return judge(QUADRATIC, function, rng, time_limit)


def _weights_cases(rng):
    return [(_rows(rng.normal(size=(n, n)) * 2),) for n in (5, 8)]


NEIGHBOURS = Exercise(
    name="n_eff",
    cases=_weights_cases,
    answer=lambda call, A: _array(call, (A.copy(),), A.shape[:1], "n_eff", "the numbers"),
    reference=lambda A: effective_neighbours(A),
    faults=lambda A: [
        ("a missing square: sum the squares of the weights.", 1 / A.sum(axis=1)),
        ("a missing reciprocal: N_eff is one over the sum of squares.", (A**2).sum(axis=1)),
        ("a square root too many: N_eff = 1 / sum_j a_ij**2.", 1 / np.sqrt((A**2).sum(axis=1))),
        ("sums columns: row i's N_eff sums row i's squares (the last axis).", 1 / (A**2).sum(axis=0)),
    ],
    verified="1 / sum_j a_ij**2 for every row",
    fallback="the numbers differ: one over each row's sum of squared weights.",
)


@documented
def check_effective_neighbours(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(weights)``, the effective number of neighbours (n,) of each row of (n, n) weights."""
    return judge(NEIGHBOURS, function, rng, time_limit)


def _temperature_cases(rng):
    small, large = defaults.TEMPERATURE_RANGE
    return [(rng.normal(size=n), _sorted_positions(rng, n), tau)
            for n, tau in ((12, defaults.TEMPERATURE * 4), (9, small), (10, large), (11, 0.05))]


def _temperature_faults(s, p, tau):
    d2 = _squared_distances(p)
    return [
        ("a scale: divide the scores by tau, do not multiply.", _rows(-d2 * tau) @ s),
        ("a missing square: the score is -(p_i - p_j)**2 / tau.", _rows(-np.sqrt(d2) / tau) @ s),
        ("a factor 2: the score is -(p_i - p_j)**2 / tau, with no 2.",
         _rows(-d2 / (2 * tau)) @ s),
        (_ROWS, _columns(-d2 / tau) @ s),
    ]


TEMPERATURE = Exercise(
    name="smooth",
    cases=_temperature_cases,
    answer=lambda call, s, p, tau: _array(call, (s.copy(), p.copy(), tau), s.shape, "smooth", "the output"),
    reference=lambda s, p, tau: gaussian_head(s, p, tau)[0],
    faults=_temperature_faults,
    verified="the output, from the smallest to the largest tau",
    fallback="the output differs: softmax_j(-(p_i - p_j)**2 / tau) @ signal.",
)


@documented
def check_smooth(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(signal, positions, tau)``, the Gaussian head's output (n,), at extreme temperatures."""
    return judge(TEMPERATURE, function, rng, time_limit)
