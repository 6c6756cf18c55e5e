r"""Checks of what the reader writes about positions and sequences.

An offset head, a rotation (RoPE), a causal mask, the previous-token head,
one step of a key-value cache and a map of random features. Each
``check_...`` takes the reader's function, runs it on seeded random inputs
against the package's own, prints one line and returns it as a
:class:`~selfattention.checks.Verdict`.
"""

from __future__ import annotations

import numpy as np

from .. import defaults
from ..core import causal_mask, softmax
from ..decoding import decode_cached
from ..head import gaussian_head
from ..induction import previous_token_layer
from ..low_rank import numerical_rank
from ..positional import rotate
from ..random_features import fourier_features
from ..tokens import residual_stream
from ._verdicts import TIME_LIMIT, Exercise, Refused, as_result, documented, judge

_ROWS = "columns sum to 1: normalise each row (the last axis)."


def _offset_weights(p: np.ndarray, delta: float, tau: float) -> np.ndarray:
    """(n, n): ``softmax_j(-(p_i + delta - p_j)**2 / tau)``, for the wrong answers."""
    return softmax(-((p[:, None] + delta - p[None, :]) ** 2) / tau)


def _offset_cases(rng):
    return [(np.sort(rng.uniform(0.0, 1.0, n)), delta, tau)
            for n, delta, tau in ((12, 0.15, 0.01), (9, -0.2, 0.02))]


OFFSET = Exercise(
    name="offset_weights",
    cases=_offset_cases,
    answer=lambda call, p, delta, tau: as_result(call(p.copy(), delta, tau), "offset_weights",
                                                 (p.size, p.size), "the weights"),
    reference=lambda p, delta, tau: gaussian_head(np.zeros(p.size), p, tau, offset=delta)[1],
    faults=lambda p, delta, tau: [
        ("a sign: row i's band is centred on p_i + delta (ahead if delta > 0).", _offset_weights(p, -delta, tau)),
        ("a missing offset: the query moves to p_i + delta inside the square.", _offset_weights(p, 0.0, tau)),
        (_ROWS, softmax(-((p[:, None] + delta - p[None, :]) ** 2) / tau, axis=0)),
    ],
    verified="every weight of the offset head",
    fallback="the weights differ: softmax_j(-(p_i + delta - p_j)**2 / tau).",
)


