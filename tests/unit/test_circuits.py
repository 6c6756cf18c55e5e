"""The circuits view: QK and OV circuits, composition scores, the stream's paths and ablations."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import circuit_learning as cl
from selfattention import circuit_paths as paths
from selfattention import circuits, induction, tokens
from selfattention.studies import circuits as sc

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


def test_the_diagonal_summary_of_a_known_matrix():
    M = np.array([[3.0, -1.0, 0.0], [2.0, 1.0, 5.0], [0.0, 0.0, 4.0]])
    summary = circuits.diagonal_summary(M)
    assert summary["diagonal"] == pytest.approx(8 / 3, rel=1e-15)  # one rounding of a sum of small integers
    assert summary["off"] == 1.0 and summary["off_abs"] == pytest.approx(8 / 6, rel=1e-15)
    assert summary["argmax"] == 2  # rows 0 and 2; row 1 is largest off it
    assert circuits.diagonal_summary(circuits.ov_circuit(HAND, 1, V)) == {"diagonal": 1.0, "off": 0.0,
                                                                          "off_abs": 0.0, "argmax": V}
    huge = circuits.diagonal_summary(np.full((2, 2), 1e308))
    assert huge["diagonal"] == huge["off_abs"] == 1e308  # the means do not overflow


def test_the_hand_built_first_layer_writes_only_into_the_previous_subspace():
    shares = paths.output_shares(HAND, SEQS, V)
    assert list(shares) == list(paths.SUBSPACES)
    assert shares["previous"] == 1.0 and shares["token"] == shares["position"] == shares["prediction"] == 0.0


def test_the_output_shares_split_the_first_layer_s_output():
    W = _random_circuit(6)
    shares = paths.output_shares(W, SEQS, V)
    A1 = cl.circuit_forward(W, SEQS, V)[1][0]  # (count, N, N): the first layer's weights, computed apart
    Y = A1 @ tokens.residual_stream(SEQS, V) @ W[0][2] @ W[0][3]  # (count, N, d_model)
    stream = tokens.Stream(V)
    for name in paths.SUBSPACES:  # sums of squares of the same products, regrouped
        assert shares[name] == pytest.approx((Y[..., getattr(stream, name)] ** 2).sum() / (Y**2).sum(), rel=1e-9)


def test_the_keys_given_the_first_layer_s_mean():
    W = _random_circuit(7)
    one = SEQS[:1]
    assert np.allclose(paths.ablated_scores(W, one, V, "keys-mean"), paths.ablated_scores(W, one, V, "none"),
                       rtol=0, atol=1e-12)  # the mean of one sequence is itself
    mean, zero, mean_all, full = (paths.ablated_scores(W, SEQS, V, how)
                                  for how in ("keys-mean", "keys", "mean", "none"))
    assert not np.allclose(mean, zero) and not np.allclose(mean, full) and not np.allclose(mean, mean_all)


def test_the_row_losses_and_their_standard_errors():
    W = _random_circuit(8)
    alone = np.stack([sc.row_losses(W, SEQS[k:k + 1], V) for k in range(len(SEQS))])  # (count, n), apart
    # means and sample deviations of the same per-sequence losses, summed in another order
    assert np.allclose(sc.row_losses(W, SEQS, V), alone.mean(axis=0), rtol=1e-12, atol=0)
    assert np.allclose(sc.row_loss_errors(W, SEQS, V), alone.std(axis=0, ddof=1) / np.sqrt(len(SEQS)),
                       rtol=1e-9, atol=0)
    with pytest.raises(ValueError, match="sequences"):
        sc.row_loss_errors(W, SEQS[:1], V)

def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="ablation"):
        paths.ablated_scores(HAND, SEQS, V, "half")
    with pytest.raises(ValueError, match="key"):
        circuits.qk_circuit(HAND, 1, V, key="position")
    with pytest.raises(ValueError, match="weights"):
        circuits.composition_scores(HAND[:1], V)
    with pytest.raises(ValueError, match="matrix"):
        circuits.copying_score(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="matrix"):
        circuits.diagonal_summary(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="weights"):
        paths.output_shares([tuple(0.0 * w for w in layer) for layer in HAND], SEQS, V)
    with pytest.raises(ValueError, match="scores"):
        paths.repeat_accuracy(np.zeros((50, 3, V)), SEQS, HALF)
