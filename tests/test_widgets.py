"""The explore() widget: defaults, redraws, the best-tau button, static mode."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

from selfattention import choose_temperature, noisy_sine, settings
from selfattention import widgets as w

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def live(monkeypatch):
    """A live kernel's environment: the build's static flag is not set."""
    monkeypatch.delenv(w.STATIC_ENV, raising=False)


@pytest.fixture
def explorer(live):
    return w.explore()


def test_starts_on_the_books_settings(explorer):
    assert isinstance(explorer, w.Explorer)
    assert (explorer.n.value, explorer.sigma.value) == (settings.N, settings.SIGMA)
    assert explorer.tau.value == pytest.approx(settings.TEMPERATURE)
    assert (explorer.n.min, explorer.n.max) == settings.N_RANGE
    assert (explorer.sigma.min, explorer.sigma.max) == settings.SIGMA_RANGE
    assert 10.0 ** np.array([explorer.tau.min, explorer.tau.max]) == pytest.approx(settings.TEMPERATURE_RANGE)


def test_image_is_the_package_figure_for_the_slider_values(explorer):
    expected = w.smoothing_figure(settings.N, settings.SIGMA, settings.TEMPERATURE)._repr_png_()
    assert explorer.image.value == expected


@pytest.mark.parametrize(("slider", "value"), [("sigma", 0.8), ("tau", 0.05), ("n", 250)])
def test_every_slider_redraws_the_figure(explorer, slider, value):
    before = explorer.image.value
    getattr(explorer, slider).value = value
    assert explorer.image.value != before
    current = (explorer.n.value, explorer.sigma.value, explorer.tau.value)
    assert explorer.image.value == w.smoothing_figure(*current)._repr_png_()


def test_noise_stays_fixed_across_redraws(live):
    explorer = w.explore(rng=np.random.default_rng(7))
    first = explorer.image.value
    explorer.tau.value = 0.1
    explorer.tau.value = settings.TEMPERATURE
    assert explorer.image.value == first


def test_best_tau_button_sets_the_leave_one_out_choice(explorer):
    explorer.sigma.value = 0.5
    before = explorer.image.value
    explorer.best.click()
    expected = w.best_temperature(settings.N, 0.5)
    assert explorer.tau.value == pytest.approx(expected, rel=1e-9)
    assert f"{expected:.3g}" in explorer.message.value
    assert explorer.image.value != before
    # The button's coarse grid lands within one grid step of the package's fine choice.
    positions, _, noisy = noisy_sine(settings.N, 0.5, rng=settings.SEED)
    fine, _ = choose_temperature(noisy, positions)
    step = 10 ** (1 / 8)  # the button's grid has 8 candidates per decade
    np.testing.assert_allclose(np.diff(np.log10(w.BEST_TAU_CANDIDATES)), 1 / 8)
    assert fine / step <= expected <= fine * step


def test_static_build_gets_a_still_figure(monkeypatch):
    monkeypatch.setenv(w.STATIC_ENV, "1")
    fig = w.explore()
    assert isinstance(fig, Figure)
    assert fig._repr_png_() == w.smoothing_figure(settings.N, settings.SIGMA, settings.TEMPERATURE)._repr_png_()


@pytest.mark.parametrize("value", ["", "0"])
def test_unset_or_zero_flag_means_live(monkeypatch, value):
    monkeypatch.setenv(w.STATIC_ENV, value)
    assert isinstance(w.explore(), w.Explorer)


def test_explicit_static_argument_wins(monkeypatch):
    monkeypatch.setenv(w.STATIC_ENV, "1")
    assert isinstance(w.explore(static=False), w.Explorer)
    monkeypatch.delenv(w.STATIC_ENV)
    assert isinstance(w.explore(static=True), Figure)


def test_book_build_sets_the_flag_explore_reads():
    spec = importlib.util.spec_from_file_location("live_code", ROOT / "_ext" / "live_code" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.STATIC_ENV == w.STATIC_ENV


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n": 2}, "n"), ({"n": 10.5}, "n"), ({"n": 5000}, "n"), ({"sigma": -0.1}, "sigma"),
     ({"sigma": 9.0}, "sigma"), ({"temperature": 0.0}, "temperature"), ({"temperature": 100.0}, "temperature")],
)
def test_bad_input_names_the_argument(live, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        w.explore(**kwargs)
