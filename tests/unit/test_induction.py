"""selfattention.induction: the hand-built previous-token and induction heads, run on the residual stream."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tolerances import EPS, assert_close, rounding, softmax_rtol, square_scores_error

from selfattention import circuit_learning, induction, memory, tokens
from selfattention.head import gaussian_head_weights
from selfattention.induction import Layer, hand_built_circuit, run_circuit
from selfattention.multihead import Head
from selfattention.tokens import Stream

V = 5
sequences = st.lists(st.integers(0, V - 1), min_size=1, max_size=10)


def test_the_previous_token_head_is_the_offset_head_on_the_position_rows():
    for N in (2, 9, 65):
        layer = induction.previous_token_layer(V, N)
        W_Q, W_K, _ = gaussian_head_weights(offset=-1 / (N - 1))
        s = Stream(V)
        np.testing.assert_array_equal(layer.head.W_Q[s.position], W_Q[1:])
        np.testing.assert_array_equal(layer.head.W_K[s.position], W_K[1:])
        others = np.ones(s.d_model, bool)
        others[s.position] = False
        assert not layer.head.W_Q[others].any() and not layer.head.W_K[others].any()
        assert layer.head.temperature == (1 / (N - 1)) ** 2 / induction.MARGIN


@settings(max_examples=30, deadline=None)
@given(sequences, st.floats(0.5, 20.0))
def test_layer_one_scores_distances_one_row_back(ids, margin):
    """Scaled scores -(p_i + delta - p_j)**2 / tau = -margin (i - 1 - j)**2: in rows, the offset head one row back."""
    N = len(ids) + 1
    layer = induction.previous_token_layer(V, N, margin)
    X = tokens.residual_stream(ids, V)
    scaled = (X @ layer.head.W_Q) @ (X @ layer.head.W_K).T / layer.head.temperature  # (N, N)
    i, j = np.indices((N, N))
    # The expanded square rounds on P = 1/2 + 1/(N-1) (positions and offset), and so does the row-count form.
    atol = square_scores_error(0.5 + 1 / (N - 1), layer.head.temperature) + rounding(4, margin * N**2)
    expected = -margin * (i - 1 - j) ** 2.0
    assert_close(scaled - scaled.max(axis=1, keepdims=True),
                 expected - expected.max(axis=1, keepdims=True), 2 * atol)


@settings(max_examples=30, deadline=None)
@given(sequences)
def test_layer_one_writes_the_previous_symbol_into_its_own_subspace(ids):
    X = tokens.residual_stream(ids, V)
    added, A = induction.previous_token_layer(V, len(ids) + 1)(X)
    s = Stream(V)
    shifted = np.vstack([np.zeros((1, V)), X[:-1, s.token]])  # o_{i-1}; row 0 sees only itself, no symbol
    # Row i writes sum_j a_ij o_j: off from o_{i-1} by at most the weight the row gives elsewhere.
    away = 1 - np.append(1.0, A[np.arange(1, len(X)), np.arange(len(X) - 1)])
    assert_close(added[:, s.previous], shifted, (away + rounding(len(X), 1))[:, None])
    untouched = np.ones(s.d_model, bool)
    untouched[s.previous] = False
    assert not added[:, untouched].any()
    # Every row but the first two has both neighbours of i - 1: weight 1 / (1 + 2 exp(-margin) + ...).
    rows = np.arange(2, len(X))
    expected = 1 / (1 + np.exp(-induction.MARGIN) + np.exp(-4 * induction.MARGIN) * (rows >= 3)
                    + np.exp(-induction.MARGIN))
    # Up to the terms exp(-9 margin) left out (1e-31) and the rounding of the expanded square.
    gap = square_scores_error(0.5 + 1 / (len(X) - 1), (1 / (len(X) - 1)) ** 2 / induction.MARGIN)
    assert_close(A[rows, rows - 1], expected, 1e-30 + softmax_rtol(len(X), gap))


@settings(max_examples=30, deadline=None)
@given(sequences)
def test_layer_two_scores_the_query_symbol_against_the_previous_symbol(ids):
    layers = hand_built_circuit(V, len(ids) + 1)
    run = run_circuit(ids, layers)
    s = Stream(V)
    X1 = run.streams[1]
    head = layers[1].head
    scaled = (X1 @ head.W_Q) @ (X1 @ head.W_K).T / head.temperature
    expected = induction.MARGIN * X1[:, s.token] @ X1[:, s.previous].T  # margin * o_i . prev_j
    assert_close(scaled, expected, rounding(2 * V + 2, induction.MARGIN))
    # and the prediction subspace holds what layer 2 read: sum_j a_ij o_j
    assert_close(run.scores, run.weights[1] @ X1[:, s.token], rounding(2 * len(X1), 1))


def test_the_circuit_predicts_what_followed_the_earlier_occurrence():
    ids = tokens.from_text("qwertyqwerty")
    run = run_circuit(ids, hand_built_circuit(26, 13))
    predicted = tokens.to_text(run.predicted[7:12])
    assert predicted == list("werty")
    assert induction.prefix_matching_score(run.weights[1], 6) > 0.99
    assert induction.previous_token_score(run.weights[0]) > 0.99


def test_knocking_out_layer_one_leaves_layer_two_uniform():
    ids = tokens.from_text("abcabc")
    run = run_circuit(ids, hand_built_circuit(26, 7), knocked_out=[0])
    np.testing.assert_array_equal(run.streams[1], run.streams[0])
    expected = np.tril(np.ones((7, 7))) / np.arange(1, 8)[:, None]
    assert_close(run.weights[1], expected, softmax_rtol(7))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, V - 1), min_size=2, max_size=8), st.integers(1, 4), st.floats(1.0, 12.0))
def test_running_one_sequence_equals_the_batched_forward_pass(ids, count, margin):
    """run_circuit (attention, sequence by sequence) and circuit_forward (a batch at once) agree."""
    batch = np.array([np.roll(ids, k) for k in range(count)])
    layers = hand_built_circuit(V, len(ids) + 1, margin)
    predicted, A = circuit_learning.circuit_forward(circuit_learning.projections(layers), batch, V)
    N = len(ids) + 1
    # Layer 1: tau divides the scores or W_Q (2 more roundings on the scaled scores' scale); layer 2 reads
    # previous symbols that differ by layer 1's weights' gap, times the margin.
    gap1 = 2 * square_scores_error(0.5 + 1 / (N - 1), layers[0].head.temperature) + rounding(4, margin * N**2)
    rtol1 = softmax_rtol(N, gap1)
    rtol2 = softmax_rtol(N, margin * rtol1 + rounding(2 * V + 4, margin))
    for k, seq in enumerate(batch):
        run = run_circuit(seq, layers)
        assert_close(A[0, k], run.weights[0], rtol1 * run.weights[0] + EPS)
        assert_close(A[1, k], run.weights[1], rtol2 * run.weights[1] + EPS)
        near_tie = np.sort(run.scores, axis=1)[:, -1] - np.sort(run.scores, axis=1)[:, -2] < 1e-9
        np.testing.assert_array_equal(predicted[k][~near_tie], run.predicted[~near_tie])


def test_scores_of_a_head_by_loops():
    rng = np.random.default_rng(5)
    A = rng.random((3, 9, 9)) * np.tri(9)
    A /= A.sum(axis=-1, keepdims=True)
    previous = np.mean([A[k, i, i - 1] for k in range(3) for i in range(1, 9)])
    prefix = np.mean([A[k, r, r - 4 + 1] for k in range(3) for r in range(5, 9)])
    assert induction.previous_token_score(A) == pytest.approx(previous, abs=rounding(30))
    assert induction.prefix_matching_score(A, 4) == pytest.approx(prefix, abs=rounding(30))


LAYER = induction.induction_layer(V)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: run_circuit([0, 1], [LAYER], knocked_out=[1]), "knocked_out must be at most 0"),
        (lambda: run_circuit([0, 1], [LAYER], knocked_out=3), "knocked_out must be a sequence"),
        (lambda: run_circuit([0, 5], [LAYER]), r"tokens must lie in \[0, 5\)"),
        (lambda: run_circuit([[0, 1, 0, 1]], [LAYER]), r"tokens must be a non-empty 1-D .* got shape \(1, 4\)"),
        (lambda: run_circuit([0, 1], []), "layers must be a non-empty"),
        (lambda: run_circuit([0, 1], [LAYER, induction.induction_layer(4)]), "layers must all read one stream"),
        (lambda: Layer(LAYER.head, np.ones((3, 18))), r"W_O must have shape \(5, 18\)"),
        (lambda: Layer("head", np.ones((5, 18))), "head must be a non-empty sequence of Head"),
        (lambda: induction.previous_token_layer(V, 1), "n_positions must be at least 2"),
        (lambda: induction.previous_token_layer(V, 9, 0.0), "margin must be positive"),
        (lambda: induction.previous_token_layer(V, 9, 1e308), "margin gives the temperature"),
        (lambda: induction.induction_layer(V, 5e-324), "margin gives the temperature"),
        (lambda: induction.prefix_matching_score(np.eye(5), 3), "weights must have 2 half"),
        (lambda: induction.previous_token_score(np.ones((3, 3))), "weights must be attention matrices"),
        (lambda: Head(np.ones((18, 2)), np.ones((18, 2)), np.ones((18, 5)), 1.0)(np.ones((3, 18)), mask=np.ones(3)),
         "mask must be a boolean array"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_too_many_tokens_are_refused_by_name_before_the_run():
    """The streams, the kept weights and one attention: refused naming ``tokens`` (it named ``X: Q and K``)."""
    with memory.limit(2**20), pytest.raises(ValueError, match=r"^tokens: a run of 2 layers on 2001 rows"):
        run_circuit(np.zeros(2000, int), hand_built_circuit(V, 9))


def test_the_previous_token_score_counts_rows_from_the_first_token():
    """Rows i >= 1, as its docstring says: row 1 gives its weight to the start marker's row 0."""
    N = 7
    A = np.eye(N)[np.r_[0, np.arange(N - 1)]]  # every row i >= 1 on row i - 1
    assert induction.previous_token_score(A) == 1.0
    A[1] = np.eye(N)[1]  # row 1 on itself instead of the start marker
    assert induction.previous_token_score(A) == pytest.approx((N - 2) / (N - 1), rel=1e-15)
