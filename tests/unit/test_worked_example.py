"""The worked example: one attention head on four tokens, every step kept."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding

import selfattention as sa
from selfattention.studies.worked_example import attention_steps, example_tokens


def test_every_step_is_the_formula():
    X, W_Q, W_K, W_V = example_tokens()
    steps = attention_steps(X, W_Q, W_K, W_V)
    np.testing.assert_array_equal(steps["Q"], X @ W_Q)
    np.testing.assert_array_equal(steps["K"], X @ W_K)
    np.testing.assert_array_equal(steps["V"], X @ W_V)
    np.testing.assert_array_equal(steps["scores"], steps["Q"] @ steps["K"].T)
    # A division by sqrt(d_k) against the study's own: 2 roundings (the root and the quotient), relative.
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / np.sqrt(W_Q.shape[1]), rtol=rounding(2), atol=0)
    output, weights = sa.attention(steps["Q"], steps["K"], steps["V"])
    np.testing.assert_array_equal(steps["weights"], weights)  # the steps are attention's own calls
    np.testing.assert_array_equal(steps["output"], output)


def test_other_shapes_work_too():
    rng = np.random.default_rng(0)
    steps = attention_steps(rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), rng.normal(size=(4, 3)),
                            rng.normal(size=(4, 2)))
    assert steps["weights"].shape == (5, 5) and steps["output"].shape == (5, 2)


def test_bad_shapes_name_the_matrix():
    X, W_Q, W_K, W_V = example_tokens()
    with pytest.raises(ValueError, match=r"^W_K must have 3 rows \(d_model\)"):
        attention_steps(X, W_Q, W_K[:2], W_V)
    with pytest.raises(ValueError, match=r"^X must be 2-dimensional"):
        attention_steps(X[0], W_Q, W_K, W_V)
