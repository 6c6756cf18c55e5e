r"""The quadratic-expansion trick, derived symbolically with sympy.

The engineered head's projections are meant to make the query-key score of
tokens ``i`` and ``j`` equal

.. math:: q_i \cdot k_j = -(p_i - p_j)^2 = -p_i^2 + 2 p_i p_j - p_j^2,

the bilateral head's (:mod:`~selfattention.bilateral`) to make it

.. math:: q_i \cdot k_j = -\frac{(p_i - p_j)^2}{\tau_p} - \frac{(s_i - s_j)^2}{\tau_s},

the head at an offset ``delta`` to make it ``-(p_i + delta - p_j)**2``,
and the positional encodings' (:mod:`~selfattention.positional`) to make it
a function of ``p_i - p_j`` alone: ``xi cos(omega (p_i - p_j))`` for the
sinusoidal head, a rotated query and key for RoPE. ALiBi's ``-|p_i - p_j|``
is no finite sum of products: the matrix of distances has full rank
(:func:`distance_determinant`).

This module checks the first three claims with computer algebra: it builds the two
tokens' augmented rows (``x = [s, p, p**2, 1]``, or ``[s, s**2, p, p**2, 1]``)
from symbols, multiplies them by the package's *actual* projections
(converted exactly, ``sqrt(2)`` included; the bilateral head's at unit
temperatures, each query dimension then divided by its temperature symbol;
the offset head's ``W_Q`` recovered as a polynomial in the symbol ``delta``
from three numeric offsets) and simplifies the dot product.

sympy is imported here only, so ``import selfattention`` never needs it.
"""

from __future__ import annotations

import numbers

import numpy as np
import sympy as sp

from . import memory
from ._validation import InputTypeError, as_array, as_count, as_flag, as_real_scalar, as_series, finite_result
from .bilateral import SCORE_TERMS, bilateral_head_weights
from .head import centre_positions, gaussian_head_weights, positional_features
from .positional import sinusoidal_head_weights

#: Symbols of two tokens: signal values ``s_i, s_j`` and positions ``p_i, p_j``.
s_i, s_j = sp.symbols("s_i s_j", real=True)
p_i, p_j = sp.symbols("p_i p_j", real=True)


def exact_matrix(matrix, *, name: str = "matrix") -> sp.Matrix:
    """Convert a numeric matrix whose entries are integer multiples of 1 or
    ``sqrt(2)`` to an exact sympy matrix.

    Parameters
    ----------
    matrix : array_like, shape (r, c)
    name : str
        The caller's name for ``matrix``, used in error messages.

    Returns
    -------
    sympy.Matrix, shape (r, c)

    Raises
    ------
    ValueError
        If an entry is not (to rounding error) ``k`` or ``k * sqrt(2)`` with
        ``k`` an integer: the conversion never guesses.
    """
    m = as_array(matrix, name, ndim=2)
    return sp.Matrix(m.shape[0], m.shape[1], [_exact_entry(x, name) for x in m.ravel()])


def _exact_entry(x: float, name: str) -> sp.Expr:
    for unit in (sp.Integer(1), sp.sqrt(2)):
        k = x / float(unit)
        if abs(k - round(k)) <= 1e-12 * max(1.0, abs(k)):
            return sp.Integer(round(k)) * unit
    raise ValueError(f"{name} entry {x!r} is not an integer multiple of 1 or sqrt(2)")


def token_row(signal, position) -> sp.Matrix:
    """The augmented token ``[s, p, p**2, 1]`` as a symbolic row.

    Parameters
    ----------
    signal, position : sympy.Expr or float
        The token's signal value ``s`` and position ``p``: symbolic
        expressions or finite real numbers.

    Returns
    -------
    sympy.Matrix, shape (1, 4)
    """
    signal, position = _symbolic(signal, "signal"), _symbolic(position, "position")
    return sp.Matrix([[signal, position, position**2, 1]])


def _symbolic(x, name: str) -> sp.Expr:
    """A sympy expression, or a finite real number made exact (never a string for sympy to parse)."""
    if isinstance(x, sp.Expr):
        return x
    if isinstance(x, numbers.Integral) and not isinstance(x, bool | np.bool_):
        return sp.Integer(int(x))
    if isinstance(x, numbers.Real):
        return sp.Float(as_real_scalar(x, name))
    raise InputTypeError(f"{name} must be a sympy expression or a real number, got {x!r}")


