"""The notebook widget explore() returns: defaults, redraws, the best-tau button, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from selfattention import choose_temperature, defaults, noisy_sine
from selfattention.interactive import widget as w


@pytest.fixture
def smoothing_widget():
    return w.explore()


def test_starts_on_the_books_defaults(smoothing_widget):
    assert isinstance(smoothing_widget, w.SmoothingWidget)
    assert (smoothing_widget.n.value, smoothing_widget.sigma.value) == (defaults.N, defaults.SIGMA)
    assert smoothing_widget.tau.value == pytest.approx(defaults.TEMPERATURE)
    assert (smoothing_widget.n.min, smoothing_widget.n.max) == defaults.N_RANGE
    assert (smoothing_widget.sigma.min, smoothing_widget.sigma.max) == defaults.SIGMA_RANGE
    tau_range = 10.0 ** np.array([smoothing_widget.tau.min, smoothing_widget.tau.max])
    assert tau_range == pytest.approx(defaults.TEMPERATURE_RANGE)


def test_image_is_the_package_figure_for_the_slider_values(smoothing_widget):
    expected = w.smoothing_figure(defaults.N, defaults.SIGMA, defaults.TEMPERATURE)._repr_png_()
    assert smoothing_widget.image.value == expected


@pytest.mark.parametrize(("slider", "value"), [("sigma", 0.8), ("tau", 0.05), ("n", 250)])
def test_every_slider_redraws_the_figure(smoothing_widget, slider, value):
    before = smoothing_widget.image.value
    getattr(smoothing_widget, slider).value = value
    assert smoothing_widget.image.value != before
    current = (smoothing_widget.n.value, smoothing_widget.sigma.value, smoothing_widget.tau.value)
    assert smoothing_widget.image.value == w.smoothing_figure(*current)._repr_png_()


def test_noise_stays_fixed_across_redraws():
    widget = w.explore(rng=np.random.default_rng(7))
    first = widget.image.value
    widget.tau.value = 0.1
    widget.tau.value = defaults.TEMPERATURE
    assert widget.image.value == first


def test_best_tau_button_sets_the_leave_one_out_choice(smoothing_widget):
    smoothing_widget.sigma.value = 0.5
    before = smoothing_widget.image.value
    smoothing_widget.best.click()
    expected = w.leave_one_out_temperature(defaults.N, 0.5)
    assert smoothing_widget.tau.value == pytest.approx(expected, rel=1e-9)
    assert f"{expected:.3g}" in smoothing_widget.message.value
    assert smoothing_widget.image.value != before


def test_the_buttons_coarse_grid_lands_within_one_step_of_the_fine_choice():
    positions, _, noisy = noisy_sine(defaults.N, 0.5, rng=defaults.SEED)
    fine, _ = choose_temperature(noisy, positions)
    coarse = w.leave_one_out_temperature(defaults.N, 0.5)
    step = np.exp(np.mean(np.diff(np.log(w.BEST_TAU_CANDIDATES))))  # the grid's ratio
    np.testing.assert_allclose(np.diff(np.log(w.BEST_TAU_CANDIDATES)), np.log(step))
    assert w.BEST_TAU_CANDIDATES[[0, -1]] == pytest.approx(defaults.TEMPERATURE_RANGE), "the slider's range"
    assert fine / step <= coarse <= fine * step


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n": 2}, "n"), ({"n": 10.5}, "n"), ({"n": 5000}, "n"), ({"sigma": -0.1}, "sigma"),
     ({"sigma": 9.0}, "sigma"), ({"temperature": 0.0}, "temperature"), ({"temperature": 100.0}, "temperature")],
)
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        w.explore(**kwargs)
