"""The page "Smoothing with attention": the head on the book's noisy sine, the explorer and explore()."""

from __future__ import annotations

import numpy as np
import pytest
from chapters.book import CODE_CELL, source
from tolerances import average_atol, half_spread, rounding, softmax_rtol, square_scores_error

import selfattention as sa
from selfattention import defaults
from selfattention.interactive.explorer_data import explorer_data, fallback_series
from selfattention.interactive.widget import SmoothingWidget, smoothing_figure
from selfattention.metrics import rmse
from selfattention.studies import bias_variance as bv
from selfattention.studies.noise_and_samples import smoothed_sine, smoothing_errors

STEM = "smoothing"


def test_the_output_is_several_times_closer_to_the_truth(chapter):
    glued = chapter.glued
    # Not rounding: the RMSE of N = 100 draws is sigma to about 1 / sqrt(2 N) = 7% relative.
    assert glued["smoothing-rmse-input"] == pytest.approx(glued["smoothing-sigma"], rel=0.2), "close to sigma"
    assert glued["smoothing-rmse-output"] < glued["smoothing-rmse-input"] / 2
    assert glued["smoothing-rmse-ratio"] == glued["smoothing-rmse-input"] / glued["smoothing-rmse-output"]


@pytest.mark.parametrize("seed", range(5))
def test_the_output_beats_the_input_on_other_noise_draws(seed):
    rmse_input, rmse_output = smoothing_errors(defaults.N, defaults.SIGMA, defaults.TEMPERATURE, rng=seed)
    assert rmse_output < rmse_input / 2


def test_a_noise_free_signal_keeps_only_the_blur(chapter):
    assert 0 < chapter.glued["smoothing-rmse-no-noise"] < chapter.glued["smoothing-rmse-output"]


def test_the_middle_token_averages_many_neighbours(chapter):
    """Averaging k tokens: the bump around the middle token covers about k = 1 / sum w**2 of them."""
    k = chapter.glued["smoothing-neighbours"]
    h, spacing = chapter.glued["smoothing-h"], 1 / (chapter.glued["smoothing-n"] - 1)
    # A Gaussian row of standard deviation h on a grid of this spacing has 1 / sum w**2 = 2 sqrt(pi) h / spacing
    # (not rounding: the sum over the grid for the integral).
    assert k == pytest.approx(2 * np.sqrt(np.pi) * h / spacing, rel=0.01)


def test_the_noise_left_has_standard_deviation_sigma_over_root_n_eff(chapter):
    """The noise in output_i, sigma sum_j a_ij z_j, over many draws."""
    ns = chapter.namespace
    z = np.random.default_rng(0).standard_normal((defaults.N, 40000))  # (N, draws)
    left = defaults.SIGMA * ns["weights"][ns["middle"]] @ z  # (draws,)
    # Not rounding: the spread of 40,000 draws, within sqrt(1 / 80000) = 0.35% (one standard error).
    assert left.std() == pytest.approx(defaults.SIGMA / np.sqrt(chapter.glued["smoothing-neighbours"]), rel=0.02)


