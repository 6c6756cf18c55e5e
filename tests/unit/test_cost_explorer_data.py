"""selfattention.interactive.explorer_data for the cost explorer: the draws it embeds give the package's features."""

from __future__ import annotations

import json

import numpy as np
import pytest

import selfattention as sa
from selfattention import defaults, random_features
from selfattention.interactive import explorer_data


@pytest.mark.parametrize("count", [1, 7, 64, 256])
def test_the_first_d_draws_give_the_packages_frequencies(count):
    """The script takes the first D draws' sizes times sqrt(2) sqrt(1 / tau), as gaussian_frequencies computes."""
    data = explorer_data.cost_data()
    draws = np.array(data["draws"][:count])
    spread = np.sqrt(2.0) * np.sqrt(1.0 / data["temperature"])
    expected = random_features.gaussian_frequencies(count, data["temperature"], explorer_data.COST_FEATURE_SEED)
    np.testing.assert_array_equal(np.abs(draws) * spread, expected)


def test_the_data_holds_the_books_noise_settings_and_ranges():
    data = explorer_data.cost_data(n=300, count=32)
    assert (data["layer"], data["n"], data["count"]) == ("cost", 300, 32)
    assert (data["sigma"], data["temperature"], data["seed"]) == (defaults.SIGMA, defaults.TEMPERATURE, defaults.SEED)
    np.testing.assert_array_equal(data["noise"], sa.unit_noise(defaults.N_RANGE[1], defaults.SEED))
    assert data["n_range"] == list(defaults.N_RANGE) and data["count_range"] == [1, 256]
    assert len(data["draws"]) == 256 and data["timing_ns"] == list(explorer_data.COST_TIMING_NS)
    assert json.loads(explorer_data.explorer_json(layer="cost", n=300, count=32)) == data


@pytest.mark.parametrize(("kwargs", "word"), [({"n": 2000}, "n"), ({"count": 0}, "count"), ({"count": 257}, "count"),
                                             ({"count": 2.5}, "count")])
def test_settings_outside_the_sliders_are_refused_by_name(kwargs, word):
    with pytest.raises(ValueError, match=word):
        explorer_data.cost_data(**kwargs)


def test_the_series_are_the_packages_heads():
    data = explorer_data.cost_data(n=150, count=16)
    positions, clean, noisy, exact, approximate = explorer_data.cost_series(data)
    p, f, s = sa.noisy_sine(150, defaults.SIGMA, rng=defaults.SEED)
    for got, want in ((positions, p), (clean, f), (noisy, s)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(exact, sa.gaussian_head(s, p, defaults.TEMPERATURE)[0])
    omega = random_features.gaussian_frequencies(16, defaults.TEMPERATURE, explorer_data.COST_FEATURE_SEED)
    np.testing.assert_array_equal(approximate, random_features.random_feature_head(s, p, omega)[0])
    with pytest.raises(TypeError, match="data"):
        explorer_data.cost_series(explorer_data.explorer_data())


def test_the_starting_draw_is_a_typical_one():
    """At the start (the book's N, the largest D), the seed's error is in the middle fifth of 200 seeds' errors."""
    data = explorer_data.cost_data()
    positions, _, noisy, exact, _ = explorer_data.cost_series(data)

    def error(seed):
        omega = random_features.gaussian_frequencies(data["count"], data["temperature"], seed)
        return np.sqrt(np.mean((random_features.random_feature_head(noisy, positions, omega)[0] - exact) ** 2))

    errors = np.array([error(seed) for seed in range(200)])
    rank = np.mean(errors < error(explorer_data.COST_FEATURE_SEED))
    assert 0.4 <= rank <= 0.6, f"the starting draw's error is at the {rank:.0%} point of 200 seeds' errors"
