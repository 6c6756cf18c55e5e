r"""The bilateral head's score, derived symbolically with sympy.

The bilateral head's projections are meant to make the score of tokens ``i``
and ``j`` equal

.. math:: e_{ij} = -\frac{(p_i - p_j)^2}{\tau_p} - \frac{(s_i - s_j)^2}{\tau_s}.

This module checks that claim with computer algebra: it takes the package's
*actual* :func:`~selfattention.bilateral.bilateral_head_weights` at unit
temperatures (converted exactly, ``sqrt(2)`` included), divides each query
dimension by the temperature :data:`~selfattention.bilateral.SCORE_TERMS`
assigns it, now a symbol, and multiplies two symbolic tokens
``x = [s, s**2, p, p**2, 1]`` through.

sympy is imported here only, so ``import selfattention`` never needs it.
"""

from __future__ import annotations

import sympy as sp

from .bilateral import SCORE_TERMS, bilateral_head_weights
from .symbolic import exact_matrix, p_i, p_j, s_i, s_j

#: The two temperatures, as positive symbols.
tau_p, tau_s = sp.symbols("tau_p tau_s", positive=True)


def content_row(signal, position) -> sp.Matrix:
    """The token ``[s, s**2, p, p**2, 1]`` as a symbolic row, shape (1, 5)."""
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