def symbolic_projections(W_Q=None, W_K=None):
    r"""The query of token ``i`` and the key of token ``j``, symbolically.

    .. math:: q_i = x_i W_Q, \qquad k_j = x_j W_K

    Parameters
    ----------
    W_Q, W_K : array_like, shape (4, d_k), optional
        The projections; the package's :func:`gaussian_head_weights` when
        omitted.

    Returns
    -------
    q_i : sympy.Matrix, shape (1, d_k)
    k_j : sympy.Matrix, shape (1, d_k)
    """
    default_Q, default_K, _ = gaussian_head_weights()
    WQ = exact_matrix(default_Q if W_Q is None else W_Q, name="W_Q")  # (4, d_k)
    WK = exact_matrix(default_K if W_K is None else W_K, name="W_K")  # (4, d_k)
    if WQ.shape[0] != 4 or WK.shape[0] != 4 or WQ.shape[1] != WK.shape[1]:
        raise ValueError(f"W_Q and W_K must both have shape (4, d_k), got {WQ.shape} and {WK.shape}")
    return token_row(s_i, p_i) * WQ, token_row(s_j, p_j) * WK


def symbolic_score(W_Q=None, W_K=None):
    """The score ``q_i . k_j`` term by term, expanded and factored.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (4, d_k), optional
        As for :func:`symbolic_projections`.

    Returns
    -------
    terms : list of sympy.Expr
        ``q_i[r] * k_j[r]`` for each dimension ``r``: one term of the
        expansion per dimension.
    expanded : sympy.Expr
        Their sum, expanded.
    factored : sympy.Expr
        The same score, factored (``-(p_i - p_j)**2`` for the package's head).
    """
    q, k = symbolic_projections(W_Q, W_K)
    terms = [sp.expand(q[r] * k[r]) for r in range(q.shape[1])]
    expanded = sp.expand(sum(terms, sp.Integer(0)))
    return terms, expanded, sp.factor(expanded)


def score_offset(W_Q=None, W_K=None) -> sp.Expr:
    r"""What the score adds to the negative squared distance, simplified.

    .. math:: q_i \cdot k_j + (p_i - p_j)^2

    0 for the package's head; ``p_i**2`` for its ``d_k = 2`` variant, a term
    of the query alone, which the softmax of row ``i`` ignores.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (4, d_k), optional
        As for :func:`symbolic_projections`.

    Returns
    -------
    sympy.Expr
    """
    _, expanded, _ = symbolic_score(W_Q, W_K)
    return sp.simplify(expanded + (p_i - p_j) ** 2)


def is_negative_squared_distance(W_Q=None, W_K=None) -> bool:
    """True when ``q_i . k_j - (-(p_i - p_j)**2)`` simplifies to exactly 0.

    Parameters
    ----------
    W_Q, W_K : array_like, shape (4, d_k), optional
        As for :func:`symbolic_projections`.

    Returns
    -------
    bool
    """
    return score_offset(W_Q, W_K) == 0


def numeric_score_error(positions, signal=None, *, centre=True) -> float:
    r"""Largest gap between the head's scores and ``-(p_i - p_j)**2``.

    .. math:: \max_{i,j} \left| (X W_Q)(X W_K)^\top + (p_i - p_j)^2 \right|

    Parameters
    ----------
    positions : array_like, shape (n,)
    signal : array_like, shape (n,), optional
        The signal column of ``X`` (it must not matter); zeros when omitted.
    centre : bool
        Build ``X`` from the centred positions, as the head does
        (:func:`~selfattention.head.centre_positions`); ``False`` builds it
        from the positions as given, to show what centring saves.

    Returns
    -------
    float
    """
    (p,) = as_series(positions=positions)
    s = np.zeros_like(p) if signal is None else signal
    memory.require_matrix(p.size, p.size, "positions")
    X = positional_features(s, centre_positions(p) if as_flag(centre, "centre") else p)  # (n, 4)
    W_Q, W_K, _ = gaussian_head_weights()
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (X @ W_Q) @ (X @ W_K).T  # (n, n)
        gap = np.max(np.abs(scores + (p[:, None] - p[None, :]) ** 2))
    return float(finite_result(gap, "positions: the scores or squared distances overflow the double range"))


#: The two temperatures, as positive symbols.
tau_p, tau_s = sp.symbols("tau_p tau_s", positive=True)


def content_row(signal, position) -> sp.Matrix:
    """The bilateral head's token ``[s, s**2, p, p**2, 1]`` as a symbolic row, shape (1, 5).

    Parameters are those of :func:`token_row`.
    """
    signal, position = _symbolic(signal, "signal"), _symbolic(position, "position")
    return sp.Matrix([[signal, signal**2, position, position**2, 1]])


