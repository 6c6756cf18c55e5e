"""The notebook widget explore() returns: defaults, redraws, the best-tau button, bad input."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from tolerances import rounding

from selfattention import choose_temperature, defaults, kernel, noisy_sine
from selfattention.interactive import widget as w
from selfattention.interactive.explorer_data import explorer_data


@pytest.fixture
def smoothing_widget():
    return w.explore()


def test_starts_on_the_books_defaults(smoothing_widget):
    assert isinstance(smoothing_widget, w.SmoothingWidget)
    assert (smoothing_widget.n.value, smoothing_widget.sigma.value) == (defaults.N, defaults.SIGMA)
    assert smoothing_widget.tau.value == defaults.TEMPERATURE  # a slider keeps the value it is given
    assert (smoothing_widget.n.min, smoothing_widget.n.max) == defaults.N_RANGE
    assert (smoothing_widget.sigma.min, smoothing_widget.sigma.max) == defaults.SIGMA_RANGE
    tau_range = 10.0 ** np.array([smoothing_widget.tau.min, smoothing_widget.tau.max])
    assert tau_range == pytest.approx(defaults.TEMPERATURE_RANGE, rel=rounding(2), abs=0)  # log10, then a power


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
    assert smoothing_widget.tau.value == expected  # the button sets the candidate it picked
    assert f"{expected:.3g}" in smoothing_widget.message.value
    assert smoothing_widget.image.value != before


@pytest.mark.parametrize(("n", "sigma"), [(5, 0.6), (50, 0.0), (100, 0.3), (1000, 1.5)])
def test_the_button_searches_the_explorers_grid_with_the_same_tie_rule(n, sigma):
    """One grid and one tie rule for both "best tau" controls (the explorer's are checked in the browser)."""
    assert inspect.signature(w.leave_one_out_temperature).parameters["candidates"].default is None
    assert kernel.candidate_temperatures(None) is kernel.DEFAULT_CANDIDATES
    data = explorer_data()
    assert data["candidates"] == kernel.DEFAULT_CANDIDATES.tolist()
    assert data["tie_tolerance"] == kernel.TIE_TOLERANCE
    positions, _, noisy = noisy_sine(n, sigma, rng=defaults.SEED)
    assert w.leave_one_out_temperature(n, sigma) == choose_temperature(noisy, positions)[0]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n": 2}, "n"), ({"n": 10.5}, "n"), ({"n": 5000}, "n"), ({"sigma": -0.1}, "sigma"),
     ({"sigma": 9.0}, "sigma"), ({"temperature": 0.0}, "temperature"), ({"temperature": 100.0}, "temperature")],
)
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        w.explore(**kwargs)


@pytest.mark.parametrize(("slider", "previous"), [("tau", defaults.TEMPERATURE), ("sigma", defaults.SIGMA)])
def test_a_slider_set_to_nan_from_code_refuses_it_and_keeps_its_value(smoothing_widget, slider, previous):
    """ipywidgets clamps values into the range but lets NaN through: the slider stayed at NaN."""
    before = smoothing_widget.image.value
    with pytest.raises(ValueError, match=rf"^{slider} must be a number, got nan"):
        getattr(smoothing_widget, slider).value = float("nan")
    assert getattr(smoothing_widget, slider).value == previous  # kept as it was
    assert smoothing_widget.image.value == before


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n": 2}, "n"), ({"n": 5000}, "n"), ({"sigma": 9.0}, "sigma"), ({"sigma": -0.1}, "sigma"),
     ({"temperature": 100.0}, "temperature"), ({"temperature": 1e-12}, "temperature")],
)
def test_the_figure_and_the_leave_one_out_choice_check_the_slider_ranges_like_explore(kwargs, name):
    arguments = {"n": defaults.N, "sigma": defaults.SIGMA, "temperature": defaults.TEMPERATURE, **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        w.smoothing_figure(**arguments)
    if name != "temperature":
        with pytest.raises(ValueError, match=rf"^{name} must"):
            w.leave_one_out_temperature(arguments["n"], arguments["sigma"])


def test_sliders_take_the_width_of_the_output_area(smoothing_widget):
    """ipywidgets' default (300 px with the label and the readout) left an 85-px track on a phone and on a
    desktop alike: each slider, and every box around it, is as wide as the output area (up to a line's
    width), its label column narrow."""
    controls, image = smoothing_widget.children
    for box in (smoothing_widget, controls):
        assert box.layout.width == "100%"
    for slider in (smoothing_widget.sigma, smoothing_widget.tau, smoothing_widget.n):
        assert slider.layout.width == "100%" and slider.layout.max_width == w.SLIDER_MAX_WIDTH
        assert slider.style.description_width == w.SLIDER_LABEL_WIDTH
    assert image.layout.width == "100%"
