"""studies.noise2noise: temperatures and heads fitted to a second noisy draw; exact cases."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention import learning
from selfattention.studies import content_attention as ca
from selfattention.studies import noise2noise as n2n
from selfattention.training import FitResult


@pytest.fixture(scope="module")
def signals():
    return ca.step_signals(3, 30, 0.2, rng=2)


def test_read_temperatures_of_a_bilateral_product():
    tau_p, tau_s = 0.002, 1.5
    W_QK = np.zeros((5, 5))  # rows and columns [s, s^2, pt, pt^2, 1]
    W_QK[0, 0], W_QK[4, 1], W_QK[2, 2], W_QK[4, 3] = 2 / tau_s, -1 / tau_s, 1 / (2 * tau_p), -1 / (4 * tau_p)
    fit = FitResult(W_QK, np.eye(5), np.zeros(1), 0.0)
    read = n2n.read_temperatures(fit)
    # Each entry above rounds once; W_QK = W_Q I exactly; reading a temperature back rounds twice: relative.
    for name, tau in (("tau_s from s.s", tau_s), ("tau_s from 1.s^2", tau_s), ("tau_p from pt.pt", tau_p),
                      ("tau_p from 1.pt^2", tau_p)):
        assert read[name] == pytest.approx(tau, rel=rounding(3), abs=0), name


def test_best_temperatures_minimise_the_error_against_the_second_draws(signals):
    taus, taus_s = [0.001, 0.01, 0.1], [0.1, 1.0, 10.0]

    def second_draw_mse(outputs):  # (k, n), written out here
        return np.mean([(o - s) ** 2 for o, s in zip(outputs, signals.second, strict=True)])

    gauss = [second_draw_mse([sa.gaussian_head(s, signals.positions, tau)[0] for s in signals.noisy]) for tau in taus]
    grid = {(tp, ts): second_draw_mse(ca.bilateral_outputs(signals, tp, ts)) for tp in taus for ts in taus_s}
    tau, pair = n2n.best_temperatures(signals, taus, taus_s)
    assert tau == taus[int(np.argmin(gauss))]
    assert pair == min(grid, key=grid.get)


def test_learned_outputs_run_the_head_on_each_signal(signals):
    position = n2n.train_position_head(signals, steps=3, rng=0)
    outputs, weights = n2n.learned_outputs(position, signals, content=False)
    X = learning.token_features(signals.positions)
    for k in range(3):
        output, w = learning.learned_head(position.W_Q, position.W_K, X, signals.noisy[k])
        np.testing.assert_array_equal(outputs[k], output)  # the same calls
        np.testing.assert_array_equal(weights[k], w)
    np.testing.assert_array_equal(n2n.head_features(signals, content=True)[1],
                                  learning.token_features(signals.positions, signals.noisy[1], signal_square=True))


def test_the_content_head_starts_from_the_position_head(signals):
    """Rows s and s^2 start at 0, rows pt, pt^2, 1 at the position head's, plus the random start of every fit."""
    position = n2n.train_position_head(signals, steps=3, rng=0)
    content = n2n.train_content_head(signals, start=position, steps=1, rng=5, learning_rate=1e-12)
    gen = np.random.default_rng(5)
    for learned, start in zip((content.W_Q, content.W_K), (position.W_Q, position.W_K), strict=True):
        expected = 0.1 * gen.standard_normal((5, 3)) + np.vstack([np.zeros((2, 3)), start])
        # One Adam step moves each entry by at most the learning rate, 1e-12; the start rounds twice.
        np.testing.assert_allclose(learned, expected, rtol=0, atol=1e-12 + rounding(2, np.abs(expected).max()))
    assert content.losses.shape == (1,)
