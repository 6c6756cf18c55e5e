"""The shared input checks: temperatures and seeds."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention._validation import as_seed, as_temperatures


def test_as_temperatures_accepts_positive_values_and_names_the_argument():
    np.testing.assert_array_equal(as_temperatures([0.1, 2], "taus"), [0.1, 2.0])
    with pytest.raises(ValueError, match=r"^taus must hold at least one temperature"):
        as_temperatures([], "taus")
    with pytest.raises(ValueError, match=r"^taus must all be positive, got -1.0"):
        as_temperatures([0.1, -1.0], "taus")
    with pytest.raises(ValueError, match=r"^taus must all be positive, got 0.0"):
        as_temperatures([0.0], "taus")
    with pytest.raises(ValueError, match=r"^taus must be 1-dimensional"):
        as_temperatures(0.1, "taus")


def test_as_seed_keeps_integers_and_draws_one_from_a_generator():
    assert as_seed(7) == 7 and as_seed(np.int64(7)) == 7
    first = as_seed(np.random.default_rng(3))
    assert first == as_seed(np.random.default_rng(3)), "the same generator state gives the same seed"
    generator = np.random.default_rng(3)
    assert as_seed(generator) != as_seed(generator), "a used generator moves on"
    assert isinstance(as_seed(None), int)
