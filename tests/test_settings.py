"""The demos' slider ranges reach both limits the book describes, at every N."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention import settings


@pytest.mark.parametrize("n", settings.N_RANGE)
def test_lowest_temperature_gives_the_identity(n):
    p = np.linspace(0, 1, n)
    _, weights = sa.gaussian_head(np.zeros(n), p, settings.TEMPERATURE_RANGE[0])
    np.testing.assert_allclose(weights, np.eye(n), rtol=0, atol=1e-40)


@pytest.mark.parametrize("n", settings.N_RANGE)
def test_highest_temperature_gives_nearly_uniform_weights(n):
    p = np.linspace(0, 1, n)
    _, weights = sa.gaussian_head(np.zeros(n), p, settings.TEMPERATURE_RANGE[1])
    # Within each row, the largest weight is at most exp(1 / tau) = 1.105 times the smallest.
    assert np.max(weights.max(axis=1) / weights.min(axis=1)) <= np.exp(1 / settings.TEMPERATURE_RANGE[1]) + 1e-12


def test_defaults_lie_in_the_slider_ranges():
    assert settings.N_RANGE[0] <= settings.N <= settings.N_RANGE[1]
    assert settings.SIGMA_RANGE[0] <= settings.SIGMA <= settings.SIGMA_RANGE[1]
    assert settings.TEMPERATURE_RANGE[0] <= settings.TEMPERATURE <= settings.TEMPERATURE_RANGE[1]
