"""The experiments of chapters 8 and 9 (studies) and their figures: exact cases and bad input."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import selfattention as sa
from selfattention import learning
from selfattention.signals import step_sine
from selfattention.studies import content_attention as ca
from selfattention.studies import learned_head as lh


def engineered_in_centred_tokens(tau):
    """Projections on tokens [pt, pt^2, 1] whose scores are -(p_i - p_j)^2 / tau plus terms of i only."""
    W_QK = np.array([[1 / (2 * tau), 0, 0], [0, 0, 0], [0, -1 / (4 * tau), 0]])
    return W_QK, np.eye(3)


def test_row_gaussians_read_the_engineered_head_exactly():
    p = np.linspace(0, 1, 21)
    tau, centres = lh.row_gaussians(*engineered_in_centred_tokens(0.01), p)
    np.testing.assert_allclose(tau, 0.01)
    np.testing.assert_allclose(centres, p, atol=1e-12)


def test_centred_scores_of_the_engineered_head_are_minus_squared_distances():
    p = np.linspace(0, 1, 9)
    centred = lh.centred_scores(*engineered_in_centred_tokens(0.05), learning.token_features(p))
    np.testing.assert_allclose(centred, -((p[:, None] - p) ** 2) / 0.05, atol=1e-12)


def test_reparametrise_keeps_the_product_and_favourite_keys():
    rng = np.random.default_rng(0)
    W_Q, W_K, G = rng.standard_normal((3, 3, 3))
    W_Q_G, W_K_G = lh.reparametrise(W_Q, W_K, G)
    np.testing.assert_allclose(W_Q_G @ W_K_G.T, W_Q @ W_K.T, atol=1e-12)
    assert lh.relative_gap(W_Q, W_Q) == 0
    keys, share = lh.favourite_keys([[0.1, 0.9], [0.6, 0.4]])
    np.testing.assert_array_equal(keys, [1, 0])
    np.testing.assert_allclose(share, [0.9, 0.6])


def test_learn_picks_the_tokens_and_checkpoint_weights_are_masked():
    p, _, y = sa.noisy_sine(15, 0.3, rng=0)
    assert lh.learn(p, y, steps=2, rng=0).W_Q.shape == (3, 3)
    leak = lh.learn(p, y, sees_value=True, steps=2, rng=0, checkpoints=(0,))
    assert leak.W_Q.shape == (4, 3)
    assert lh.features_of(leak, p, y).shape == (15, 4)
    weights = lh.checkpoint_weights(leak, p, y)[0]
    assert np.all(np.diag(weights) == 0)
    np.testing.assert_allclose(lh.learn(p, y, centred=False, steps=1, rng=0, checkpoints=(0,)).checkpoints[0][0],
                               lh.learn(p, y, steps=1, rng=0, checkpoints=(0,)).checkpoints[0][0])
    with pytest.raises(ValueError, match="sees_value needs centred features"):
        lh.learn(p, y, sees_value=True, centred=False)
    with pytest.raises(ValueError, match="learning_rates must not be negative"):
        lh.gradient_descent_runs(p, y, [-1.0], steps=1)


def test_step_signals_draw_jumps_in_range_and_two_independent_draws():
    signals = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    assert signals.clean.shape == signals.noisy.shape == signals.second.shape == (6, 40)
    assert np.all((signals.jumps >= 0.3) & (signals.jumps <= 0.6))
    for k, at in enumerate(signals.jumps):
        np.testing.assert_allclose(signals.clean[k], step_sine(40, 0.0, jump=2.0, at=at)[1])
    noise, second = signals.noisy - signals.clean, signals.second - signals.clean
    assert abs(np.corrcoef(noise.ravel(), second.ravel())[0, 1]) < 0.15
    again = ca.step_signals(6, 40, 0.3, jump=2.0, low=0.3, high=0.6, rng=1)
    np.testing.assert_array_equal(again.second, signals.second)


def test_region_errors_split_the_tokens_by_their_distance_to_the_jump():
    signals = ca.step_signal(11, 0.0, jump=1.0, at=0.5, rng=0)  # positions 0, 0.1, ..., 1
    estimates = signals.clean.copy()
    estimates[0, 5] += 2.0  # p = 0.5, right at the jump
    errors = ca.region_errors(estimates, signals, width=0.05)
    assert errors["away"] == 0 and errors["near"] == pytest.approx(2.0)
    assert errors["whole"] == pytest.approx(2.0 / np.sqrt(11))


def test_weight_across_and_mean_distance_on_known_matrices():
    p = np.linspace(0, 1, 5)  # the jump at 0.5 separates indices 0, 1 from 2, 3, 4
    assert ca.weight_across(np.eye(5), p, 0.5, width=0.3) == 0
    assert ca.weight_across(np.full((5, 5), 0.2), p, 0.5, width=0.3) == pytest.approx((0.6 + 0.4 + 0.4) / 3)
    assert ca.mean_distance(np.eye(5), p) == 0
    flipped = np.stack([np.eye(5), np.eye(5)[::-1]])
    assert ca.mean_distance(flipped, p) == pytest.approx(np.mean(np.abs(p - p[::-1])) / 2)
    with pytest.raises(ValueError, match="no position lies within"):
        ca.weight_across(np.eye(5), p, 2.0)
    with pytest.raises(ValueError, match="weights must have shape"):
        ca.mean_distance(np.eye(4), p)


def test_read_temperatures_of_a_bilateral_product():
    tau_p, tau_s = 0.002, 1.5
    W_QK = np.zeros((5, 5))  # rows and columns [s, s^2, pt, pt^2, 1]
    W_QK[0, 0], W_QK[4, 1], W_QK[2, 2], W_QK[4, 3] = 2 / tau_s, -1 / tau_s, 1 / (2 * tau_p), -1 / (4 * tau_p)
    fit = learning.FitResult(W_QK, np.eye(5), np.zeros(1), 0.0)
    read = ca.read_temperatures(fit)
    assert read["tau_s from s.s"] == pytest.approx(tau_s) and read["tau_s from 1.s^2"] == pytest.approx(tau_s)
    assert read["tau_p from pt.pt"] == pytest.approx(tau_p) and read["tau_p from 1.pt^2"] == pytest.approx(tau_p)


def test_heads_on_step_signals():
    signals = ca.step_signals(3, 30, 0.2, rng=2)
    gauss = ca.gaussian_outputs(signals, 0.01)
    np.testing.assert_allclose(gauss[1], sa.gaussian_head(signals.noisy[1], signals.positions, 0.01)[0])
    np.testing.assert_allclose(ca.bilateral_outputs(signals, 0.01, 1e12), gauss, atol=1e-9)
    tau, (tau_p, tau_s) = ca.best_temperatures(signals, [0.001, 0.01, 0.1], [0.1, 1.0])
    assert tau in (0.001, 0.01, 0.1) and tau_p in (0.001, 0.01, 0.1) and tau_s in (0.1, 1.0)
    position = ca.train_position_head(signals, steps=3, rng=0)
    content = ca.train_content_head(signals, start=position, steps=1, rng=0, learning_rate=1e-9)
    np.testing.assert_allclose(content.W_Q[2:], position.W_Q, atol=1.0)
    outputs, weights = ca.learned_outputs(content, signals, content=True)
    assert outputs.shape == (3, 30) and weights.shape == (3, 30, 30)
    assert ca.head_features(signals, content=False).shape == (3, 30, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ca.step_signals(0, 10, 0.1), "count must be at least 1"),
        (lambda: ca.step_signals(2, 10, 0.1, low=0.8, high=0.2), "low and high must satisfy"),
        (lambda: ca.step_signals(2, 10, 0.1, high=1.5), "low and high must satisfy"),
        (lambda: ca.step_signals(2, 10, -0.1), "sigma must not be negative"),
        (lambda: ca.near_jump([0.0, 1.0], [0.5], width=0), "width must be positive"),
        (lambda: ca.region_errors(np.zeros(3), ca.step_signal(3, 0.1)), "estimates must be 2-dimensional"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_figure_functions_draw_without_pyplot():
    code = """
