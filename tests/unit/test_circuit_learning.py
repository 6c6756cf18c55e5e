"""selfattention.circuit_learning and training.fit_circuit: the two-layer model's loss, its gradient, training.

The loss is checked against its definition written with loops; the
hand-derived gradient against central finite differences and against an
independent reference: complex-step differentiation of that loop-written
loss, :math:`\\partial L / \\partial \\theta = \\operatorname{Im} L(\\theta + i h) / h`,
which needs no derivation and has no cancellation (``h = 1e-30``), so it is
exact to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfattention import circuit_learning as cl
from selfattention import induction, memory, tokens, training
from tools.measure import peak_bytes


def loss_by_loops(weights, sequences, vocabulary):
    """The next-token cross-entropy of layers of causal heads, one row at a time; complex-step safe."""
    total, count = 0.0, 0
    for ids in sequences:
        N = len(ids) + 1
        X = []
        for i in range(N):  # the stream, from its definition
            row = [0.0] * (3 * vocabulary + 3)
            if i:
                row[ids[i - 1]] = 1.0
            p = i / (N - 1) - 0.5
            row[vocabulary:vocabulary + 3] = [p, p * p, 1.0]
            X.append(np.array(row, dtype=complex))
        for W_Q, W_K, W_V, W_O in weights:
            new = []
            for i in range(N):
                e = np.array([(X[i] @ W_Q) @ (X[j] @ W_K) for j in range(i + 1)])
                a = np.exp(e - e.real.max())
                a = a / a.sum()
                new.append(X[i] + sum(a[j] * (X[j] @ W_V) for j in range(i + 1)) @ W_O)
            X = new
        for i in range(N - 1):
            s = X[i][2 * vocabulary + 3:]
            total += np.log(np.exp(s - s.real.max()).sum()) + s.real.max() - s[ids[i]]
            count += 1
    return total / count


def complex_step_gradient(weights, sequences, vocabulary, h=1e-30):
    grads = []
    for k, layer in enumerate(weights):
        layer_grads = []
        for m, W in enumerate(layer):
            g = np.zeros(W.shape)
            for index in np.ndindex(W.shape):
                shifted = [[w.astype(complex) for w in lay] for lay in weights]
                shifted[k][m][index] += 1j * h
                g[index] = loss_by_loops(shifted, sequences, vocabulary).imag / h
            layer_grads.append(g)
        grads.append(layer_grads)
    return grads


@st.composite
def problems(draw):
    """Small random circuits: 1 to 3 symbols, 1 or 2 layers, heads of width 1 to 3, 1 to 3 sequences."""
    vocabulary, layers, d_head = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3))
    d = 3 * vocabulary + 3
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    scale = draw(st.sampled_from([0.3, 1.0, 2.0]))
    weights = [tuple(scale * rng.standard_normal(s) for s in ((d, d_head),) * 3 + ((d_head, d),))
               for _ in range(layers)]
    sequences = rng.integers(0, vocabulary, size=(draw(st.integers(1, 3)), draw(st.integers(1, 5))))
    return weights, sequences, vocabulary


def scale_of(grads):
    return max(1.0, max(np.abs(g).max() for layer in grads for g in layer))


@settings(max_examples=25, deadline=None)
@given(problems())
def test_loss_is_its_definition_and_the_gradient_is_the_complex_step_reference(problem):
    weights, sequences, vocabulary = problem
    loss, grads = cl.circuit_loss_and_grad(weights, sequences, vocabulary)
    reference = complex_step_gradient(weights, sequences, vocabulary)
    # Both are exact to rounding: the scores, at most a few tens here, round some 100 times through two
    # layers of sums of products (a loose bound on the two orders of summation); 1e-10 of the largest
    # gradient entry covers it with room to spare (measured: below 2e-13).
    assert abs(loss - loss_by_loops(weights, sequences, vocabulary).real) <= 1e-10 * max(1.0, loss)
    atol = 1e-10 * scale_of(reference)
    for ours, theirs in zip(grads, reference, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=atol)


@settings(max_examples=10, deadline=None)
@given(problems())
def test_the_gradient_matches_central_finite_differences(problem):
    weights, sequences, vocabulary = problem
    _, grads = cl.circuit_loss_and_grad(weights, sequences, vocabulary)
    numerical = cl.numerical_circuit_gradient(weights, sequences, vocabulary, step=1e-6)
    # Central differences err by step**2 |L'''| / 6 plus the loss's rounding over the step (eps L / 1e-6,
    # some 1e-10): 1e-6 of the gradient's scale, as for chapter 8's head (measured: below 1e-8).
    atol = 1e-6 * scale_of(numerical)
    for ours, theirs in zip(grads, numerical, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=atol)


def test_the_hand_built_circuit_is_one_setting_of_the_learned_models_weights():
    """Its layers, as projections at temperature 1, give the same loss through either forward pass."""
    seqs = tokens.repeated_sequences(3, 3, 4, rng=2)
    layers = induction.hand_built_circuit(4, 7)
    weights = cl.projections(layers)
    loss, _ = cl.circuit_loss_and_grad(weights, seqs, 4)
    # Scores up to 8 (N - 1)**2 = 288 once scaled: 1e-10 relative covers their rounding in two orders.
    assert loss == pytest.approx(loss_by_loops(weights, seqs, 4).real, rel=1e-10)
    relearned = cl.as_layers(weights, 4)
    for ids in seqs:
        np.testing.assert_array_equal(induction.run_circuit(ids, relearned).predicted,
                                      induction.run_circuit(ids, layers).predicted)


def test_training_is_deterministic_and_learns_to_copy_a_repeat():
    rng = np.random.default_rng(11)
    batches = np.stack([tokens.periodic_sequences(16, 8, [3, 4], 5, rng=rng) for _ in range(150)])
    fit = training.fit_circuit(batches, 5, rng=3, checkpoints=(0, 150))
    again = training.fit_circuit(batches, 5, rng=3)
    for a, b in zip(fit.weights, again.weights, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    assert fit.losses.shape == (150,) and fit.losses[:10].mean() > fit.losses[-10:].mean() + 0.3
    test = tokens.repeated_sequences(400, 4, 5, rng=5)
    predicted, _ = cl.circuit_forward(fit.weights, test, 5)
    start, _ = cl.circuit_forward(fit.checkpoints[0], test, 5)
    repeat = slice(5, 8)
    # Chance is 1 in 5 (a little more once the symbols seen are favoured); the trained circuit copies.
    assert (predicted[:, repeat] == test[:, repeat]).mean() > 0.6 > (start[:, repeat] == test[:, repeat]).mean()


def test_circuit_forward_knocks_layers_out():
    seqs = tokens.repeated_sequences(200, 4, 26, rng=1)
    weights = cl.projections(induction.hand_built_circuit(26, 9))
    intact, A = cl.circuit_forward(weights, seqs, 26)
    ablated, A0 = cl.circuit_forward(weights, seqs, 26, knocked_out=[0])
    np.testing.assert_array_equal(A[0], A0[0])
    assert (intact[:, 5:8] == seqs[:, 5:8]).mean() > 0.8 > (ablated[:, 5:8] == seqs[:, 5:8]).mean()


D = 3 * 2 + 3
GOOD = [(np.ones((D, 2)), np.ones((D, 2)), np.ones((D, 2)), np.ones((2, D)))]


@pytest.mark.parametrize(("step", "message"), [(5e-324, "step must be at least 1.49e-08"),
                                               (1e-12, "step must be at least 1.49e-08"),
                                               (1.01, "step must be at most 1 "), (1e308, "step must be at most 1 ")])
def test_a_step_the_central_difference_cannot_resolve_is_refused_by_name(step, message):
    """5e-324 and 1e308 gave a gradient of zeros (its largest entry is 0.025 at a step of 1e-6).

    The entries of ``GOOD`` are ones, so the bounds are sqrt(2**-52) = 1.49e-8 and 1.
    """
    with pytest.raises(ValueError, match=message):
        cl.numerical_circuit_gradient(GOOD, [[0, 1]], 2, step=step)


def test_the_steps_at_the_bounds_are_accepted_and_the_bounds_scale_with_the_entries():
    low = np.sqrt(2.0**-52)
    for step in (low, 1.0):
        cl.numerical_circuit_gradient(GOOD, [[0, 1]], 2, step=step)
    with pytest.raises(ValueError, match=r"step must be at least 1\.49e-07"):
        cl.numerical_circuit_gradient([tuple(10 * w for w in GOOD[0])], [[0, 1]], 2, step=2 * low)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cl.circuit_loss_and_grad(GOOD, [[0, 2]], 2), r"sequences must lie in \[0, 2\)"),
        (lambda: cl.circuit_loss_and_grad(GOOD, [0, 1], 2), "sequences must be a non-empty 2-D"),
        (lambda: cl.circuit_loss_and_grad(GOOD, [[0, 1]], 3), r"weights must have shapes \(12, d_k\)"),
        (lambda: cl.circuit_loss_and_grad([], [[0, 1]], 2), "weights must hold at least one layer"),
        (lambda: cl.circuit_loss_and_grad([GOOD[0][:3]], [[0, 1]], 2), "weights must hold layers of four"),
        (lambda: cl.circuit_loss_and_grad([tuple(1e200 * w for w in GOOD[0])], [[0, 1]], 2), "weights: the circuit"),
        (lambda: cl.circuit_backprop(GOOD, 1e308 * tokens.residual_stream([[0, 1]], 2), [[1, 0]]),
         "weights or X: the circuit"),
        (lambda: cl.numerical_circuit_gradient(GOOD, [[0, 1]], 2, step=0.0), "step must be positive"),
        (lambda: cl.circuit_forward(GOOD, [[0, 1]], 2, knocked_out=[1]), "knocked_out must be at most 0"),
        (lambda: training.fit_circuit(np.zeros((2, 3)), 2), "batches must be a non-empty 3-D"),
        (lambda: training.fit_circuit(np.zeros((2, 3, 4), int), 2, learning_rate=-1.0), "learning_rate"),
        (lambda: training.fit_circuit(np.zeros((2, 3, 4), int), 2, d_head=0), "d_head must be at least 1"),
        (lambda: training.fit_circuit(np.zeros((2, 3, 4), int), 2, d_head=2**60), "d_head"),
        (lambda: training.fit_circuit(np.zeros((2, 3, 4), int), 2, learning_rate=1e300), "learning_rate"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_circuit_too_deep_for_the_memory_limit_is_refused_before_it_allocates():
    """``layers=10**6`` ran 90 s to a peak of 6.3 GiB, over the 4 GiB limit, then blamed init_scale or learning_rate.

    The same at a limit of 32 MiB: 5,000 layers would peak near 55 MB (about 11 KiB a layer).
    """
    batches = tokens.random_sequences(4, 4, 3, rng=1).reshape(2, 2, 4)
    caught = []

    def refuse():
        with pytest.raises(ValueError) as error:
            training.fit_circuit(batches, 3, layers=5000, d_head=2, rng=1)
        caught.append(str(error.value))

    with memory.limit(2**25):
        peak = peak_bytes(refuse)
    assert caught[0].startswith("batches, layers and d_head: 5000 layers"), caught[0]
    assert peak < 2**22, f"allocated {peak} bytes before refusing"  # 5,000 layers: some 55 MB


@pytest.mark.parametrize(("vocabulary", "count", "n", "layers", "d_head"),
                         [(3, 2, 4, 500, 2), (3, 2, 4, 500, 8), (10, 4, 30, 50, 4)])
def test_the_memory_budget_of_training_a_circuit_bounds_its_measured_peak(vocabulary, count, n, layers, d_head):
    """Refused at a limit of its own measured peak (the budget is above it), run at three times it (not far above)."""
    batches = tokens.random_sequences(2 * count, n, vocabulary, rng=1).reshape(2, count, n)

    def fit():
        training.fit_circuit(batches, vocabulary, layers=layers, d_head=d_head, rng=1)

    peak = peak_bytes(fit)
    with memory.limit(peak), pytest.raises(ValueError, match=r"^batches, layers and d_head: "):
        fit()
    with memory.limit(3 * peak):
        fit()
