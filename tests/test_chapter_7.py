"""Chapter 7, "Attention is kernel regression": its claims, with its own arguments,
and the conventions of its source (glued numbers, named and captioned figures)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import selfattention as sa
from selfattention import bias_variance as bv
from selfattention import kernel, settings

CHAPTER = Path(__file__).resolve().parents[1] / "book" / "kernel-regression.md"


def scaling(seed):
    best = bv.best_temperature_grid(
        bv.SCALING_NS, bv.SCALING_SIGMAS, bv.SCALING_TEMPERATURES, draws=bv.SCALING_DRAWS, rng=seed
    )
    return best, {region: bv.fit_power_law(bv.SCALING_NS, bv.SCALING_SIGMAS, t) for region, t in best.items()}


@pytest.fixture(scope="module")
def book_scaling():
    return scaling(settings.SEED)


# --- the claims -------------------------------------------------------------------


def assert_exponents_match_theory(fits):
    for region, (alpha, beta) in bv.THEORY_EXPONENTS.items():
        assert fits[region].n_exponent == pytest.approx(alpha, abs=bv.EXPONENT_TOLERANCE), region
        assert fits[region].sigma_exponent == pytest.approx(beta, abs=bv.EXPONENT_TOLERANCE), region


def test_fitted_exponents_are_within_the_stated_tolerance_of_theory(book_scaling):
    assert_exponents_match_theory(book_scaling[1])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fitted_exponents_hold_for_other_noise_draws(seed):
    assert_exponents_match_theory(scaling(seed)[1])


def test_whole_interval_exponents_differ_from_the_interior(book_scaling):
    best, fits = book_scaling
    whole, interior = fits["whole"], fits["interior"]
    assert whole.n_exponent < interior.n_exponent - 3 * np.hypot(whole.n_stderr, interior.n_stderr)
    assert whole.sigma_exponent > interior.sigma_exponent + 3 * np.hypot(whole.sigma_stderr, interior.sigma_stderr)
    assert np.all(best["whole"] < best["interior"]), "the circles lie below the squares"


def test_the_grid_doubles_n_and_sigma():
    assert np.allclose(np.diff(np.log2(bv.SCALING_NS)), 1)
    assert np.allclose(np.diff(np.log2(bv.SCALING_SIGMAS)), 1)


def test_leave_one_out_lands_within_the_stated_factor_on_the_books_signals(book_scaling):
    best, _ = book_scaling
    ns = bv.SCALING_NS[:-1]
    chosen = kernel.loo_choices(ns, bv.SCALING_SIGMAS, [settings.SEED])[0]
    ratio = chosen / best["whole"][: len(ns)]
    assert np.all((ratio > 1 / kernel.LOO_FACTOR) & (ratio < kernel.LOO_FACTOR))


def test_leave_one_out_is_right_on_average_over_other_draws(book_scaling):
    best, _ = book_scaling
    ns = bv.SCALING_NS[:-1]
    ratio = kernel.loo_choices(ns, bv.SCALING_SIGMAS, range(20)) / best["whole"][: len(ns)]
    assert 0.8 < np.median(ratio) < 1.25
    outside = (ratio < 1 / kernel.LOO_FACTOR) | (ratio > kernel.LOO_FACTOR)
    assert 0 < outside.mean() < 0.35, "the text says some, but a minority, miss by more than the factor"
    assert ratio.min() < 0.1, "a few misses are far too small temperatures"


def test_edge_effect_pulls_the_ends_inward_at_first_order():
    p, clean, _ = sa.noisy_sine(settings.N, settings.SIGMA, rng=settings.SEED)
    smoothed, _ = sa.gaussian_head(clean, p, settings.TEMPERATURE)
    end, interior = bv.leading_bias(settings.TEMPERATURE)
    bias = smoothed - clean
    assert bias[0] > 0 > bias[-1], "pulled toward the inside values at both ends"
    assert bias[0] == pytest.approx(end, rel=0.15) and -bias[-1] == pytest.approx(end, rel=0.15)
    assert bias[0] < end, "the measured pull is smaller than the leading-order value"
    assert np.abs(bias)[bv.region_mask(p, "interior")].max() == pytest.approx(interior, rel=0.05)
    assert bias[0] > 3 * np.abs(bias)[bv.region_mask(p, "interior")].max()


# --- the source ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def source():
    return CHAPTER.read_text()


# Glued names and figures (named, alt text, caption, numref, hide-input) are
# checked for this chapter with chapters 4-6, in test_chapters_4_7.py.


def test_the_chapter_has_its_four_figures(source):
    assert len(re.findall(r"```\{glue:figure\} fig-kr-[\w-]+\n", source)) == 4


def test_prose_has_no_hand_typed_decimals(source):
    prose = re.sub(r"```.*?```", "", source, flags=re.S)
    prose = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|\{glue:text\}`[^`]*`", "", prose, flags=re.S)
    assert re.findall(r"\b\d+\.\d+\b", prose) == []


def test_numbers_typed_in_the_prose_match_the_package(source):
    assert bv.REGIONS["interior"] == (0.25, 0.75) and "$[0.25, 0.75]$" in source
    assert max(bv.SCALING_NS[:-1]) == 400 and "$N$ up to 400" in source
    assert "factor 20" in source  # asserted by test_the_bottom_of_the_u_is_flat