def test_the_transformers_divisor_flattens_the_noisy_sine(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["textbook_tau"] == np.sqrt(3) and ns["d_k"] == 3
    assert 0.5 < glued["smoothing-h-textbook"] < 1, "nearly the length of the whole signal"
    assert glued["smoothing-rmse-textbook"] > glued["smoothing-rmse-input"], "more than the noisy input"
    flat = rmse(np.full(defaults.N, ns["noisy"].mean()), ns["clean"])
    assert glued["smoothing-rmse-textbook"] == pytest.approx(flat, rel=0.1), "close to the mean of all the samples"
    assert glued["smoothing-textbook-factor"] == np.sqrt(3) / defaults.TEMPERATURE  # the chapter's expression


def test_a_larger_W_Q_under_the_fixed_divisor_is_the_books_temperature(chapter):
    ns = chapter.namespace
    W_Q, _, _ = sa.gaussian_head_weights()
    np.testing.assert_array_equal(ns["W_Q_scaled"], W_Q * chapter.glued["smoothing-textbook-factor"])  # the same
    # Rounding: the expanded square on the raw positions (through W_Q's sqrt(3) / tau and the division by
    # sqrt(3), 4 roundings on 4 P**2 / tau) against the head's on the centred ones.
    p, tau = ns["positions"], defaults.TEMPERATURE
    P = np.abs(p).max()
    gap = square_scores_error(P, tau) + square_scores_error(half_spread(p), tau) + rounding(4, 4 * P**2 / tau)
    assert chapter.glued["smoothing-fixed-gap"] <= softmax_rtol(len(p), gap)  # weights are at most 1


def test_the_explorer_starts_on_the_chapters_figure(chapter):
    """"at its starting settings it draws exactly" the chapter's first figure."""
    ns = chapter.namespace
    for got, want in zip(fallback_series(explorer_data()), (ns["positions"], ns["clean"], ns["noisy"], ns["output"],
                                                             ns["weights"]), strict=True):
        np.testing.assert_array_equal(got, want)


def test_explore_starts_on_the_chapters_figure(chapter):
    """Live, explore() "starts at the book's settings, on the signal and the matrix of" the chapter's figure."""
    ns = chapter.namespace
    widget = ns["explore"]()
    assert isinstance(widget, SmoothingWidget)
    assert (widget.n.value, widget.sigma.value, widget.tau.value) == (defaults.N, defaults.SIGMA, defaults.TEMPERATURE)
    assert widget.image.value == smoothing_figure(defaults.N, defaults.SIGMA, defaults.TEMPERATURE)._repr_png_()
    head = smoothed_sine(defaults.N, defaults.SIGMA, defaults.TEMPERATURE, periods=defaults.PERIODS,
                         rng=defaults.SEED)
    for got, name in zip((head.positions, head.clean, head.noisy, head.output, head.weights),
                         ("positions", "clean", "noisy", "output", "weights"), strict=True):
        np.testing.assert_array_equal(got, ns[name], err_msg=name)


def test_the_static_page_has_no_still_of_explore(chapter):
    """The explorer above the cell shows the same, live: no second, still copy of the chapter's figure."""
    assert not [name for name in chapter.glued if name.startswith("fig-smoothing") and name != "fig-smoothing-result"]


def test_the_build_skips_only_the_explore_cell_which_comes_last_before_the_exercises():
    """The static build cannot show a widget, so it skips the cell; thebe runs it live."""
    chapter_text, exercises = source("smoothing").split("(exercises-smoothing)=")
    cells = CODE_CELL.findall(chapter_text)
    skipped = [cell for cell in cells if ":tags: [skip-execution]" in cell]
    assert skipped == [cells[-1]]
    assert cells[-1].split("\n", 2)[2].strip() == "explore()"
    assert "skip-execution" not in exercises


# --- the exercises -----------------------------------------------------------------------------


def test_ex_the_effective_number_of_a_half_and_two_quarters(chapter):
    # Exactly: dyadic weights, so the sum of their squares is exact and both sides round one division.
    assert chapter.glued["ex-smoothing-neff-value"] == 1 / (1 / 4 + 1 / 16 + 1 / 16)
    assert chapter.namespace["row_weights"][0] == [0.5, 0.25, 0.25]


def test_ex_the_noise_left_in_the_middle(chapter):
    ns = chapter.namespace
    row = ns["weights"][ns["middle"]]
    # the standard deviation of sigma * sum_j a_ij z_j, written out
    # sigma / sqrt(1 / sum a**2) against sigma sqrt(sum a**2): the sums of n squares and 4 roundings, relative.
    assert chapter.glued["ex-smoothing-noise-left"] == pytest.approx(defaults.SIGMA * np.sqrt(np.sum(row**2)),
                                                                     rel=rounding(row.size + 4), abs=0)
    assert chapter.glued["ex-smoothing-noise-left"] < defaults.SIGMA / 3


def test_ex_ten_times_the_temperature_blurs_more_than_it_cleans(chapter):
    glued = chapter.glued
    assert chapter.namespace["tau"] == defaults.TEMPERATURE
    assert chapter.namespace["wide_tau"] == 10 * defaults.TEMPERATURE  # "Multiply tau by ten"
    assert glued["ex-smoothing-live-before"] == glued["smoothing-rmse-output"]
    assert glued["ex-smoothing-live-after"] > glued["smoothing-rmse-input"] > glued["ex-smoothing-live-before"]
    # sqrt(10 tau / 2) against sqrt(10) sqrt(tau / 2): 3 roundings, relative.
    assert glued["ex-smoothing-live-h"] == pytest.approx(np.sqrt(10) * glued["smoothing-h"], rel=rounding(3), abs=0)


def test_ex_the_blur_is_largest_at_the_ends(chapter):
    glued = chapter.glued
    ns = chapter.namespace
    blur = ns["blur"]
    assert np.argmax(blur) in (0, len(blur) - 1) and glued["ex-smoothing-open-end"] == blur.max()
    assert glued["ex-smoothing-open-end"] > 4 * glued["ex-smoothing-open-middle"]
    # "the sine rises through both ends": pulled up at p = 0, down at p = 1
    assert ns["noise_free"][0] > ns["clean"][0] == 0.0 and ns["noise_free"][-1] < 0.0
    # "by about f' h sqrt(2 / pi)": the leading term, a little more than the measured pull
    assert glued["ex-smoothing-open-pull"] == bv.leading_bias(defaults.TEMPERATURE)[0]
    assert 0.8 * glued["ex-smoothing-open-pull"] < glued["ex-smoothing-open-end"] < glued["ex-smoothing-open-pull"]
    # Equal but for rounding: the sine is odd about 1/2 and the grid symmetric, each to an ulp (the positions and
    # their sines, 4 roundings on 2 pi; the distances, 2 on 1 / tau, once squared), and each end's output is within
    # the head's own rounding.
    tau, n = defaults.TEMPERATURE, len(ns["clean"])
    atol = 2 * average_atol(n, 1.0, square_scores_error(0.5, tau) + rounding(2, 1 / tau)) + rounding(4, 2 * np.pi)
    assert abs(ns["noise_free"][0] - ns["clean"][0]) == pytest.approx(abs(ns["noise_free"][-1] - ns["clean"][-1]),
                                                                      rel=0, abs=atol)
