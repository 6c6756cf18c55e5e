"""The book's figures draw the data they are given, and nothing touches pyplot.

Each test passes small data to a figure function and finds it again in the
figure's artists (lines, images, texts).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import textwrap
from io import BytesIO

import numpy as np
import pytest
from matplotlib.image import AxesImage, imread
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from tolerances import rounding

import selfattention as sa
import selfattention.figures
from selfattention.figures import (
    bias_variance,
    content_attention,
    diagrams,
    dk_scaling,
    gaussian_band,
    learned_head,
    leave_one_out,
    multihead,
    noise_and_samples,
    onedim,
    panels,
    power_laws,
    smoothing,
    temperature_limits,
)
from selfattention.figures._style import PALETTE, BookFigure, new_figure, palette_png
from selfattention.studies import bias_variance as bv
from selfattention.studies import gaussian_band as band_study
from selfattention.studies import noise_and_samples as nas
from selfattention.studies import power_laws as laws
from selfattention.studies.dk_scaling import dk_scaling_experiment
from selfattention.studies.onedim import onedim_head
from selfattention.studies.temperature_limits import head_at_temperatures, temperature_sweep


@pytest.fixture(scope="module")
def sine():
    """positions, clean, noisy, output, weights of a small smoothed sine."""
    p, clean, noisy = sa.noisy_sine(30, 0.2, rng=1)
    output, weights = sa.gaussian_head(noisy, p, 0.01)
    return p, clean, noisy, output, weights


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def image(ax):
    (im,) = [a for a in ax.get_children() if isinstance(a, AxesImage)]
    return im


# --- the shared panels ---------------------------------------------------------


def test_signal_panel_draws_what_it_is_given(sine):
    p, clean, noisy, output, _ = sine
    ax = new_figure().add_subplot()
    panels.draw_signal(ax, p, clean, noisy, output)
    truth, dots, line = ax.lines
    np.testing.assert_array_equal(truth.get_ydata(), clean)
    np.testing.assert_array_equal(dots.get_ydata(), noisy)
    np.testing.assert_array_equal(line.get_ydata(), output)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ground truth", "noisy input", "attention output"]
    assert ax.get_ylabel() == "value"


def test_signal_panel_options_leave_out_parts(sine):
    p, clean, _, output, _ = sine
    ax = new_figure().add_subplot()
    panels.draw_signal(ax, p, clean, output=output, output_label="mean output", line_width=3.0,
                       ylabel=None, legend=None)
    assert [line.get_linestyle() for line in ax.lines] == ["--", "-"]
    assert ax.lines[1].get_label() == "mean output" and ax.lines[1].get_linewidth() == 3.0
    assert ax.get_legend() is None and ax.get_ylabel() == ""


def test_weights_panel_is_labelled_in_positions_or_indices(sine):
    p, *_, weights = sine
    fig = new_figure()
    ax_p, ax_i = fig.subplots(1, 2)
    panels.draw_weights(ax_p, weights, p)
    panels.draw_weights(ax_i, weights)
    np.testing.assert_array_equal(image(ax_p).get_array(), weights)
    assert image(ax_p).get_extent() == [p[0], p[-1], p[-1], p[0]]
    assert "position" in ax_p.get_xlabel() and ax_i.get_xlabel() == "key $j$"


def test_weights_panel_draws_a_block_of_an_attention_matrix_but_no_more(sine):
    """A window of the matrix (rows then sum to less than 1) is drawable; rows above 1 are not weights."""
    p, *_, weights = sine
    block = weights[10:30, 10:30]  # (20, 20)
    ax = new_figure().subplots()
    panels.draw_weights(ax, block, p[10:30])
    np.testing.assert_array_equal(image(ax).get_array(), block)
    with pytest.raises(ValueError, match="weights must have rows that sum to at most 1"):
        panels.draw_weights(new_figure().subplots(), np.full((2, 2), 0.6))



def test_matrix_panel_writes_every_entry_on_a_symmetric_scale():
    matrix = np.array([[1.0, -4.0], [0.25, 0.0]])
    fig = new_figure()
    ax_lin, ax_sqrt = fig.subplots(1, 2)
    panels.draw_matrix(ax_lin, matrix, fmt="{:.2f}")
    panels.draw_matrix(ax_sqrt, matrix, limit=16.0, sqrt_scale=True)
    np.testing.assert_array_equal(image(ax_lin).get_array(), matrix)
    assert image(ax_lin).get_clim() == (-4.0, 4.0)
    np.testing.assert_array_equal(image(ax_sqrt).get_array(), [[1.0, -2.0], [0.5, 0.0]])
    assert image(ax_sqrt).get_clim() == (-4.0, 4.0)
    assert [t.get_text() for t in ax_lin.texts] == ["1.00", "-4.00", "0.25", "0.00"]

# --- diagrams ---------------------------------------------------------------


def test_overview_has_boxes_arrows_and_every_role():
    fig = diagrams.draw_overview()
    assert isinstance(fig, BookFigure)
    (ax,) = fig.axes
    # tokens; a projection box and a result box per role; scores, softmax, weighted average.
    assert sum(isinstance(p, FancyBboxPatch) for p in ax.patches) == 1 + 2 * 3 + 3
    assert sum(isinstance(p, FancyArrowPatch) for p in ax.patches) >= 10
    labels = " ".join(texts(fig))
    for needle in ("$X$", "W_Q", "W_K", "W_V", "queries", "keys", "values", "softmax", "output"):
        assert needle in labels


@pytest.mark.parametrize(("n", "d_model", "d_k", "d_v"), [(4, 3, 2, 2), (3, 5, 4, 1)])
def test_detailed_draws_one_cell_per_matrix_entry(n, d_model, d_k, d_v):
    fig = diagrams.draw_detailed(n=n, d_model=d_model, d_k=d_k, d_v=d_v)
    (ax,) = fig.axes
    cells = sum(isinstance(p, Rectangle) and not isinstance(p, FancyBboxPatch) for p in ax.patches)
    # Top row: 3 x (X + W + result); bottom row: Q, K^T, scores, weights, V, output.
    top = 3 * n * d_model + 2 * (d_model * d_k + n * d_k) + d_model * d_v + n * d_v
    bottom = 2 * n * d_k + 2 * n * n + 2 * n * d_v
    assert cells == top + bottom
    labels = " ".join(texts(fig))
    assert f"({n}×{d_model})" in labels and "rows sum to 1" in labels


def test_detailed_rejects_shapes_too_large_to_draw():
    with pytest.raises(ValueError, match="at most 8"):
        diagrams.draw_detailed(n=9)
    with pytest.raises(ValueError, match="d_k must be at least 1"):
        diagrams.draw_detailed(d_k=0)


# --- the sqrt(d_k) study, the noisy sine, the one-dimensional head -----------------


def test_dk_scaling_figure_plots_measurements_and_sqrt_curve():
    result = dk_scaling_experiment([1, 4, 16], n_queries=20, n_pairs=50, rng=0)
    fig = dk_scaling.plot_dk_scaling(result)
    ax_std, ax_max = fig.axes
    assert len(ax_std.lines) == 2 and len(ax_max.lines) == 2
    np.testing.assert_array_equal(ax_std.lines[1].get_ydata(), [1, 2, 4])  # roots of perfect squares: exact
    np.testing.assert_array_equal(ax_max.lines[0].get_ydata(), result["max_weight_unscaled"])
    assert ax_std.get_xscale() == "log" and ax_max.get_xscale() == "log"


def test_noisy_signal_figure_has_truth_and_dots(sine):
    p, clean, noisy, *_ = sine
    (ax,) = smoothing.plot_noisy_signal(p, clean, noisy).axes
    assert [line.get_linestyle() for line in ax.lines] == ["--", "None"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), noisy)


def test_smoothing_figure_has_the_signal_panel_the_weights_and_a_title(sine):
    fig = smoothing.plot_smoothing(*sine, title="a title")
    ax_sig, ax_w, _colorbar = fig.axes
    np.testing.assert_array_equal(ax_sig.lines[2].get_ydata(), sine[3])
    np.testing.assert_array_equal(image(ax_w).get_array(), sine[4])
    assert fig.get_suptitle() == "a title"
    assert smoothing.plot_smoothing(*sine).get_suptitle() == ""


def test_onedim_figure_has_signal_heat_map_and_value_scatter(sine):
    p, clean, noisy, *_ = sine
    output, weights = onedim_head(noisy)
    fig = onedim.plot_onedim_head(p, clean, noisy, output, weights)
    ax_sig, ax_w, ax_val, _colorbar = fig.axes
    np.testing.assert_array_equal(ax_sig.lines[2].get_ydata(), output)
    np.testing.assert_array_equal(image(ax_w).get_array(), weights)
    np.testing.assert_array_equal(ax_val.collections[0].get_offsets(), np.column_stack([noisy, output]))


def test_strength_sweep_figure_has_reference_lines():
    fig = onedim.plot_strength_sweep(np.array([0.0, 1.0]), np.array([0.5, 0.3]), 0.4, 0.1)
    (ax,) = fig.axes
    assert [line.get_ydata()[0] for line in ax.lines[1:]] == [0.4, 0.1] and ax.get_yscale() == "log"
    fig = onedim.plot_strength_sweep(np.array([0.0, 1.0]), np.array([0.5, 0.3]), 0.4)
    assert len(fig.axes[0].lines) == 2


# --- the Gaussian band ----------------------------------------------------------


def test_band_figure_marks_one_bandwidth_either_side(sine):
    p = sine[0]
    weights = band_study.band_weights(p, 0.01)
    fig = gaussian_band.plot_attention_band(p, weights, 0.01, 0.07)
    ax = fig.axes[0]
    np.testing.assert_array_equal(image(ax).get_array(), weights)
    shifts = [line.get_ydata() - p for line in ax.lines]
    # p +- 0.07, less p: 2 roundings on 1.07.
    np.testing.assert_allclose(shifts, [np.full_like(p, -0.07), np.full_like(p, 0.07)], rtol=0,
                               atol=rounding(2, 1.07))
    assert "0.070" in " ".join(texts(fig)) and "0.01" in ax.get_title()


def test_row_profiles_draw_each_row_and_its_gaussian(sine):
    p, taus = sine[0], [0.002, 0.01]
    measured, predicted, widths = band_study.row_profiles(p, taus, 15)
    ax = gaussian_band.plot_row_profiles(p, taus, 15, measured, predicted, widths).axes[0]
    for k in range(2):
        np.testing.assert_array_equal(ax.lines[2 * k].get_ydata(), predicted[k])
        np.testing.assert_array_equal(ax.lines[2 * k + 1].get_ydata(), measured[k])
    assert len(ax.texts) == 2, "one arrow across each bell"
    with pytest.raises(ValueError, match="temperatures must hold at most 4"):
        gaussian_band.plot_row_profiles(p, [0.1] * 5, 15, *band_study.row_profiles(p, [0.1] * 5, 15))


# --- the temperature's limits, noise and samples ---------------------------------


def test_temperature_extremes_show_each_temperatures_weights_and_output(sine):
    p, clean, noisy, *_ = sine
    taus = [1e-6, 0.01, 10.0]
    outputs, weights = head_at_temperatures(noisy, p, taus)
    fig = temperature_limits.plot_temperature_extremes(p, clean, noisy, taus, outputs, weights)
    left, right = fig.axes[0::2], fig.axes[1::2]  # one temperature a row: weights, then output
    for k in range(3):
        np.testing.assert_array_equal(image(left[k]).get_array(), weights[k])
        np.testing.assert_array_equal(right[k].lines[2].get_ydata(), outputs[k])
    assert [ax.get_title() for ax in left] == ["$\\tau = 10^{-6}$", "$\\tau = 0.01$", "$\\tau = 10$"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ground truth", "noisy input", "attention output"]


def test_temperature_sweep_figure_puts_exact_zeros_at_the_floor(sine):
    p, _, noisy, *_ = sine
    taus = np.logspace(-8, 2, 6)
    sweep = temperature_sweep(noisy, p, taus)
    ax_w, ax_o = temperature_limits.plot_temperature_sweep(taus, sweep).axes
    assert sweep["input_gap"][0] == 0 and ax_o.lines[0].get_ydata()[0] == 1e-18
    np.testing.assert_array_equal(ax_w.lines[1].get_ydata()[:3], np.maximum(sweep["uniform"][:3], 1e-18))


def test_noise_recovery_shows_each_level_with_its_errors():
    sigmas = [0.3, 1.0]
    levels = nas.noise_levels(30, sigmas, 0.01, rng=0)
    fig = noise_and_samples.plot_noise_recovery(sigmas, levels)
    for ax, level in zip(fig.axes, levels, strict=True):
        np.testing.assert_array_equal(ax.lines[1].get_ydata(), level.noisy)
        assert f"RMSE {level.rmse_input:.2f} $\\to$ {level.rmse_output:.2f}" in ax.get_title()


def test_samples_figure_shows_two_examples_and_the_error_curve():
    examples = [nas.smoothed_sine(n, 0.3, 0.01, rng=0) for n in (10, 40)]
    fig = noise_and_samples.plot_samples([10, 20, 40], np.array([0.3, 0.3, 0.3]), np.array([0.2, 0.1, 0.05]), examples)
    ax_a, ax_b, ax_curve = fig.axes
    assert ax_a.get_title().startswith("$N = 10$") and ax_b.get_title().startswith("$N = 40$")
    assert f"{examples[1].rmse_output:.3f}" in ax_b.get_title()
    np.testing.assert_array_equal(ax_curve.lines[1].get_ydata(), [0.2, 0.1, 0.05])


# --- bias and variance, leave-one-out ------------------------------------------


def test_bias_variance_figure_draws_the_sum_and_marks_the_best_temperature():
    taus = np.logspace(-4, 0, 9)
    bias2, variance = bv.expected_risk(40, 0.3, taus)
    ax = bias_variance.plot_bias_variance(taus, bias2, variance, 0.003).axes[0]
    mse, b2, var, best = ax.lines
    np.testing.assert_array_equal(mse.get_ydata(), bias2 + variance)  # the figure adds them, as here
    np.testing.assert_array_equal(b2.get_ydata(), bias2)
    np.testing.assert_array_equal(var.get_ydata(), variance)
    assert list(best.get_xdata()) == [0.003, 0.003]


def test_power_law_figure_draws_every_measurement_and_fit():
    ns, sigmas = [20, 40, 80], [0.1, 0.2]
    n, s = np.meshgrid(ns, sigmas, indexing="ij")
    best = {"whole": 0.3 * n**-0.5 * s, "interior": 0.5 * n**-0.4 * s**0.8}
    fits = {region: laws.fit_power_law(ns, sigmas, table) for region, table in best.items()}
    fig = power_laws.plot_power_laws(ns, sigmas, best, fits)
    ax_n, ax_s = fig.axes
    points = [line for line in ax_n.lines if line.get_linestyle() == "None"]
    np.testing.assert_array_equal(np.sort(np.concatenate([line.get_ydata() for line in points])),  # as given
                               np.sort(np.concatenate([table.ravel() for table in best.values()])))
    fitted = [line for line in ax_s.lines if line.get_linestyle() == "-"]
    assert len(fitted) == len(best) * len(ns), "one fitted line per region and N"
    assert "-0.50" in fig.legends[0].get_texts()[0].get_text()


def test_edge_effect_figure_draws_the_mean_output_and_the_chosen_rows(sine):
    p, clean, _, _, _ = sine
    smoothed, weights = sa.gaussian_head(clean, p, 0.01)
    ax_s, ax_w = bias_variance.plot_edge_effect(p, clean, smoothed, weights, [0, 15, 29]).axes
    np.testing.assert_array_equal(ax_s.lines[1].get_ydata(), smoothed)
    assert [line.get_ydata()[0] for line in ax_s.lines[2:]] == [smoothed[0], smoothed[15], smoothed[29]]
    for line, query in zip(ax_w.lines, [0, 15, 29], strict=True):
        np.testing.assert_array_equal(line.get_ydata(), weights[query])


def test_leave_one_out_figure_sets_the_choice_against_the_truth():
    taus = np.logspace(-4, 0, 5)
    loo, expected = np.linspace(1, 2, 5), np.linspace(1.1, 2.1, 5)
    true_best, chosen = np.array([1e-3, 2e-3]), np.array([1.5e-3, 1e-3])
    fig = leave_one_out.plot_leave_one_out(taus, loo, expected, 1e-3, 2e-3, true_best, chosen,
                                           spread=(true_best, chosen * 3))
    ax_c, ax_r = fig.axes
    np.testing.assert_array_equal(ax_c.lines[0].get_ydata(), loo)
    np.testing.assert_array_equal(ax_c.lines[1].get_ydata(), expected)
    spread, book, diagonal = ax_r.lines
    np.testing.assert_array_equal(book.get_ydata(), chosen)
    np.testing.assert_array_equal(spread.get_ydata(), chosen * 3)
    np.testing.assert_array_equal(diagonal.get_xdata(), diagonal.get_ydata())
    without = leave_one_out.plot_leave_one_out(taus, loo, expected, 1e-3, 2e-3, true_best, chosen)
    assert len(without.axes[1].lines) == 2


# --- a learned head, heads on a step sine ------------------------------------------


def test_training_figure_draws_both_loss_curves_and_the_two_levels():
    losses = np.geomspace(1, 0.1, 6)
    (ax,) = learned_head.plot_training(losses, engineered_loss=0.2, noise_variance=0.09, leak_losses=losses / 10).axes
    learned, leak, engineered, noise = ax.lines
    np.testing.assert_array_equal(learned.get_ydata(), losses)
    np.testing.assert_array_equal(leak.get_ydata(), losses / 10)
    assert list(engineered.get_ydata()) == [0.2, 0.2] and list(noise.get_ydata()) == [0.09, 0.09]
    assert ax.get_yscale() == "log"
    assert len(learned_head.plot_training(losses, engineered_loss=0.2, noise_variance=0.09).axes[0].lines) == 3


def test_checkpoints_figure_shows_each_steps_matrix_in_order(sine):
    p, *_, weights = sine
    fig = learned_head.plot_checkpoints(p, {50: weights, 0: np.eye(30)})
    np.testing.assert_array_equal(image(fig.axes[0]).get_array(), np.eye(30))
    np.testing.assert_array_equal(image(fig.axes[1]).get_array(), weights)
    assert [ax.get_title() for ax in fig.axes] == ["after 0 steps", "after 50 steps"]


def test_learned_scores_figure_draws_the_rows_and_the_temperatures(sine):
    p = sine[0]
    scores, centred, engineered = (np.outer(p, p) * k for k in (1, 2, 3))
    fig = learned_head.plot_learned_scores(p, scores, centred, engineered, [5, 15], np.full(30, 0.01),
                                           loo_temperature=0.02, best_temperature=0.03,
                                           other_temperatures=[np.full(30, 0.04)])
    ax_raw, ax_c, ax_t = fig.axes
    np.testing.assert_array_equal(ax_raw.lines[0].get_ydata(), scores[5])
    np.testing.assert_array_equal(ax_raw.lines[1].get_ydata(), engineered[5])
    np.testing.assert_array_equal(ax_c.lines[2].get_ydata(), centred[15])
    other, learned, loo, best = ax_t.lines
    assert other.get_ydata()[0] == 0.04 and learned.get_ydata()[0] == 0.01
    assert list(loo.get_ydata()) == [0.02, 0.02] and list(best.get_ydata()) == [0.03, 0.03]


def test_leak_figure_draws_samples_predictions_and_the_weights(sine):
    p, clean, noisy, output, weights = sine
    ax_s, ax_w, _colorbar = learned_head.plot_leak(p, clean, noisy, output, weights).axes
    truth, dots, predictions = ax_s.lines
    np.testing.assert_array_equal(truth.get_ydata(), clean)
    np.testing.assert_array_equal(dots.get_ydata(), noisy)
    np.testing.assert_array_equal(predictions.get_ydata(), output)
    np.testing.assert_array_equal(image(ax_w).get_array(), weights)


def test_products_figure_shows_the_four_matrices_on_two_shared_scales():
    W_Q, W_QK = [np.eye(3), 2 * np.eye(3)], [np.full((3, 3), 5.0), np.full((3, 3), -40.0)]
    axes = learned_head.plot_products(W_Q, W_QK, ["a", "b", "c"]).axes
    for ax, matrix in zip(axes, [*W_Q, *W_QK], strict=True):
        np.testing.assert_array_equal(image(ax).get_array(), matrix)
    assert image(axes[0]).get_clim() == image(axes[1]).get_clim() == (-2.0, 2.0)
    assert image(axes[2]).get_clim() == image(axes[3]).get_clim() == (-40.0, 40.0)
    assert "-40" in [t.get_text() for t in axes[3].texts]


def test_blur_figure_shades_the_tokens_near_the_jump(sine):
    p, clean, noisy, output, _ = sine
    (ax,) = content_attention.plot_blur(p, clean, noisy, output, jump=0.5, width=0.05).axes
    np.testing.assert_array_equal(ax.lines[2].get_ydata(), output)
    (band,) = ax.patches
    # 0.5 - 0.05, then plus the width 0.1: 2 roundings on 0.55.
    np.testing.assert_allclose([band.get_x(), band.get_x() + band.get_width()], [0.45, 0.55], rtol=0,
                               atol=rounding(2, 0.55))


def test_two_heads_figure_draws_both_outputs_and_the_weights_inside_the_window(sine):
    p, clean, noisy, output, weights = sine
    other = weights[::-1]  # (n, n): another attention matrix, rows flipped
    fig = content_attention.plot_two_heads(p, clean, noisy, {"a": output, "b": -output}, {"a": weights, "b": other},
                                           jump=0.5, width=0.05, window=(0.3, 0.7))
    ax_s, ax_a, ax_b = fig.axes
    np.testing.assert_array_equal(ax_s.lines[2].get_ydata(), output)
    np.testing.assert_array_equal(ax_s.lines[3].get_ydata(), -output)
    inside = (p >= 0.3) & (p <= 0.7)
    np.testing.assert_array_equal(image(ax_a).get_array(), weights[np.ix_(inside, inside)])
    np.testing.assert_array_equal(image(ax_b).get_array(), other[np.ix_(inside, inside)])


def test_errors_figure_draws_a_bar_per_head_and_region_and_the_product():
    errors = {"a": {"near": 0.3, "away": 0.1}, "b": {"near": 0.2, "away": 0.15}}
    W_QK = np.arange(25.0).reshape(5, 5) - 12
    ax_b, ax_m = content_attention.plot_errors(errors, W_QK, list("abcde")).axes
    assert [bar.get_height() for bar in ax_b.patches] == [0.3, 0.2, 0.1, 0.15]
    assert "-12" in [t.get_text() for t in ax_m.texts]


def test_the_derivative_figure_calls_its_dots_exact_and_its_line_the_formula(sine):
    """The noise of the layer, sigma sqrt(sum_j b_ij**2), is computed, not measured on draws."""
    p, clean, _, output, _ = sine
    offsets = np.geomspace(0.01, 0.2, 5)
    noise, leading = 1 / offsets, 1.1 / offsets
    fig = multihead.plot_derivative(p, clean, output, p > 0.3, offsets, noise, leading, 0.05)
    ax_n = fig.axes[1]
    assert [t.get_text() for t in fig.legends[0].get_texts()][-2:] == ["exact", "formula"]
    np.testing.assert_array_equal(ax_n.lines[0].get_ydata(), noise)
    np.testing.assert_array_equal(ax_n.lines[1].get_ydata(), leading)


# --- no pyplot, no global state ----------------------------------------------------

#: Draws every public figure function in a fresh interpreter.
DRAW_EVERY_FIGURE = """
import sys, matplotlib
rc = lambda: {k: matplotlib.rcParams[k] for k in matplotlib.rcParams if k != "backend"}
before = rc()
import numpy as np
import selfattention as sa
from selfattention.figures import (bias_variance, causal, content_attention, diagrams, dk_scaling, gaussian_band,
                                   learned_head, leave_one_out, multihead, noise_and_samples, onedim, positional,
                                   power_laws, rotary, sinusoidal, smoothing, temperature_limits)
