r"""One step of gradient descent and one linear head, derived with sympy for a prompt of symbols.

For ``N`` examples in ``d`` dimensions, every coordinate a symbol
(:math:`p_{j,r}` the coordinate ``r`` of example ``j``'s input, :math:`s_j`
its label, :math:`p_{N+1,r}` the query's), :func:`one_step_derivation`
differentiates the in-context loss

.. math:: L(\varphi) = \frac{1}{2N} \sum_{j=1}^{N} (p_j \cdot \varphi - s_j)^2

at :math:`\varphi = 0`, takes the step :math:`\varphi_1 = -\eta \nabla L(0)`, and
writes out the query's prediction :math:`\varphi_1 \cdot p_{N+1}`; then the
output of the linear head of :func:`~selfattention.in_context.gd_layer_weights`
on the tokens :math:`[p_j, s_j]`, read as the query's prediction, and their
difference, which simplifies to 0.

sympy is imported here, never by ``import selfattention``.
"""

from __future__ import annotations

import functools

import sympy as sp

from ._validation import as_count

#: The step size.
eta = sp.Symbol("eta", positive=True)


@functools.cache
def _prompt(N: int, d: int):
    """Symbols of a prompt: inputs (N + 1) x d (the query last), labels N."""
    P = sp.Matrix(N + 1, d, lambda j, r: sp.Symbol(f"p_{{{j + 1},{r + 1}}}", real=True))
    y = sp.Matrix(N, 1, lambda j, _: sp.Symbol(f"s_{j + 1}", real=True))
    return P, y


def one_step_derivation(examples=2, dimension=2) -> dict:
    r"""The loss, its gradient at 0, one step's prediction, the linear head's, and their difference.

    Parameters
    ----------
    examples : int
        ``N``, at most 6 (the expressions grow with it).
    dimension : int
        ``d``, at most 4.

    Returns
    -------
    dict of str -> sympy.Expr or sympy.Matrix
        ``"loss"``, ``"gradient"`` (``d x 1``, at :math:`\varphi = 0`), ``"step"``
        (:math:`\varphi_1`), ``"prediction"`` (:math:`\varphi_1 \cdot p_{N+1}`),
        ``"head"`` (the linear head's) and ``"difference"`` (simplified).
    """
    N, d = as_count(examples, "examples", maximum=6), as_count(dimension, "dimension", maximum=4)
    P, y = _prompt(N, d)
    phi = sp.Matrix(d, 1, lambda r, _: sp.Symbol(f"phi_{r + 1}", real=True))
    loss = sum(((P[j, :] * phi)[0] - y[j]) ** 2 for j in range(N)) / (2 * N)
    at_zero = {symbol: 0 for symbol in phi}
    gradient = sp.Matrix([sp.diff(loss, symbol).subs(at_zero) for symbol in phi])  # (d, 1)
    step = -eta * gradient  # phi_1
    prediction = sp.expand((P[N, :] * step)[0])
    return {"loss": loss, "gradient": gradient, "step": step, "prediction": prediction,
            "head": (head := _linear_head(P, y)), "difference": sp.simplify(prediction - head)}


def _linear_head(P: sp.Matrix, y: sp.Matrix) -> sp.Expr:
    r"""Minus the query's label after one layer: :math:`\frac{1}{N} \sum_j (q \cdot k_j)\, \eta\, s_j`."""
    N, d = y.rows, P.cols
    tokens = P[:N, :].row_join(y).col_join(P[N, :].row_join(sp.Matrix([[0]])))  # (N + 1, d + 1)
    W_QK = sp.diag(sp.eye(d), 0)  # W_Q W_K^T: both read p
    W_V = sp.zeros(d + 1, d + 1)
    W_V[d, d] = -eta
    update = sum(((tokens[N, :] * W_QK * tokens[j, :].T)[0] * tokens[j, :] * W_V for j in range(N)),
                 sp.zeros(1, d + 1)) / N
    return sp.expand(-(tokens[N, d] + update[0, d]))
