r"""Heads that learn while they read: regression from the examples of a prompt.

A prompt holds ``N`` examples :math:`(p_j, s_j)`, an input :math:`p_j`
(:math:`1 \times d`) and its label :math:`s_j`, and a query input :math:`p_{N+1}`.
Each example is a token :math:`[p_j, s_j]`, the query a token :math:`[p_{N+1}, 0]`
(:func:`prompt_tokens`), the query last. No weight changes between prompts,
yet two heads predict the query's label from the examples alone:

* the softmax head of the quadratic trick (:func:`softmax_head`) attends by
  :math:`-\lVert p_{N+1} - p_j \rVert^2 / \tau`: it is Nadaraya-Watson regression
  with bandwidth :math:`h = \sqrt{\tau / 2}`;
* a linear head, scores not passed through a softmax
  (:func:`linear_attention_layer` with :func:`gd_layer_weights`), predicts
  :math:`\frac{\eta}{N} \sum_j s_j\, p_j \cdot p_{N+1}`, the prediction of one step
  of gradient descent from :math:`\varphi = 0` on the loss
  :math:`L(\varphi) = \frac{1}{2N} \sum_j (p_j \cdot \varphi - s_j)^2`
  (:func:`one_step_prediction`); ``T`` such layers take ``T`` steps
  (:func:`gradient_descent`; von Oswald et al. 2023, Proposition 1).

In every layer the query token is no key: no row attends to it.
"""

from __future__ import annotations

import numpy as np

from . import memory, work
from ._validation import as_array, as_count, as_positive_scalar, as_temperature, finite_result, naming, same_length
from .core import attention

#: What a prediction says when the products of the prompt leave the double range.
_OVERFLOW = "inputs, labels and query: the prediction overflows"


def _as_examples(inputs, labels):
    r"""The examples checked: inputs ``(N, d)`` and labels ``(N,)``, finite, ``N >= 1``, ``d >= 1``."""
    P = as_array(inputs, "inputs", ndim=2)
    y = as_array(labels, "labels", ndim=1)
    same_length(P, y, "inputs", "labels")
    if P.shape[0] == 0:
        raise ValueError("inputs and labels must hold at least one example (the prompt is empty)")
    if P.shape[1] == 0:
        raise ValueError("inputs must have at least one coordinate, got shape (N, 0)")
    return P, y


def _as_prompt(inputs, labels, query):
    r"""The prompt's arguments checked: ``(N, d)``, ``(N,)`` and ``(d,)``, finite, ``N >= 1``.

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.

    Returns
    -------
    inputs, labels, query : ndarray
    """
    P, y = _as_examples(inputs, labels)
    p = as_array(query, "query", ndim=1)
    if P.shape[1] != p.size:
        raise ValueError(f"query must have the inputs' {P.shape[1]} coordinates, got {p.size}")
    return P, y, p


def prompt_tokens(inputs, labels, query) -> np.ndarray:
    r"""The prompt as tokens: rows :math:`[p_j, s_j]`, then the query :math:`[p_{N+1}, 0]`.

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.

    Returns
    -------
    tokens : ndarray, shape (N + 1, d + 1)
    """
    P, y, p = _as_prompt(inputs, labels, query)
    memory.require(8 * (P.size + y.size + p.size + 1), "inputs", f"tokens of {y.size} examples")
    examples = np.column_stack([P, y])  # (N, d + 1)
    return np.vstack([examples, np.append(p, 0.0)])  # (N + 1, d + 1)


def kernel_tokens(inputs, labels, query) -> np.ndarray:
    r"""Tokens with the quadratic trick's features, :math:`[p_j, \lVert p_j \rVert^2, 1, s_j]`, the query's label 0.

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.

    Returns
    -------
    tokens : ndarray, shape (N + 1, d + 3)
    """
    tokens = prompt_tokens(inputs, labels, query)  # (N + 1, d + 1)
    P = tokens[:, :-1]  # (N + 1, d)
    with np.errstate(over="ignore"):
        square = finite_result(np.einsum("nd,nd->n", P, P), "inputs and query: a squared length overflows")
    ones = np.ones(len(tokens))
    return np.column_stack([P, square, ones, tokens[:, -1]])  # (N + 1, d + 3)