from selfattention.studies import gaussian_band as gb, noise_and_samples as nas, power_laws as pl
from selfattention.studies import dk_scaling as dks, onedim as od, temperature_limits as tl
p, c, y = sa.noisy_sine(30, 0.3, rng=0)
o, w = sa.gaussian_head(y, p, 0.01)
taus = np.logspace(-6, 2, 5)
ns, sigmas = [20, 40], [0.1, 0.2]
best = {"whole": np.array([[1e-3, 2e-3], [7e-4, 1.4e-3]]), "interior": np.array([[2e-3, 3e-3], [1.5e-3, 2.4e-3]])}
from selfattention.figures import approximate_heads as ah, cost as cf, induction as ind, linear_memory as lm
from selfattention import induction, tokens
run = induction.run_circuit(tokens.from_text("abcabc"), induction.hand_built_circuit(26, 7))
letters = tokens.to_text(tokens.from_text("abcabc"), start=True)
ops = [[1.0, 10.0], [2.0, 0.1]]
panel = {m: {"operations": np.array(ops[0]), "errors": np.array(ops[1])} for m in ("window", "fourier", "spread")}
errors = {m: np.array([[0.3, 0.1], [0.2, 0.05]]) for m in ("fourier", "performer", "spread")}
from selfattention.figures import circuits as fc, feature_error as ffe, low_rank as flr, quadrature as fq
from selfattention.figures import in_context as fic
entry = {"counts": [4, 16], "grid_sizes": [4, 16], "grid": [1e-3, 1e-18],
         "bumps": [[0.3, 0.1], [0.2, 0.05]], "cosines": [[0.2, 0.1], [0.3, 0.1]]}