@documented
def check_offset_head(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(positions, offset, tau)``, the weights (n, n) of the offset head."""
    return judge(OFFSET, function, rng, time_limit)


def _rotation_cases(rng):
    return [(rng.normal(size=(n, 2 * f)), rng.uniform(-1.0, 1.0, n), rng.uniform(0.5, 4.0, f))
            for n, f in ((5, 2), (4, 3))]


def _halves(V, p, omega):
    """The pairs taken as the two halves of a row instead of neighbours: a typical wrong answer."""
    f = omega.size
    order = np.arange(2 * f).reshape(2, f).T.ravel()  # 0, F, 1, F + 1, ...
    rotated = np.empty_like(V)
    rotated[:, order] = rotate(V[:, order], p, omega)
    return rotated


ROTATION = Exercise(
    name="rope",
    cases=_rotation_cases,
    answer=lambda call, V, p, omega: as_result(call(V.copy(), p.copy(), omega.copy()), "rope", V.shape,
                                               "the rows"),
    reference=rotate,
    faults=lambda V, p, omega: [
        ("a sign: the rotation turns the wrong way (the angle is +omega p_i).", rotate(V, -p, omega)),
        ("the pairs: turn neighbours (0, 1), (2, 3), ..., not the two halves.", _halves(V, p, omega)),
        ("the frequencies: pair n turns by its own omega_n, in order.", rotate(V, p, omega[::-1])),
    ],
    verified="every rotated coordinate",
    fallback="the rows differ: a pair (x, y) becomes (x c - y s, x s + y c).",
)


@documented
def check_rope(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(vectors, positions, frequencies)``, the rows (n, 2F) rotated by RoPE."""
    return judge(ROTATION, function, rng, time_limit)


def _mask(call, n):
    value = call(n)
    array = np.asarray(value) if value is not None and value is not Ellipsis else None
    if array is not None and array.dtype.kind in "iuf" and array.shape == (n, n):
        raise Refused("Not right: a type: the mask holds booleans (True where a query may look).")
    return as_result(value, "causal", (n, n), "the mask")


CAUSAL = Exercise(
    name="causal",
    cases=lambda rng: [(int(n),) for n in rng.integers(4, 9, 3)],
    answer=_mask,
    reference=lambda n: causal_mask(n).astype(float),
    faults=lambda n: [
        ("an off-by-one: a query may look at itself (the diagonal is True).", np.tril(np.ones((n, n)), -1)),
        ("a transpose: row i (the query) sees the columns j <= i.", np.triu(np.ones((n, n)))),
        ("a missing mask: the keys after each query must be False.", np.ones((n, n))),
    ],
    verified="the mask hides exactly the keys after each query",
    fallback="the mask differs: True where j <= i (row i, column j).",
)


@documented
def check_causal_mask(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(n)``, the causal mask, an (n, n) boolean array."""
    return judge(CAUSAL, function, rng, time_limit)


def _previous_reference(n: int, margin: float) -> np.ndarray:
    tokens = np.arange(n - 1) % 3  # (n - 1,): the weights do not depend on the symbols
    return previous_token_layer(3, n, margin)(residual_stream(tokens, 3))[1]


def _previous_wrong(n: int, margin: float, delta_steps: float, masked: bool = True, tau_margin=None):
    p = np.linspace(0.0, 1.0, n)
    step = 1.0 / (n - 1)
    tau = step**2 / (margin if tau_margin is None else tau_margin)
    scores = -((p[:, None] + delta_steps * step - p[None, :]) ** 2) / tau
    if masked:
        scores[~causal_mask(n)] = -np.inf
    return softmax(scores)


PREVIOUS = Exercise(
    name="previous_token_weights",
    cases=lambda rng: [(int(n), float(m)) for n, m in zip(rng.integers(6, 12, 2), rng.uniform(4, 10, 2),
                                                          strict=True)],
    answer=lambda call, n, margin: as_result(call(n, margin), "previous_token_weights", (n, n), "the weights"),
    reference=_previous_reference,
    faults=lambda n, margin: [
        ("a missing mask: under the causal mask row i sees only j <= i.", _previous_wrong(n, margin, -1, False)),
        ("a sign: the offset is one token back, delta = -1/N (N + 1 rows).", _previous_wrong(n, margin, 1)),
        ("a scale: tau is (1/N)**2 divided by the margin.", _previous_wrong(n, margin, -1, tau_margin=1.0)),
        ("an off-by-one: the offset is one step back, -1/N, not two.", _previous_wrong(n, margin, -2)),
    ],
    verified="every weight of the previous-token head",
    fallback="the weights differ: the offset head one step back, causal.",
)


@documented
def check_previous_token(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(n_rows, margin)``: the previous-token head's weights (N + 1, N + 1) at ``i/N``."""
    return judge(PREVIOUS, function, rng, time_limit)


def _cache_cases(rng):
    return [(rng.normal(size=(n, 4)), *rng.normal(size=(3, 4, 3)), tau) for n, tau in ((6, 1.5), (5, 0.7))]


def _decoded(call, X, W_Q, W_K, W_V, tau):
    """The reader's step run over all tokens from empty caches: (n, d_v), the outputs."""
    keys, values = np.empty((0, W_K.shape[1])), np.empty((0, W_V.shape[1]))
    outputs = []
    for i, x in enumerate(X):
        step = call(x.copy(), keys, values, W_Q, W_K, W_V, tau)
        if step is Ellipsis or step is None or not isinstance(step, tuple | list) or len(step) != 3:
            as_result(step if step is Ellipsis or step is None else (), "cache_step", (3,), "the answer")
            raise Refused("Not right: cache_step must return the output, the keys and the values.")
        outputs.append(as_result(step[0], "cache_step", (W_V.shape[1],), "the output"))
        keys = as_result(step[1], "cache_step", (i + 1, W_K.shape[1]), "the grown keys")
        values = as_result(step[2], "cache_step", (i + 1, W_V.shape[1]), "the grown values")
    return np.array(outputs)


def _cache_faults(X, W_Q, W_K, W_V, tau):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    causal = causal_mask(len(X))
    scores = Q @ K.T
    return [
        ("a scale: divide the scores by tau.", softmax(np.where(causal, scores, -np.inf)) @ V),
        ("the query: q = x W_Q, scored against the cached keys.",
         softmax(np.where(causal, K @ K.T / tau, -np.inf)) @ V),
        ("a transpose: the new query's row of weights, not its column.",
         (softmax(np.where(causal.T, scores / tau, -np.inf), axis=0).T @ V)),
    ]


CACHE = Exercise(
    name="cache_step",
    cases=_cache_cases,
    answer=_decoded,
    reference=lambda X, W_Q, W_K, W_V, tau: decode_cached(X, W_Q, W_K, W_V, tau)[0],
    faults=_cache_faults,
    verified="the outputs, token after token, from empty caches",
    fallback="the outputs differ: append x W_K and x W_V, then attend with x W_Q.",
)


@documented
def check_cache_step(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(x, keys, values, W_Q, W_K, W_V, tau)``, one step of decoding with a cache.

    It returns ``(output, keys, values)``: the new token's output (d_v,) and
    the caches with its key and value appended, run from empty caches over
    every token of a random sequence.
    """
    return judge(CACHE, function, rng, time_limit)


def _gram(features: np.ndarray) -> np.ndarray:
    """(n, n): the features' dot products, the kernel they give (any order of columns)."""
    return features @ features.T


def _feature_cases(rng):
    return [(rng.uniform(-1.0, 1.0, n), rng.uniform(0.5, 6.0, d)) for n, d in ((7, 5), (6, 8))]


FEATURES = Exercise(
    name="features",
    cases=_feature_cases,
    answer=lambda call, p, omega: _gram(as_result(call(p.copy(), omega.copy()), "features",
                                                  (p.size, 2 * omega.size), "the features")),
    reference=lambda p, omega: _gram(fourier_features(p, omega)),
    faults=lambda p, omega: [
        ("a scale: divide the features by sqrt(D), not D.", _gram(fourier_features(p, omega) / np.sqrt(omega.size))),
        ("a missing term: each frequency gives a cosine and a sine.",
         2 * np.cos(p[:, None] * omega) @ np.cos(p[:, None] * omega).T / omega.size),
        ("a missing factor: divide the features by sqrt(D).", _gram(fourier_features(p, omega) * np.sqrt(omega.size))),
    ],
    verified="psi(p_i) . psi(p_j) = mean_r cos(omega_r (p_i - p_j))",
    fallback="the features differ: cos and sin of omega_r p, over sqrt(D).",
)


@documented
def check_features(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(positions, frequencies)``, the random Fourier features (n, 2D), by their dot products."""
    return judge(FEATURES, function, rng, time_limit)



def _rank_cases(rng):
    """Singular values falling as exp(-c k**2), scaled far from 1, and tolerances."""
    cases = []
    for n, scale, tolerance in ((40, 1e3, 1e-6), (30, 1e-3, 1e-4), (50, 7.0, 1e-8)):
        k = np.arange(n)
        values = scale * np.exp(-rng.uniform(0.02, 0.2) * k**2)  # (n,), largest first
        cases.append((values, tolerance))
    return cases


RANK = Exercise(
    name="numerical_rank",
    cases=_rank_cases,
    answer=lambda call, values, tol: as_result(call(values.copy(), tol), "numerical_rank", (), "the rank"),
    reference=lambda values, tol: np.array(float(numerical_rank(values, tol))),
    faults=lambda values, tol: [
        ("a scale: compare with tolerance times the largest value.", np.array(float((values > tol).sum()))),
        ("a sign: count the values above the threshold, not below.",
         np.array(float((values <= tol * values.max()).sum()))),
        ("a scale: the threshold is relative to the largest, not the sum.",
         np.array(float((values > tol * values.sum()).sum()))),
    ],
    verified="the count of singular values above tolerance times the largest",
    fallback="the count differs: values above tolerance times the largest.",
)


@documented
def check_numerical_rank(function, *, rng=defaults.SEED, time_limit=TIME_LIMIT):
    r"""Check ``function(values, tolerance)``, the numerical rank: how many exceed ``tolerance`` times the largest."""
    return judge(RANK, function, rng, time_limit)