def symbolic_bilateral_projections():
    r"""The bilateral head's ``W_Q`` and ``W_K`` with symbolic temperatures.

    Returns
    -------
    W_Q, W_K : sympy.Matrix, shape (5, 6)
        ``W_Q`` is the package's matrix at ``tau_p = tau_s = 1`` with each
        column divided by its temperature symbol; ``W_K`` does not depend on them.
    """
    unit_Q, unit_K, _ = bilateral_head_weights(1.0, 1.0)
    divisor = {"position": tau_p, "signal": tau_s}
    scale = sp.diag(*[1 / divisor[term] for term in SCORE_TERMS])  # (6, 6)
    return exact_matrix(unit_Q) * scale, exact_matrix(unit_K)


def symbolic_bilateral_score():
    """The score ``q_i . k_j`` of the bilateral head, term by term and in two parts.

    Returns
    -------
    q_i, k_j : sympy.Matrix, shape (1, 6)
    terms : list of sympy.Expr
        ``q_i[r] * k_j[r]`` for each of the six dimensions.
    parts : dict of str -> sympy.Expr
        The sum of the terms of each temperature (:data:`SCORE_TERMS`), factored.
    """
    W_Q, W_K = symbolic_bilateral_projections()
    q, k = content_row(s_i, p_i) * W_Q, content_row(s_j, p_j) * W_K
    terms = [sp.expand(q[r] * k[r]) for r in range(q.shape[1])]
    parts = {name: sp.factor(sum((t for t, n in zip(terms, SCORE_TERMS, strict=True) if n == name), sp.Integer(0)))
             for name in dict.fromkeys(SCORE_TERMS)}
    return q, k, terms, parts


def is_bilateral_score() -> bool:
    """True when ``q_i . k_j + (p_i - p_j)**2 / tau_p + (s_i - s_j)**2 / tau_s`` simplifies to exactly 0."""
    *_, terms, _ = symbolic_bilateral_score()
    score = sum(terms, sp.Integer(0))
    return sp.simplify(score + (p_i - p_j) ** 2 / tau_p + (s_i - s_j) ** 2 / tau_s) == 0


#: The offset of a head that looks elsewhere, as a real symbol.
delta = sp.Symbol("delta", real=True)


def symbolic_offset_projections():
    r"""The offset head's ``W_Q`` as a polynomial in the symbol ``delta``, and its ``W_K``, from the package.

    The package's :func:`~selfattention.head.gaussian_head_weights` takes a
    number for the offset. Its entries are polynomials of degree at most 2
    in it by construction (the query's entries are
    :math:`\sqrt 2\, (p_i + \delta)`, :math:`-(p_i + \delta)^2` and 1), so
    three offsets determine them:

    .. math:: W_Q(\delta) = W_Q(0) + \delta\, \tfrac12 \big(W_Q(1) - W_Q(-1)\big)
        + \delta^2 \big(\tfrac12 (W_Q(1) + W_Q(-1)) - W_Q(0)\big),

    each converted exactly (:func:`exact_matrix`); a fourth offset checks
    the fit.

    Returns
    -------
    W_Q : sympy.Matrix, shape (4, 3)
        In the symbol :data:`delta`.
    W_K : sympy.Matrix, shape (4, 3)
    """
    # W_Q at the offsets -1, 0 and +1; W_K does not depend on the offset
    (W_m, W_K), (W_0, _), (W_p, _) = (gaussian_head_weights(offset=d)[:2]
                                      for d in (-1.0, 0.0, 1.0))
    # W_Q(delta) = W_0 + delta W_1 + delta**2 W_2 through the three
    W_1, W_2 = (W_p - W_m) / 2, (W_p + W_m) / 2 - W_0  # (4, 3) each
    check = 2.5  # a fourth offset
    fitted = W_0 + check * W_1 + check**2 * W_2
    if not np.allclose(gaussian_head_weights(offset=check)[0], fitted,
                       rtol=0, atol=1e-12):
        raise AssertionError("gaussian_head_weights' W_Q is not a "
                             "polynomial of degree 2 in the offset")
    W_0, W_1, W_2 = (exact_matrix(term, name="W_Q")
                     for term in (W_0, W_1, W_2))
    return W_0 + delta * W_1 + delta**2 * W_2, exact_matrix(W_K, name="W_K")


