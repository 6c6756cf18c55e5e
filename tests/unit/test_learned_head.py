"""studies.learned_head: reading a learned head's band, its tokens, its checkpoints; exact cases and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding, square_scores_error

import selfattention as sa
from selfattention import learning
from selfattention.studies import learned_head as lh


def engineered_in_centred_tokens(tau):
    """Projections on tokens [pt, pt^2, 1] whose scores are -(p_i - p_j)^2 / tau plus terms of i only."""
    W_QK = np.array([[1 / (2 * tau), 0, 0], [0, 0, 0], [0, -1 / (4 * tau), 0]])
    return W_QK, np.eye(3)


def test_row_gaussians_read_the_engineered_head_exactly():
    p = np.linspace(0, 1, 21)
    tau, centres = lh.row_gaussians(*engineered_in_centred_tokens(0.01), p)
    # lambda_2 = -1 / (4 tau) exactly (products by 0 and 1), then -1 / (4 lambda_2): 2 roundings, relative.
    np.testing.assert_allclose(tau, 0.01, rtol=rounding(2), atol=0)
    # 2 p - 1, the products by 1 / (2 tau) and tau, the sums: 6 roundings on at most 1.
    np.testing.assert_allclose(centres, p, rtol=0, atol=rounding(6))


def test_centred_scores_of_the_engineered_head_are_minus_squared_distances():
    p = np.linspace(0, 1, 9)
    centred = lh.centred_scores(*engineered_in_centred_tokens(0.05), learning.token_features(p))
    # An expanded square of pt = 2 p - 1 in [-1, 1] over 4 tau, against the square written out over tau; pt and
    # 1 / (2 tau) round twice more on the scores' size.
    atol = square_scores_error(1.0, 4 * 0.05) + square_scores_error(1.0, 0.05, expanded=False) + rounding(2, 1 / 0.05)
    np.testing.assert_allclose(centred, -((p[:, None] - p) ** 2) / 0.05, rtol=0, atol=atol)


def test_reparametrise_keeps_the_product():
    rng = np.random.default_rng(0)
    W_Q, W_K, G = rng.standard_normal((3, 3, 3))
    W_Q_G, W_K_G = lh.reparametrise(W_Q, W_K, G)
    # G G^-1 = I to 3 cond(G) eps (LU's residual); the products with G and G^-1, 12 roundings: on the terms' sizes.
    terms = np.abs(W_Q) @ np.abs(G) @ np.abs(np.linalg.inv(G)) @ np.abs(W_K).T
    atol = rounding(3 * np.linalg.cond(G) + 12, terms)
    np.testing.assert_allclose(W_Q_G @ W_K_G.T, W_Q @ W_K.T, rtol=0, atol=atol)
    assert lh.relative_gap(W_Q, W_Q) == 0
    assert lh.relative_gap(2 * W_Q, W_Q) == 1.0  # exactly: 2 W - W is W, scaled by a power of two


def test_learn_picks_the_tokens_and_checkpoint_weights_are_masked():
    p, _, y = sa.noisy_sine(15, 0.3, rng=0)
    assert lh.learn(p, y, steps=2, rng=0).W_Q.shape == (3, 3)
    leak = lh.learn(p, y, sees_value=True, steps=2, rng=0, checkpoints=(0,))
    assert leak.W_Q.shape == (4, 3)
    assert lh.features_of(leak, p, y).shape == (15, 4)
    weights = lh.checkpoint_weights(leak, p, y)[0]
    assert np.all(np.diag(weights) == 0)
    # Exactly: the same seed draws the same start, whatever the tokens.
    np.testing.assert_array_equal(lh.learn(p, y, centred=False, steps=1, rng=0, checkpoints=(0,)).checkpoints[0][0],
                                  lh.learn(p, y, steps=1, rng=0, checkpoints=(0,)).checkpoints[0][0])
    with pytest.raises(ValueError, match="sees_value needs centred features"):
        lh.learn(p, y, sees_value=True, centred=False)
    with pytest.raises(ValueError, match="learning_rates must not be negative"):
        lh.gradient_descent_runs(p, y, [-1.0], steps=1)
