"""The leave-one-out study: choose_temperature on many of the book's noisy sines at once."""

from __future__ import annotations

import numpy as np
import pytest

import selfattention as sa
from selfattention.studies.leave_one_out import loo_choices


def test_loo_choices_match_choose_temperature_one_signal_at_a_time():
    ns, sigmas, seeds = [30, 60], [0.2, 0.7], [5, 6]
    chosen = loo_choices(ns, sigmas, seeds)
    assert chosen.shape == (2, 2, 2)
    for r, seed in enumerate(seeds):
        for a, n in enumerate(ns):
            for b, sigma in enumerate(sigmas):
                p, _, y = sa.noisy_sine(n, sigma, rng=seed)
                assert chosen[r, a, b] == sa.choose_temperature(y, p)[0]


def test_loo_choices_pick_from_the_given_candidates():
    candidates = [1e-3, 1e-2, 1e-1]
    assert set(loo_choices([40], [0.3, 1.0], [1, 2], candidates).ravel()) <= set(candidates)


def test_loo_choices_reject_bad_candidates():
    with pytest.raises(ValueError, match="candidates must all be positive"):
        loo_choices([40], [0.3], [1], [0.1, -1.0])
    assert np.all(loo_choices([40], [0.3], [1]) > 0)
