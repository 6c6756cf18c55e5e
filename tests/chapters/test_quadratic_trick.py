"""The page "The quadratic-expansion trick": the score is minus the squared distance, and the rows are Gaussians."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import symbolic

STEM = "quadratic-trick"


def test_sympy_finds_the_score_is_minus_the_squared_distance(chapter):
    assert chapter.glued["trick-identity-holds"] is True
    assert chapter.namespace["factored"] == -(symbolic.p_i - symbolic.p_j) ** 2


def test_the_identity_holds_to_rounding_on_the_books_positions(chapter):
    """"a few units in the last place of double precision"."""
    assert 0 <= chapter.glued["trick-max-error"] < 8 * np.finfo(float).eps
    assert chapter.glued["trick-n"] == len(chapter.namespace["positions"])


def test_the_computed_rows_lie_on_the_predicted_gaussians(chapter):
    assert chapter.glued["trick-profile-gap"] < 1e-12


def test_four_times_the_temperature_doubles_the_width(chapter):
    glued, taus = chapter.glued, chapter.namespace["profile_taus"]
    assert taus[2] == 4 * taus[1] and taus[0] == taus[1] / 5
    assert glued["trick-profile-h-2"] == pytest.approx(2 * glued["trick-profile-h-1"])
    assert glued["trick-profile-h-1"] == glued["trick-h"] and glued["trick-profile-h-0"] < glued["trick-h"]


def test_the_profiled_query_is_in_the_middle(chapter):
    assert chapter.glued["trick-row-position"] == pytest.approx(0.5, abs=1 / chapter.glued["trick-n"])