figures = [
    fq.plot_grid_errors([4, 8], [1e-3, 0.0], [[0.3, 0.1], [0.2, 0.05]]),
    fic.plot_prompts([{"inputs": [0.1, 0.5], "labels": [1.0, -1.0], "grid": [0.0, 0.5, 1.0], "title": "a",
                       "least squares": [1.0, 0.0, -1.0], "one step": [0.5, 0.0, -0.5]}]),
    fic.plot_learner_errors([2, 4], {k: {"least squares": [1.0, 0.5], "one step": [1.2, 0.8]}
                                     for k in ("linear", "sine")}, dimension=2),
    fic.plot_layer_errors([1, 2], [1.0, 0.5], [1.0, 0.5], 0.1),
    fq.plot_dimension_errors({1: entry, 2: entry}, [1, 2]),
    flr.plot_singular_values([0.1, 1.0], [[1.0, 0.1, 0.0], [1.0, 1e-3, 1e-9]], [2, 1], 1e-6),
    fc.plot_circuits({"QK": np.eye(3), "OV": -np.eye(3)}),
    ffe.plot_uniform_errors([16, 64], [[0.3, 0.1], [0.4, 0.2]], [2.0, 1.0]),
    ffe.plot_ratio_spread([0.0, 0.5, 1.0], [16, 64], [[1.0, 0.5, 1.0], [0.5, 0.2, 0.5]],
                          [[2.0, 0.6, 3.0], [0.5, 0.3, 0.5]]),
    cf.plot_quadratic_wall([10, 20], [400, 1600], [800, 3200], 15, [10, 20], [1.0, 4.0], "a machine"),
    cf.plot_decoding([10, 20], [3.0, 9.0], [1.0, 2.0], [10, 20], [1.0, 3.0], [1.0, 2.0], "a machine"),
    cf.plot_times({"exact": ([10, 20], [1.0, 4.0]), "fourier-64": ([10, 20], [2.0, 3.0])},
                  {"exact": "exact", "fourier-64": "cosines"}, {"fourier-64": 15.0}, "a machine"),
    ah.plot_feature_errors([4, 8], errors, {"fourier": -0.5, "performer": 0.0, "spread": -0.5}),
    ah.plot_denominators(p, y, y + 2, o, o, o),
    ah.plot_window_errors([1.0, 2.0], [0.1, 0.01], [0.3, 0.02]),
    ah.plot_cost_and_error([panel, panel], ["one", "two"]),
    ah.plot_exact_and_features(p, c, y, o, o, 8),
    lm.plot_peak_memory([10, 20], [1e3, 4e3], [10, 20, 40], [1e3, 2e3, 4e3], [1.0, 4.0], [1.0, 4.0, 16.0], 15,
                        "a machine"),
    lm.plot_layer_cost([10, 20, 40], [4.0, 8.0, 16.0], [1.0, 4.0, 16.0], [8.0, 16.0, 32.0], 16.0, 48.0),
    ind.plot_layers(run.weights, letters),
    ind.plot_stream(run.streams[2][:, :12], {"token": 3, "position": 3, "previous": 3, "prediction": 3},
                    letters),
    ind.plot_accuracy({"a": np.linspace(0, 1, 6)}, 0.05, 3),
    ind.plot_circuit_training(np.linspace(3, 1, 50), {"x": ([0, 10], [0.1, 0.9])}, {"x": 0.95}),
    diagrams.draw_overview(),
    diagrams.draw_detailed(),
    dk_scaling.plot_dk_scaling(dks.dk_scaling_experiment([1, 2], n_queries=5, n_pairs=5, rng=0)),
    smoothing.plot_noisy_signal(p, c, y),
    smoothing.plot_smoothing(p, c, y, o, w),
    onedim.plot_onedim_head(p, c, y, *od.onedim_head(y)),
    onedim.plot_strength_sweep(taus, taus, 0.3),
    gaussian_band.plot_attention_band(p, gb.band_weights(p, 0.01), 0.01, 0.07),
    gaussian_band.plot_row_profiles(p, [0.001, 0.01], 15, *gb.row_profiles(p, [0.001, 0.01], 15)),
    temperature_limits.plot_temperature_extremes(p, c, y, taus[:3], *tl.head_at_temperatures(y, p, taus[:3])),
    temperature_limits.plot_temperature_sweep(taus, tl.temperature_sweep(y, p, taus)),
    noise_and_samples.plot_noise_recovery([0.3, 1.0], nas.noise_levels(30, [0.3, 1.0], 0.01, rng=0)),
    noise_and_samples.plot_samples([10, 20], np.ones(2), np.ones(2),
                                   [nas.smoothed_sine(n, 0.3, 0.01, rng=0) for n in (10, 20)]),
    bias_variance.plot_bias_variance(taus, taus, taus, 0.01),
    power_laws.plot_power_laws(ns, sigmas, best, {k: pl.fit_power_law(ns, sigmas, t) for k, t in best.items()}),
    bias_variance.plot_edge_effect(p, c, o, w, [0, 29]),
    leave_one_out.plot_leave_one_out(taus, taus, taus, 0.01, 0.01, taus, taus, spread=(taus, taus)),
    learned_head.plot_training(taus, engineered_loss=0.2, noise_variance=0.1, leak_losses=taus / 10),
    learned_head.plot_checkpoints(p, {0: w, 5: w}),
    learned_head.plot_learned_scores(p, -w, -w, -w, [5, 10, 15], np.full(30, 0.01), loo_temperature=0.01,
                                     best_temperature=0.02, other_temperatures=[np.full(30, 0.02)]),
    learned_head.plot_leak(p, c, y, o, w),
    learned_head.plot_products((np.eye(3), 2 * np.eye(3)), (np.eye(3), np.eye(3)), ["a", "b", "c"]),
    content_attention.plot_blur(p, c, y, o, jump=0.5, width=0.05),
    content_attention.plot_two_heads(p, c, y, {"a": o, "b": o}, {"a": w, "b": w}, jump=0.5, width=0.05),
    content_attention.plot_errors({"a": {"near": 0.3, "away": 0.1}}, np.eye(5), list("abcde")),
    multihead.plot_offset_heads(p, c, y, {"a": w[3], "b": w[9]}, {"a": o, "b": y}, 3),
    multihead.plot_derivative(p, c, o, p > 0.3, taus, taus, taus, 0.05),
    multihead.plot_jackknife_weights(p, {"a": w[:2], "b": w[2:4], "c": w[4:6]}, ["one", "two"]),
    multihead.plot_error_laws(ns, sigmas, {"one head": best, "two heads": best},
                              {k: {r: pl.fit_power_law(ns, sigmas, t) for r, t in best.items()}
                               for k in ("one head", "two heads")}),
    multihead.plot_derivative_layer(p, c, y, np.stack([o, y]), np.stack([w, w]), o, c),
    positional.plot_kernel_rows(p, {"a": w, "b": w}, [3, 20]),
    positional.plot_head_outputs(p, c, y, {"a": o, "b": y}, {"a": 0.1, "b": 0.3}),
    sinusoidal.plot_aliasing(taus, [1.0, 3.0], np.zeros((2, 5)), 0.01, taus, taus, 0.1),
    rotary.plot_extrapolation(p, c, y, {"a": o, "b": y}, {"a": w, "b": w}, 4, set_up_span=0.5),
    causal.plot_causal(p, c, y, {"a": o, "b": y}, {"a": w, "b": w}, 4, [0.0, 0.1],
                       {"lag": [0.1, 0.0], "neighbours": [2.0, 1.0], "rmse": [0.2, 0.1]}, chosen=0.1),
]
assert all(fig._repr_png_().startswith(b"\\x89PNG") for fig in figures)
assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
assert rc() == before, "rcParams changed"
"""


def public_figure_functions() -> set[str]:
    names = set()
    for info in pkgutil.iter_modules(selfattention.figures.__path__):
        if not info.name.startswith("_") and info.name != "panels":
            module = importlib.import_module(f"selfattention.figures.{info.name}")
            names |= {name for name, obj in inspect.getmembers(module, inspect.isfunction)
                      if obj.__module__ == module.__name__ and not name.startswith("_")}
    return names


def test_every_figure_draws_without_pyplot_or_global_state():
    assert set(re.findall(r"\.(\w+)\(", DRAW_EVERY_FIGURE)) >= public_figure_functions(), "draw every figure"
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(DRAW_EVERY_FIGURE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_figures_render_reproducible_pngs(sine):
    first, second = (smoothing.plot_smoothing(*sine)._repr_png_() for _ in range(2))
    assert first == second
    assert imread(BytesIO(first)).shape[0] > 100


def full_colour_png(fig) -> bytes:
    """``fig`` as savefig renders it, in the style the package renders it in."""
    import matplotlib

    from selfattention.figures._style import DPI, STYLE

    buf = BytesIO()
    with matplotlib.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def test_figures_are_palette_pngs_that_look_the_same(sine):
    from PIL import Image

    fig = smoothing.plot_smoothing(*sine)
    full, small = full_colour_png(fig), fig._repr_png_()
    assert len(small) < 0.5 * len(full)
    with Image.open(BytesIO(small)) as palette, Image.open(BytesIO(full)) as original:
        assert palette.mode == "P" and len(palette.getcolors(PALETTE)) <= PALETTE
        a = np.asarray(palette.convert("RGB"), dtype=float)  # (h, w, 3)
        b = np.asarray(original.convert("RGB"), dtype=float)
    psnr = 10 * np.log10(255**2 / np.mean((a - b) ** 2))
    assert psnr > 40, f"{psnr:.1f} dB"


def test_palette_png_leaves_transparent_and_palette_images_alone():
    from PIL import Image

    for mode, pixel in (("RGBA", (10, 20, 30, 0)), ("P", 3)):
        buf = BytesIO()
        Image.new(mode, (8, 8), pixel).save(buf, "PNG")
        assert palette_png(buf.getvalue()) == buf.getvalue()


# --- the positional heads (chapter "Where tokens are, and what they may see") --------------------


def test_the_kernel_rows_figure_draws_each_matrix_and_its_rows_over_the_first(sine):
    from selfattention.figures import positional

    p, *_, weights = sine
    other = np.roll(weights, 1, axis=1)
    fig = positional.plot_kernel_rows(p, {"first": weights, "other": other}, [5, 20])
    images = [ax.get_images()[0] for ax in fig.axes[0:4:2]]  # one head a row: its matrix, then its rows
    np.testing.assert_array_equal(images[1].get_array(), other)
    assert images[0].get_clim() == images[1].get_clim() == (0, max(weights[[5, 20]].max(), other[[5, 20]].max()))
    solid = [line.get_ydata() for line in fig.axes[3].lines if line.get_linestyle() == "-"]
    dashed = [line.get_ydata() for line in fig.axes[3].lines if line.get_linestyle() == "--"]
    np.testing.assert_array_equal(solid[0], other[5])
    np.testing.assert_array_equal(dashed[1], weights[20])
    with pytest.raises(ValueError, match="queries must be at most 3 indices below 30"):
        positional.plot_kernel_rows(p, {"first": weights}, [1, 2, 3, 30])


def test_the_outputs_figure_titles_each_head_with_its_error(sine):
    from selfattention.figures import positional

    p, clean, noisy, output, _ = sine
    fig = positional.plot_head_outputs(p, clean, noisy, {"a": output, "b": clean}, {"a": 0.1234, "b": 0.0})
    assert [ax.get_title() for ax in fig.axes] == ["a\nRMSE 0.123", "b\nRMSE 0.000"]
    with pytest.raises(TypeError, match="errors must map the heads of outputs"):
        positional.plot_head_outputs(p, clean, noisy, {"a": output}, {"b": 0.1})


def test_the_aliasing_figure_draws_each_profile_and_the_sweep():
    from selfattention.figures import sinusoidal

    u = np.linspace(0, 1, 5)
    profiles = np.array([[0, -1, -2, -3, -4], [0, -2, 0, -2, 0]], dtype=float)
    fig = sinusoidal.plot_aliasing(u, [np.pi, 3 * np.pi], profiles, 0.01, [1.0, 2.0], [0.1, 0.5], 0.09)
    ax_k, ax_e = fig.axes
    np.testing.assert_array_equal(ax_k.lines[2].get_ydata(), profiles[1])
    assert [line.get_label() for line in ax_k.lines[1:]] == ["$\\omega\\,$span $= \\pi$", "$\\omega\\,$span $= 3\\pi$"]
    np.testing.assert_allclose(ax_e.lines[0].get_xdata(), np.array([1.0, 2.0]) / np.pi)
    with pytest.raises(ValueError, match="profiles must have shapes"):
        sinusoidal.plot_aliasing(u, [1.0], profiles, 0.01, [1.0], [0.1], 0.1)


def test_the_extrapolation_and_causal_figures_draw_the_rows_of_their_query(sine):
    from selfattention.figures import causal, rotary

    p, clean, noisy, output, weights = sine
    uniform = np.full_like(weights, 1 / 30)
    fig = rotary.plot_extrapolation(p, clean, noisy, {"r": output, "g": clean}, {"r": weights, "g": uniform}, 7,
                                    set_up_span=0.4)
    np.testing.assert_array_equal(fig.axes[1].lines[0].get_ydata(), weights[7])
    sweep = {"lag": [0.2, 0.1], "neighbours": [3.0, 2.0], "rmse": [0.3, 0.2]}
    fig = causal.plot_causal(p, clean, noisy, {"a": output}, {"a": weights}, 9, [0.0, 0.2], sweep, chosen=0.2)
    np.testing.assert_array_equal(fig.axes[1].lines[0].get_ydata(), weights[9])
    np.testing.assert_array_equal(fig.axes[3].lines[0].get_ydata(), sweep["neighbours"])
    assert fig.axes[2].lines[1].get_xdata()[0] == 0.2, "the chosen offset is marked"
    with pytest.raises(ValueError, match="one entry per offset"):
        causal.plot_causal(p, clean, noisy, {"a": output}, {"a": weights}, 9, [0.0], sweep)


def test_the_times_mark_each_crossing_with_its_heads_own_marker_and_colour():
    """Each head has a colour and a marker of its own; its crossing is a filled mark of both, ringed in white
    over the lines, and its label stands by its line's end (issue 40: two cosine heads shared a colour)."""
    from selfattention.figures import cost as cf

    timings = {"exact": ([10, 20], [1.0, 4.0]), "fourier-64": ([10, 20], [2.0, 3.0]),
               "fourier-512": ([10, 20], [2.0, 3.5]), "spread-128": ([10, 20], [0.5, 1.0])}
    crossings = {"fourier-64": 15.0, "fourier-512": 18.0, "spread-128": 10.0}
    fig = cf.plot_times(timings, {k: k for k in timings}, crossings, "a machine")
    lines = {line.get_label(): line for line in fig.axes[0].lines if line.get_xdata().size == 2}
    marks = [line for line in fig.axes[0].lines if line.get_xdata().size == 1]
    assert [m.get_xdata()[0] for m in marks] == list(crossings.values())
    for name, mark in zip(crossings, marks, strict=True):
        assert mark.get_marker() == lines[name].get_marker() == cf.METHOD_STYLES[name][1], name
        assert mark.get_markerfacecolor() == lines[name].get_color() and mark.get_markeredgecolor() == "white"
    colours = [line.get_color() for line in lines.values()]
    assert len(set(colours)) == len(colours), colours
    written = {text.get_text().replace("\n", ", "): text.get_color() for text in fig.axes[0].texts}
    assert written == {name: lines[name].get_color() for name in timings}
    assert fig.axes[0].get_legend() is None and not fig.legends


def test_measured_sizes_label_their_axis_when_few_powers_of_ten_lie_between():
    """The bench's sizes, 256 to 8,192, hold one power of ten: every other size is labelled instead."""
    from selfattention.figures import cost as cf

    measured = [256, 512, 1024, 2048, 4096, 8192]
    fig = cf.plot_quadratic_wall([10, 1000, 100000], [1e2, 1e6, 1e10], [8e2, 8e6, 8e10], 13377,
                                 measured, [1e-3, 2e-3, 5e-3, 3e-2, 0.1, 0.5], "a machine")
    counted, timed = ([t.get_text() for t in ax.get_xticklabels() if t.get_text()] for ax in fig.axes)
    assert timed == ["256", "1,024", "4,096"]
    assert len(counted) >= 2 and all("10^" in text for text in counted)  # five decades: powers of ten