def symbolic_offset_score():
    """The offset head's score ``q_i . k_j``, term by term, expanded and factored.

    Returns
    -------
    terms : list of sympy.Expr
        One product ``q_i[r] * k_j[r]`` per dimension.
    expanded : sympy.Expr
    factored : sympy.Expr
        ``-(p_i + delta - p_j)**2``.
    """
    W_Q, W_K = symbolic_offset_projections()
    q, k = token_row(s_i, p_i) * W_Q, token_row(s_j, p_j) * W_K
    terms = [sp.expand(q[r] * k[r]) for r in range(q.shape[1])]
    expanded = sp.expand(sum(terms, sp.Integer(0)))
    return terms, expanded, sp.factor(expanded)


def is_offset_squared_distance() -> bool:
    """True when the offset head's ``q_i . k_j + (p_i + delta - p_j)**2`` simplifies to exactly 0."""
    _, expanded, _ = symbolic_offset_score()
    return sp.simplify(expanded + (p_i + delta - p_j) ** 2) == 0


# --- positional encodings (selfattention.positional) --------------------------------------------

#: A frequency, an amplitude, and a difference of positions ``u = p_i - p_j``.
omega, xi, u = sp.symbols("omega xi u", real=True)


def symbolic_sinusoidal_score():
    r"""The score of the sinusoidal head of one frequency, from the package's projections.

    The tokens are ``x = [s, cos(omega p), sin(omega p)]``; the projections
    are :func:`~selfattention.positional.sinusoidal_head_weights` at
    amplitude 1, the query then multiplied by ``xi``:

    .. math:: q_i \cdot k_j = \xi \cos \omega p_i \cos \omega p_j + \xi \sin \omega p_i \sin \omega p_j
        = \xi \cos(\omega (p_i - p_j))

    Returns
    -------
    terms : list of sympy.Expr
        ``q_i[r] * k_j[r]``, one per dimension.
    score : sympy.Expr
        Their sum, simplified.
    """
    unit_Q, unit_K, _ = sinusoidal_head_weights([1.0])
    W_Q, W_K = exact_matrix(unit_Q, name="W_Q") * xi, exact_matrix(unit_K, name="W_K")  # (3, 2) each

    def row(s, p):
        return sp.Matrix([[s, sp.cos(omega * p), sp.sin(omega * p)]])

    q, k = row(s_i, p_i) * W_Q, row(s_j, p_j) * W_K
    terms = [q[r] * k[r] for r in range(q.shape[1])]
    return terms, sp.trigsimp(sum(terms, sp.Integer(0)))


def is_cosine_of_the_difference() -> bool:
    """True when the sinusoidal head's score minus ``xi cos(omega (p_i - p_j))`` simplifies to 0."""
    _, score = symbolic_sinusoidal_score()
    return sp.simplify(sp.expand_trig(score - xi * sp.cos(omega * (p_i - p_j)))) == 0


def cosine_expansion(order=6):
    r"""The cosine score near the diagonal, and the temperature whose Gaussian it matches.

    .. math:: \xi \cos(\omega u) = \xi - \frac{\xi\, \omega^2 u^2}{2} + \frac{\xi\, \omega^4 u^4}{24} + \dots,
        \qquad -\frac{\xi\, \omega^2 u^2}{2} = -\frac{u^2}{\tau} \iff \tau = \frac{2}{\xi\, \omega^2}

    Parameters
    ----------
    order : int
        The expansion is up to ``u**order`` (exclusive), from 3 to 40.

    Returns
    -------
    series : sympy.Expr
        The Taylor polynomial in ``u``, without its order term.
    temperature : sympy.Expr
        The ``tau`` whose ``-u**2 / tau`` is its quadratic term.
    """
    order = as_count(order, "order", minimum=3)
    if order > 40:
        raise ValueError(f"order must be at most 40, got {order}")
    series = sp.series(xi * sp.cos(omega * u), u, 0, order).removeO()
    tau = sp.Symbol("tau", positive=True)
    (temperature,) = sp.solve(sp.Eq(series.coeff(u, 2), -1 / tau), tau)
    return series, temperature


#: The coordinates of a query and a key pair before rotation, and the shift of a test.
q_i1, q_i2, k_j1, k_j2 = sp.symbols("q_{i\\,1} q_{i\\,2} k_{j\\,1} k_{j\\,2}", real=True)
_shift = sp.Symbol("shift", real=True)