def kernel_head_weights(dimension):
    r"""The softmax head that attends by distance, for tokens of :func:`kernel_tokens`.

    Its score of example ``j`` for the query is
    :math:`q \cdot k_j = 2\, p_{N+1} \cdot p_j - \lVert p_j \rVert^2 - \lVert p_{N+1} \rVert^2
    = -\lVert p_{N+1} - p_j \rVert^2`, and its value is :math:`s_j`.

    Parameters
    ----------
    dimension : int
        ``d``, the inputs' coordinates.

    Returns
    -------
    W_Q, W_K : ndarray, shape (d + 3, d + 2) each
    W_V : ndarray, shape (d + 3, 1)
    """
    d = as_count(dimension, "dimension")
    memory.require(8 * 3 * (d + 3) * (d + 2), "dimension", f"projections of {d} coordinates")
    W_Q, W_K, W_V = np.zeros((d + 3, d + 2)), np.zeros((d + 3, d + 2)), np.zeros((d + 3, 1))
    W_Q[:d, :d], W_Q[d + 1, d], W_Q[d, d + 1] = 2 * np.eye(d), 1.0, 1.0  # q = [2p, 1, |p|^2]
    W_K[:d, :d], W_K[d, d], W_K[d + 1, d + 1] = np.eye(d), -1.0, -1.0  # k = [p_j, -|p_j|^2, -1]
    W_V[d + 2, 0] = 1.0  # v_j = s_j
    return W_Q, W_K, W_V


def softmax_head(inputs, labels, query, temperature):
    r"""The query's prediction by the softmax head of :func:`kernel_head_weights`.

    .. math:: \hat f(p_{N+1}) = \sum_j \operatorname{softmax}_j\!\big(-\lVert p_{N+1} - p_j \rVert^2 / \tau\big)\, s_j

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.
    temperature : float
        The temperature :math:`\tau > 0`: Nadaraya-Watson regression of bandwidth :math:`h = \sqrt{\tau / 2}`.

    Returns
    -------
    prediction : float
    weights : ndarray, shape (N,)
        The query's attention over the examples.
    """
    tokens = kernel_tokens(inputs, labels, query)  # (N + 1, d + 3)
    tau = as_temperature(temperature, "temperature")
    W_Q, W_K, W_V = kernel_head_weights(tokens.shape[1] - 3)
    with np.errstate(over="ignore", invalid="ignore"):
        Q = finite_result(tokens[-1:] @ W_Q, _OVERFLOW)  # (1, d + 2): the query's
        K = finite_result(tokens[:-1] @ W_K, _OVERFLOW)  # (N, d + 2): the examples'
    with naming("inputs, labels, query and temperature", "Q", "K", "V", "Q and K"):  # overflows of the scores
        output, weights = attention(Q, K, tokens[:-1] @ W_V, tau)  # (1, 1), (1, N)
    return float(output[0, 0]), weights[0]


def gd_layer_weights(dimension, eta):
    r"""The linear layer that takes one step of gradient descent (von Oswald et al. 2023).

    :math:`W_Q = W_K` read the input :math:`p_j` of a token :math:`[p_j, s_j]`;
    :math:`W_V` writes :math:`-\eta\, s_j` into the label's coordinate.

    Parameters
    ----------
    dimension : int
        The inputs' ``d``.
    eta : float
        The step size :math:`\eta > 0`.

    Returns
    -------
    W_Q, W_K : ndarray, shape (d + 1, d) each
    W_V : ndarray, shape (d + 1, d + 1)
    """
    d = as_count(dimension, "dimension")
    step = as_positive_scalar(eta, "eta")
    memory.require(8 * 3 * (d + 1) ** 2, "dimension", f"projections of {d} coordinates")
    W_Q = np.vstack([np.eye(d), np.zeros((1, d))])  # (d + 1, d): reads p
    W_V = np.zeros((d + 1, d + 1))
    W_V[d, d] = -step  # v_j = [0, ..., 0, -eta s_j]
    return W_Q, W_Q.copy(), W_V


