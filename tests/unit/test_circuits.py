"""The circuits view: QK and OV circuits, composition scores, the stream's paths and ablations."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import circuit_learning as cl
from selfattention import circuit_paths as paths
from selfattention import circuits, induction, tokens

V, HALF = 5, 4
HAND = cl.projections(induction.hand_built_circuit(V, 2 * HALF + 1))
SEQS = tokens.repeated_sequences(50, HALF, V, rng=3)


def _random_circuit(seed):
    rng = np.random.default_rng(seed)
    d = tokens.Stream(V).d_model
    return [tuple(rng.standard_normal(s) for s in [(d, 3), (d, 3), (d, 3), (3, d)]) for _ in range(2)]


def test_the_hand_built_induction_head_copies_and_matches_the_previous_symbol():
    assert np.array_equal(circuits.ov_circuit(HAND, 1, V), np.eye(V))
    qk = circuits.qk_circuit(HAND, 1, V, key="previous")
    assert np.allclose(qk, induction.MARGIN * np.eye(V), rtol=1e-12)  # margin / temperature, one rounding
    assert not circuits.qk_circuit(HAND, 1, V).any()  # its keys read nothing of the token subspace
    assert circuits.copying_score(np.eye(V)) == pytest.approx(1.0, abs=1e-12)
    assert circuits.copying_score(-np.eye(V)) == pytest.approx(-1.0, abs=1e-12)


def test_the_hand_built_pair_composes_through_the_keys_alone():
    scores = circuits.composition_scores(HAND, V)
    assert scores["Q"] == 0.0 and scores["V"] == 0.0
    assert scores["K"] == pytest.approx(1 / np.sqrt(V), rel=1e-12)  # a few roundings of norms


def test_composition_scores_are_unchanged_by_scale_and_below_one():
    W = _random_circuit(1)
    scaled = [tuple(3.0 * w for w in layer) for layer in W]
    a, b = circuits.composition_scores(W, V), circuits.composition_scores(scaled, V)
    for kind in "QKV":
        assert 0 < a[kind] < 1
        assert a[kind] == pytest.approx(b[kind], rel=1e-12)  # powers of 3 cancel up to rounding
    base = circuits.composition_baseline(V, 3, 5, rng=2)
    assert set(base) == {"Q", "K", "V"} and all(0 < v < 1 for v in base.values())


@pytest.mark.parametrize("weights", [HAND, _random_circuit(4)], ids=["hand", "random"])
def test_the_four_paths_sum_to_the_run_s_prediction(weights):
    split = paths.path_logits(weights, SEQS, V)
    total = paths.ablated_scores(weights, SEQS, V, "none")
    assert list(split) == list(paths.PATHS)
    scale = max(np.abs(total).max(), 1.0)
    assert np.allclose(sum(split.values()), total, rtol=0, atol=1e-12 * scale)  # regrouped products


def test_the_hand_built_circuit_s_prediction_comes_through_layer_2_alone():
    split = paths.path_logits(HAND, SEQS, V)
    assert not split["direct"].any() and not split["layer 1"].any() and not split["layer 1 then 2"].any()


def test_ablations_of_the_hand_built_circuit():
    acc = {how: paths.repeat_accuracy(paths.ablated_scores(HAND, SEQS, V, how), SEQS, HALF)
           for how in paths.ABLATIONS}
    expected = cl.circuit_forward(HAND, SEQS, V)[0]
    rows = np.arange(HALF + 1, 2 * HALF)
    assert acc["none"] == (expected[:, rows] == SEQS[:, rows]).mean()
    assert acc["queries-values"] == acc["none"] > acc["keys"]
    knocked = cl.circuit_forward(HAND, SEQS, V, knocked_out=[0])[0]
    assert acc["zero"] == (knocked[:, rows] == SEQS[:, rows]).mean()


def test_a_mean_ablation_keeps_the_layer_s_mean_output():
    W = _random_circuit(5)
    one = SEQS[:1]
    assert np.allclose(paths.ablated_scores(W, one, V, "mean"), paths.ablated_scores(W, one, V, "none"),
                       rtol=0, atol=1e-12)  # the mean of one sequence is itself


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="ablation"):
        paths.ablated_scores(HAND, SEQS, V, "half")
    with pytest.raises(ValueError, match="key"):
        circuits.qk_circuit(HAND, 1, V, key="position")
    with pytest.raises(ValueError, match="weights"):
        circuits.composition_scores(HAND[:1], V)
    with pytest.raises(ValueError, match="matrix"):
        circuits.copying_score(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="scores"):
        paths.repeat_accuracy(np.zeros((50, 3, V)), SEQS, HALF)