def rotation(angle) -> sp.Matrix:
    r"""The 2 x 2 rotation by ``angle`` that :func:`~selfattention.positional.rotate` applies to a row pair.

    .. math:: \operatorname{rot}(\omega p) = \begin{bmatrix} \cos \omega p & \sin \omega p \\
        -\sin \omega p & \cos \omega p \end{bmatrix}

    Parameters
    ----------
    angle : sympy.Expr or float

    Returns
    -------
    sympy.Matrix, shape (2, 2)
    """
    a = _symbolic(angle, "angle")
    return sp.Matrix([[sp.cos(a), sp.sin(a)], [-sp.sin(a), sp.cos(a)]])


def symbolic_rotary_score():
    r"""The dot product of a rotated query pair and a rotated key pair, simplified.

    .. math:: q_i \operatorname{rot}(\omega p_i) \cdot k_j \operatorname{rot}(\omega p_j)

    for any coordinates ``q_i = [q_{i,1}, q_{i,2}]``, ``k_j = [k_{j,1}, k_{j,2}]``.
    The product is multiplied out, the coefficient of each product of a
    query's and a key's coordinate simplified (``trigsimp``) and the terms
    collected by ``cos`` and ``sin`` of ``omega (p_i - p_j)``.

    Returns
    -------
    score : sympy.Expr
        Written with ``cos`` and ``sin`` of ``omega (p_i - p_j)``.
    shift_invariant : bool
        Whether the score is the product (its trigonometric expansion
        subtracts to 0) and moving both positions by the same amount leaves it
        as it is (the difference expands to 0).
    """
    q = sp.Matrix([[q_i1, q_i2]]) * rotation(omega * p_i)
    k = sp.Matrix([[k_j1, k_j2]]) * rotation(omega * p_j)
    product = sp.expand((q * k.T)[0, 0])
    pairs = [a * b for a in (q_i1, q_i2) for b in (k_j1, k_j2)]
    simplified = sum((pair * sp.trigsimp(product.coeff(pair)) for pair in pairs), sp.Integer(0))
    difference = sp.expand(omega * (p_i - p_j))
    score = sp.collect(sp.expand(simplified), [sp.cos(difference), sp.sin(difference)])
    is_product = sp.expand(sp.expand_trig(score) - product) == 0
    shifted = score.subs({p_i: p_i + _shift, p_j: p_j + _shift}, simultaneous=True)
    return score, bool(is_product and sp.expand(shifted - score) == 0)


#: The largest symbolic distance matrix :func:`distance_matrix` builds: sympy needs
#: about 3 s for the determinant of 6 x 6 and 30 s for 7 x 7.
MAX_DISTANCE_MATRIX = 8


def distance_matrix(n) -> sp.Matrix:
    r"""The matrix of ``|p_i - p_j|`` for ``n`` symbolic positions in increasing order.

    .. math:: |p_i - p_j| = p_j - p_i \text{ for } i < j

    Parameters
    ----------
    n : int
        The number ``N`` of positions, from 2 to :data:`MAX_DISTANCE_MATRIX`.

    Returns
    -------
    sympy.Matrix, shape (n, n)
    """
    n = as_count(n, "n", minimum=2)
    if n > MAX_DISTANCE_MATRIX:
        raise ValueError(f"n must be at most {MAX_DISTANCE_MATRIX} (sympy's determinant grows factorially), got {n}")
    p = sp.symbols(f"p_1:{n + 1}", real=True)
    return sp.Matrix(n, n, lambda i, j: p[max(i, j)] - p[min(i, j)])


def distance_determinant(n):
    r"""The determinant of :func:`distance_matrix`, factored, and the closed form it equals.

    .. math:: \det\big(|p_i - p_j|\big) = (-1)^{N-1}\, 2^{N-2}\, (p_N - p_1) \prod_{i=1}^{N-1} (p_{i+1} - p_i)

    Distinct positions make it non-zero: the matrix has full rank ``N``.

    Parameters
    ----------
    n : int
        The number ``N`` of positions, from 2 to :data:`MAX_DISTANCE_MATRIX`.

    Returns
    -------
    determinant : sympy.Expr
        Factored.
    matches : bool
        Whether it equals the closed form above.
    """
    D = distance_matrix(n)
    p = sorted(D.free_symbols, key=lambda symbol: int(str(symbol).split("_")[1]))
    closed = (-1) ** (len(p) - 1) * sp.Integer(2) ** (len(p) - 2) * (p[-1] - p[0])
    for i in range(len(p) - 1):
        closed *= p[i + 1] - p[i]
    determinant = sp.factor(D.det(method="berkowitz"))  # the fastest of sympy's methods here
    return determinant, sp.expand(determinant - closed) == 0