def linear_attention_layer(tokens, W_Q, W_K, W_V) -> np.ndarray:
    r"""One layer of a linear head on the residual stream; the last row, the query, is no key.

    .. math:: x_i \leftarrow x_i + \frac{1}{N} \sum_{j \le N} (q_i \cdot k_j)\, v_j

    Parameters
    ----------
    tokens : array_like, shape (N + 1, d_model)
    W_Q, W_K : array_like, shape (d_model, d_k) each
    W_V : array_like, shape (d_model, d_model)

    Returns
    -------
    tokens : ndarray, shape (N + 1, d_model)
    """
    stream, W_Q, W_K, W_V = _as_layer(tokens, W_Q, W_K, W_V)
    memory.require_matrix(stream.shape[0], stream.shape[0] - 1, "tokens")
    examples = stream[:-1]  # (N, d_model): the query is no key
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (stream @ W_Q) @ (examples @ W_K).T  # (N + 1, N)
        update = scores @ (examples @ W_V) / len(examples)
        return finite_result(stream + update, _LAYER_OVERFLOW)


#: What :func:`linear_attention_layer` says when its output leaves the double range.
_LAYER_OVERFLOW = "tokens, W_Q, W_K and W_V: the layer's output overflows"


def _as_layer(tokens, W_Q, W_K, W_V):
    """The layer's arguments checked: tokens (N + 1 >= 2, d_model), W_Q and W_K alike, W_V square."""
    X = as_array(tokens, "tokens", ndim=2)
    W_Q, W_K, W_V = (as_array(w, name, ndim=2) for w, name in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    if X.shape[0] < 2 or W_Q.shape[0] != X.shape[1] or W_K.shape != W_Q.shape or W_V.shape != (X.shape[1],) * 2:
        raise ValueError(f"tokens (N + 1 >= 2 rows) and W_Q, W_K, W_V do not fit: {X.shape}, {W_Q.shape}, "
                         f"{W_K.shape}, {W_V.shape}")
    return X, W_Q, W_K, W_V


def linear_stack_prediction(inputs, labels, query, eta, layers):
    r"""``T`` layers of :func:`gd_layer_weights` on the prompt; the prediction is minus the query's label.

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.
    eta : float
        The step size of each layer :math:`\eta > 0`.
    layers : int
        ``T >= 1``, the number of layers.

    Returns
    -------
    prediction : float
        minus the label of the query token after the ``T`` layers.
    tokens : ndarray, shape (N + 1, d + 1)
        The residual stream after them: the examples' labels are their residuals.
    """
    stream = prompt_tokens(inputs, labels, query)  # (N + 1, d + 1)
    projections = gd_layer_weights(stream.shape[1] - 1, eta)
    T = as_count(layers, "layers")
    work.require_work(T * len(stream) * (len(stream) - 1), "layers", f"{T} layers of {len(stream) - 1} keys")
    for _ in range(T):
        with naming("inputs, labels, query, eta and layers", "tokens"):  # the stream overflows
            stream = linear_attention_layer(stream, *projections)
    return float(-stream[-1, -1]), stream


def one_step_prediction(inputs, labels, query, eta) -> float:
    r"""The prediction of one step of gradient descent from :math:`\varphi = 0`.

    .. math:: \hat f(p_{N+1}) = \frac{\eta}{N} \sum_j s_j\, p_j \cdot p_{N+1}

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.
    eta : float
        The step size :math:`\eta > 0`.

    Returns
    -------
    prediction : float
    """
    P, y, p = _as_prompt(inputs, labels, query)
    step = as_positive_scalar(eta, "eta")
    with np.errstate(over="ignore", invalid="ignore"):
        return float(finite_result(step * np.mean(y * (P @ p)), _OVERFLOW))


def gradient_descent(inputs, labels, eta, steps) -> np.ndarray:
    r"""``T`` steps of gradient descent from :math:`\varphi = 0` on the prompt's least-squares loss.

    .. math:: \varphi_{t+1} = \varphi_t - \frac{\eta}{N} \sum_j (p_j \cdot \varphi_t - s_j)\, p_j

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    eta : float
        The step size :math:`\eta > 0`.
    steps : int
        ``T >= 1``, the number of steps.

    Returns
    -------
    weights : ndarray, shape (T + 1, d)
        :math:`\varphi_0 = 0, \varphi_1, \dots, \varphi_T`, one per row.
    """
    P, y = _as_examples(inputs, labels)
    step, T = as_positive_scalar(eta, "eta"), as_count(steps, "steps")
    memory.require(8 * (T + 1) * P.shape[1], "steps", f"{T} steps of {P.shape[1]} weights")
    phi = np.zeros((T + 1, P.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            gradient = (P @ phi[t] - y) @ P / len(y)  # (d,)
            phi[t + 1] = phi[t] - step * gradient
        return finite_result(phi, "inputs, labels and eta: gradient descent overflows")


def step_factors(inputs, eta) -> np.ndarray:
    r"""What one step of gradient descent multiplies the distance to least squares by, along each direction.

    The loss :math:`L(\varphi)` is quadratic, its curvature :math:`\frac1N \sum_j p_j^\top p_j` (d, d). Along
    an eigenvector of that matrix, of eigenvalue ``lam``, a step multiplies the component of
    :math:`\varphi_t - \hat\varphi` along it (:math:`\hat\varphi` a least-squares solution) by
    ``1 - eta * lam``: the steps converge along it if that lies in ``(-1, 1)``, that is
    ``0 < lam < 2 / eta``; along a direction of ``lam = 0`` (one the inputs do not span, when N < d) the
    factor is 1 and the steps leave that component unchanged; below ``-1`` each step overshoots by more than
    it corrects, and the component grows in size and flips sign at every step.

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    eta : float
        The step size :math:`\eta > 0`.

    Returns
    -------
    factors : ndarray, shape (d,)
        ``1 - eta * lam`` for each eigenvalue ``lam``, the smallest eigenvalue first.
    """
    P = as_array(inputs, "inputs", ndim=2)
    if 0 in P.shape:
        raise ValueError(f"inputs must hold at least one example of at least one coordinate, got shape {P.shape}")
    step = as_positive_scalar(eta, "eta")
    memory.require(8 * 2 * P.shape[1] ** 2, "inputs", f"the curvature of {P.shape[1]} coordinates")
    scale = max(np.abs(P).max(), np.finfo(float).tiny)  # scaled so that P^T P cannot overflow
    with np.errstate(over="ignore", invalid="ignore"):
        curvature = (P / scale).T @ (P / scale) / len(P)  # (d, d), over scale**2
        return finite_result(1 - step * scale**2 * np.linalg.eigvalsh(curvature), "inputs and eta: a factor overflows")


def least_squares_prediction(inputs, labels, query) -> float:
    r"""Least squares' prediction :math:`p_{N+1} \cdot \hat\varphi` (the shortest :math:`\hat\varphi` if ``N < d``).

    Parameters
    ----------
    inputs : array_like, shape (N, d)
        The examples' inputs :math:`p_j`, one per row.
    labels : array_like, shape (N,)
        Their labels :math:`s_j`.
    query : array_like, shape (d,)
        The query's input :math:`p_{N+1}`.

    Returns
    -------
    prediction : float
    """
    P, y, p = _as_prompt(inputs, labels, query)
    scale = max(np.abs(P).max(), np.finfo(float).tiny)  # scaled so that P^T P cannot overflow
    with np.errstate(over="ignore", invalid="ignore"):
        phi = np.linalg.lstsq(P / scale, y, rcond=None)[0] / scale  # (d,)
        return float(finite_result(phi @ p, _OVERFLOW))