import sys
import numpy as np
from selfattention.figures import content as fc, learning as fl
p = np.linspace(0, 1, 20)
w = np.full((20, 20), 1 / 20)
losses = np.linspace(1, 0.1, 5)
W = np.eye(3)
figs = [
    fl.plot_training(losses, engineered_loss=0.2, noise_variance=0.1, leak_losses=losses / 10),
    fl.plot_checkpoints(p, {0: w, 5: w}),
    fl.plot_learned_scores(p, -w, -w, -w, [5, 10, 15], np.full(20, 0.01), loo_temperature=0.01,
                           best_temperature=0.02, other_bandwidths=[np.full(20, 0.02)]),
    fl.plot_leak(p, p, p, p, w),
    fl.plot_products((W, W), (2 * W, W / 2), ["a", "b", "c"]),
    fc.plot_blur(p, p, p, p, jump=0.5, width=0.05),
    fc.plot_two_heads(p, p, p, {"a": p, "b": p}, {"a": w, "b": w}, jump=0.5, width=0.05),
    fc.plot_errors({"a": {"near": 0.3, "away": 0.1}, "b": {"near": 0.2, "away": 0.1}}, np.eye(5), list("abcde")),
]
print([len(f.axes) for f in figs], all(f._repr_png_()[:4] == b"\\x89PNG" for f in figs))
print("matplotlib.pyplot" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[1, 2, 3, 3, 4, 1, 3, 2] True"
    assert out[1] == "False"
