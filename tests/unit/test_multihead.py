"""Multi-head attention: heads side by side, times the output projection (selfattention.multihead).

The reference is written here from the equations of Vaswani et al. (2017),
section 3.2.2, with no code of the package:

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),
    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V,

with Q = K = V = X (self-attention). The paper's heads divide by sqrt(d_k);
a head here divides by its temperature, so the reference takes a divisor per
head (sqrt(d_k) when the test gives none). Torch is not used: see
``test_the_reference_is_the_papers_formula`` for why a numpy reference is
the independent one here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tolerances import average_atol, half_spread, rounding, softmax_rtol, square_scores_error

import selfattention as sa
from selfattention.multihead import (
    Head,
    curvature_layer,
    derivative_layer,
    head_outputs,
    jackknife_layer,
    layer_weights,
    multi_head,
    offset_head,
    signal_tokens,
)

#: Every result here is a handful of weighted sums of O(1) numbers, each weight from one
#: exp and one division: the two implementations differ by rounding, a few eps of the
#: values' size. 1e-12 leaves a factor of about 50 on that for entries up to 10.
ATOL = 1e-12


def paper_multi_head(X, projections, W_O, divisors=None):
    """MultiHead(X, X, X) of the paper, in plain numpy: one softmax per head, written out."""
    outputs = []
    for k, (W_q, W_k, W_v) in enumerate(projections):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        divisor = np.sqrt(W_q.shape[1]) if divisors is None else divisors[k]
        scores = Q @ K.T / divisor
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        outputs.append((e / e.sum(axis=1, keepdims=True)) @ V)
    return np.hstack(outputs) @ W_O


@st.composite
def layers(draw):
    """Tokens X (n, d_model), M random heads (d_k, d_v of their own) and a W_O that fits."""
    n, d_model, m = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    entries = st.floats(-2.0, 2.0, allow_nan=False)
    X = draw(hnp.arrays(np.float64, (n, d_model), elements=entries))
    projections, divisors = [], []
    for _ in range(m):
        d_k, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        projections.append(tuple(draw(hnp.arrays(np.float64, (d_model, d), elements=entries))
                                 for d in (d_k, d_k, d_v)))
        divisors.append(draw(st.floats(0.1, 10.0)))
    d_out = draw(st.integers(1, 3))
    W_O = draw(hnp.arrays(np.float64, (sum(p[2].shape[1] for p in projections), d_out), elements=entries))
    return X, projections, divisors, W_O


@given(layers())
def test_multi_head_is_the_papers_formula(layer):
    X, projections, divisors, W_O = layer
    heads = [Head(*p, temperature=t) for p, t in zip(projections, divisors, strict=True)]
    np.testing.assert_allclose(multi_head(X, heads, W_O), paper_multi_head(X, projections, W_O, divisors),
                               rtol=0, atol=ATOL * max(1.0, np.abs(W_O).sum()))


def test_the_reference_is_the_papers_formula():
    """The reference's default divisor is the paper's sqrt(d_k); with one head and W_O = I it is attention."""
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(5, 4)), [rng.normal(size=(4, 3)) for _ in range(3)]
    got = paper_multi_head(X, [tuple(W)], np.eye(3))
    want, _ = sa.attention(X @ W[0], X @ W[1], X @ W[2])  # divides by sqrt(d_k) by default
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@given(layers(), st.data())
def test_an_output_projection_that_selects_one_head_returns_that_head(layer, data):
    X, projections, divisors, _ = layer
    heads = [Head(*p, temperature=t) for p, t in zip(projections, divisors, strict=True)]
    k = data.draw(st.integers(0, len(heads) - 1))
    widths = [h.d_v for h in heads]
    start = sum(widths[:k])
    W_O = np.zeros((sum(widths), widths[k]))
    W_O[start:start + widths[k]] = np.eye(widths[k])
    np.testing.assert_array_equal(multi_head(X, heads, W_O), heads[k](X)[0])


def test_head_outputs_are_side_by_side_in_order():
    X = signal_tokens(np.sin(np.linspace(0, 3, 12)), np.linspace(0, 1, 12))
    heads = [offset_head(0.1, 0.01), offset_head(-0.2, 0.05), offset_head(0.0, 0.003)]
    concat = head_outputs(X, heads)
    assert concat.shape == (12, 3)
    for k, head in enumerate(heads):
        np.testing.assert_array_equal(concat[:, k], head(X)[0][:, 0])


@given(st.integers(3, 40), st.integers(-8, 8), st.floats(1e-3, 0.5))
def test_a_head_at_an_offset_of_k_steps_is_the_centred_head_k_rows_on(n, k, tau):
    """On an evenly spaced grid, row i at offset k steps is row i + k of the head at 0: the same keys, relabelled."""
    p = np.linspace(0.0, 1.0, n)
    step = p[1] - p[0]
    _, shifted = sa.gaussian_head(np.zeros(n), p, tau, offset=k * step)
    _, centred = sa.gaussian_head(np.zeros(n), p, tau)
    rows = np.arange(n)
    inside = (rows + k >= 0) & (rows + k < n)
    # Scores -(p_i + k step - p_j)^2 and -(p_{i+k} - p_j)^2 differ by rounding of O(eps) only; divided by
    # tau >= 1e-3 that moves a weight by at most a few 1e-13.
    np.testing.assert_allclose(shifted[rows[inside]], centred[rows[inside] + k], rtol=0, atol=1e-11)


def test_the_offset_head_is_gaussian_head_at_that_offset():
    p = np.linspace(0.0, 1.0, 30)
    s = np.cos(5 * p)
    for delta in (-0.3, 0.0, 0.07, 0.5):
        head = offset_head(delta, 0.004)
        out, w = head(signal_tokens(s, p))
        want_out, want_w = sa.gaussian_head(s, p, 0.004, offset=delta)
        np.testing.assert_array_equal(w, want_w)
        np.testing.assert_array_equal(out[:, 0], want_out)


@given(st.integers(2, 40), st.floats(1e-3, 0.3), st.floats(1e-3, 0.5))
def test_the_derivative_layers_rows_sum_to_zero(n, tau, delta):
    heads, W_O = derivative_layer(delta, tau)
    B = layer_weights(signal_tokens(np.zeros(n), np.linspace(0, 1, n)), heads, W_O)
    # Each head's row sums to 1 to a few eps; the difference is divided by 2 delta >= 2e-3.
    np.testing.assert_allclose(B.sum(axis=1), 0.0, rtol=0, atol=1e-12 / delta)


@given(st.integers(2, 40), st.floats(1e-3, 0.3), st.floats(1e-3, 0.5))
def test_the_curvature_layers_rows_sum_to_zero(n, tau, delta):
    heads, W_O = curvature_layer(delta, tau)
    assert [head.W_Q[3, 0] for head in heads] == [-np.sqrt(2) * delta, 0.0, np.sqrt(2) * delta]  # -delta, 0, +delta
    B = layer_weights(signal_tokens(np.zeros(n), np.linspace(0, 1, n)), heads, W_O)
    # Each head's weights round within softmax_rtol(n) of 1 in all; W_O's entries add up to 4 / delta**2 in size,
    # and adding the three heads and summing the row round n + 3 times more on that size.
    np.testing.assert_allclose(B.sum(axis=1), 0.0, rtol=0, atol=4 / delta**2 * (softmax_rtol(n) + rounding(n + 3)))


def test_the_curvature_layer_gives_a_parabolas_second_derivative_where_its_bands_lie_inside():
    """On f = p**2 a band centred on c of variance h**2 averages c**2 + h**2: the second difference is 2, exactly."""
    p = np.linspace(0, 1, 2001)
    delta, tau = 0.05, 2e-4  # h = 0.01: every band of the queries in [0.2, 0.8] lies 10 h inside the signal
    heads, W_O = curvature_layer(delta, tau)
    np.testing.assert_array_equal(W_O[:, 0], np.array([1.0, -2.0, 1.0]) / delta / delta)
    output = multi_head(signal_tokens(p**2, p), heads, W_O)[:, 0]
    inside = (p >= 0.2) & (p <= 0.8)
    # Each head averages values up to 1 with weights whose scores round within square_scores_error; W_O's
    # entries add up to 4 / delta**2 in size.
    atol = 4 / delta**2 * average_atol(p.size, 1.0, square_scores_error(half_spread(p, delta), tau))
    np.testing.assert_allclose(output[inside], 2.0, rtol=0, atol=atol)
    line = layer_weights(signal_tokens(p, p), heads, W_O) @ p  # a line has no curvature
    np.testing.assert_allclose(line[inside], 0.0, rtol=0, atol=atol)


@given(st.integers(2, 40), st.floats(1e-3, 0.3), st.floats(1.05, 4.0))
def test_the_two_temperature_layers_weights_sum_to_one(n, tau, rho):
    heads, W_O = jackknife_layer(tau, rho)
    assert W_O.sum() == pytest.approx(1.0, abs=1e-15)
    B = layer_weights(signal_tokens(np.zeros(n), np.linspace(0, 1, n)), heads, W_O)
    # The entries of W_O are at most rho**2 / (rho**2 - 1) < 10 in size: the sum is 1 to 10 times a few eps.
    np.testing.assert_allclose(B.sum(axis=1), 1.0, rtol=0, atol=1e-13)


def test_the_two_temperature_layer_has_negative_weights_and_one_head_has_none():
    p = np.linspace(0.0, 1.0, 100)
    X = signal_tokens(np.zeros(100), p)
    B = layer_weights(X, *jackknife_layer(0.005, np.sqrt(2)))
    assert (B < -1e-3).any()
    assert (offset_head(0.0, 0.005)(X)[1] >= 0).all()


def test_layer_weights_apply_to_the_signal_as_the_layer_does():
    p = np.linspace(0.0, 1.0, 25)
    s = np.sin(2 * np.pi * p) + 0.1 * np.cos(17 * p)
    X = signal_tokens(s, p)
    for heads, W_O in (derivative_layer(0.1, 0.004), jackknife_layer(0.01, 1.5)):
        np.testing.assert_allclose(layer_weights(X, heads, W_O) @ s, multi_head(X, heads, W_O)[:, 0],
                                   rtol=0, atol=ATOL * np.abs(W_O).sum())


def test_a_head_is_frozen_and_keeps_its_own_copies():
    W = np.eye(2)
    head = Head(W, W, W[:, :1], 0.5)
    W[0, 0] = 7.0
    assert head.W_Q[0, 0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        head.W_Q[0, 0] = 3.0
    with pytest.raises(AttributeError):
        head.temperature = 2.0  # frozen dataclass
    assert head == head and head != Head(W, W, W[:, :1], 0.5) and len({head, head}) == 1  # by identity


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: Head(np.ones((4, 3)), np.ones((4, 2)), np.ones((4, 1)), 0.1), "W_Q, W_K and W_V must have shapes"),
        (lambda: Head(np.ones((4, 3)), np.ones((4, 3)), np.ones((3, 1)), 0.1), "W_Q, W_K and W_V must have shapes"),
        (lambda: Head(np.ones((4, 0)), np.ones((4, 0)), np.ones((4, 1)), 0.1), "none of them empty"),
        (lambda: Head(np.ones((4, 3)), np.ones((4, 3)), np.ones((4, 1)), 0.0), "temperature must be positive"),
        # A subnormal temperature, as offset_head and the layers refuse it (5e-324 was accepted before).
        (lambda: Head(np.ones((4, 3)), np.ones((4, 3)), np.ones((4, 1)), 5e-324), "temperature must be at least"),
        (lambda: offset_head(np.nan, 0.1), "offset must be finite"),
        (lambda: offset_head(np.inf, 0.1), "offset must be finite"),
        (lambda: multi_head(np.ones((3, 4)), [offset_head(0, 1.0)], np.ones((2, 1))), "W_O must have 1 rows"),
        (lambda: multi_head(np.ones((3, 4)), [offset_head(0, 1.0)], np.ones((1, 0))), "W_O must have 1 rows"),
        (lambda: multi_head(np.ones((3, 4)), [offset_head(0, 1.0)], np.ones(1)), "W_O must be 2-dimensional"),
        (lambda: multi_head(np.ones((3, 5)), [offset_head(0, 1.0)], np.ones((1, 1))), r"X must have shape \(n, 4\)"),
        (lambda: multi_head(np.ones((3, 4)), [], np.ones((1, 1))), "heads must be a non-empty sequence"),
        (lambda: multi_head(np.ones((3, 4)), offset_head(0, 1.0), np.ones((1, 1))), "heads must be a sequence"),
        (lambda: multi_head(np.ones((3, 4)), [offset_head(0, 1.0), Head(np.eye(3), np.eye(3), np.eye(3), 1.0)],
                            np.ones((4, 1))), "heads must all read tokens of one width"),
        (lambda: layer_weights(np.ones((3, 3)), [Head(np.eye(3), np.eye(3), np.eye(3), 1.0)], np.ones((3, 1))),
         "heads must all have d_v = 1"),
        (lambda: layer_weights(np.ones((3, 4)), [offset_head(0, 1.0)], np.ones((1, 2))), "W_O must have one column"),
        (lambda: derivative_layer(0.0, 0.1), "offset must be positive"),
        (lambda: derivative_layer(-0.1, 0.1), "offset must not be negative"),
        (lambda: curvature_layer(0.0, 0.1), "offset must be positive"),
        (lambda: curvature_layer(1e-160, 0.1), "offset: 2 / offset"),
        (lambda: jackknife_layer(0.1, 1.0), "ratio must be greater than 1"),
        (lambda: jackknife_layer(0.1, 1e200), "ratio must be greater than 1"),
        (lambda: jackknife_layer(1e300, 1e5), "temperature times ratio"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
