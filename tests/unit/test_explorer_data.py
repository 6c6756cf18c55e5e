"""The build-time data of the in-page explorer (selfattention.interactive.explorer_data).

The JavaScript rebuilds the book's signal from this data alone, so these tests
pin the contract it relies on: the embedded draws, positions and formula give
back exactly what the Python figures draw.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import selfattention as sa
from selfattention import defaults
from selfattention.interactive.circuit_data import circuit_explorer_data
from selfattention.interactive.explorer_data import (
    explorer_data,
    explorer_json,
    fallback_series,
    layer_data,
    layer_series,
)
from selfattention.kernel import DEFAULT_CANDIDATES

EXPLORER_JS = Path(__file__).resolve().parents[2] / "_ext" / "attention_explorer" / "static" / "attention_explorer.js"


def js_noisy_sine(data, n, sigma):
    """What attention_explorer.js computes, written out in numpy."""
    step = 1 / (n - 1)
    positions = np.arange(n) * step
    positions[-1] = 1.0
    clean = np.sin(2 * np.pi * data["periods"] * positions)
    return positions, clean, clean + sigma * np.asarray(data["noise"][:n])


def test_defaults_and_ranges_come_from_the_books_defaults():
    data = explorer_data()
    assert (data["n"], data["sigma"], data["temperature"]) == (defaults.N, defaults.SIGMA, defaults.TEMPERATURE)
    assert data["seed"] == defaults.SEED and data["periods"] == defaults.PERIODS
    assert tuple(data["n_range"]) == defaults.N_RANGE
    assert tuple(data["sigma_range"]) == defaults.SIGMA_RANGE
    assert tuple(data["temperature_range"]) == defaults.TEMPERATURE_RANGE


def test_noise_is_the_books_draws_for_the_largest_n():
    data = explorer_data()
    assert len(data["noise"]) == defaults.N_RANGE[1]
    np.testing.assert_array_equal(data["noise"], sa.unit_noise(defaults.N_RANGE[1], defaults.SEED))


def test_candidates_are_those_of_choose_temperature():
    np.testing.assert_array_equal(explorer_data()["candidates"], DEFAULT_CANDIDATES)
    assert explorer_data(candidates=[0.1, 1.0])["candidates"] == [0.1, 1.0]


@pytest.mark.parametrize("n, sigma", [(5, 0.0), (100, 0.3), (333, 1.5), (defaults.N_RANGE[1], 0.7)])
def test_embedded_data_rebuild_the_books_signal_exactly(n, sigma):
    data = explorer_data()
    expected = sa.noisy_sine(n, sigma, periods=data["periods"], rng=data["seed"])
    for got, want in zip(js_noisy_sine(data, n, sigma), expected, strict=True):
        # Exactly: the same operations on the same numbers (numpy's linspace is i * (1 / (n - 1)), last 1; with
        # one period, 2 pi times the period is 2 pi exactly, so the order of the products does not matter).
        np.testing.assert_array_equal(got, want)


def test_every_key_is_read_by_the_javascript_or_the_fallback():
    """No dead keys: the JS reads ``this.data.<key>`` (or ``d.<key>`` after ``const d = this.data``).

    It reads the keys of every kind, the one head's, the layer's and the
    induction circuit's; ``layer`` picks the kind (``data.layer``, before an
    explorer exists).
    """
    js = EXPLORER_JS.read_text()
    assert "const d = this.data;" in js and "KINDS[data.layer]" in js
    read = set(re.findall(r"this\.data\.(\w+)", js)) | set(re.findall(r"\bd\.(\w+_range)\b", js))
    head, layer = set(explorer_data()), set(layer_data("derivative"))
    circuit = set(circuit_explorer_data())
    assert head <= read | {"seed"}  # the seed is read by fallback_series
    assert layer <= read | {"seed", "layer"}
    assert circuit <= read | {"layer"}
    assert read == (head | layer | circuit) - {"seed", "layer"}


def test_json_round_trips_every_float_exactly():
    assert json.loads(explorer_json()) == explorer_data()


def test_start_settings_can_be_chosen_and_the_fallback_draws_them():
    data = explorer_data(n=50, sigma=0.5, temperature=0.01)
    assert (data["n"], data["sigma"], data["temperature"]) == (50, 0.5, 0.01)
    positions, clean, noisy, output, weights = fallback_series(data)
    p, c, y = sa.noisy_sine(50, 0.5, rng=defaults.SEED)
    out, w = sa.gaussian_head(y, p, 0.01)
    for got, want in zip((positions, clean, noisy, output, weights), (p, c, y, out, w), strict=True):
        np.testing.assert_array_equal(got, want)  # the same calls of the package


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": defaults.N_RANGE[1] + 1}, "n"),
        ({"n": 2.5}, "n"),
        ({"sigma": -0.1}, "sigma"),
        ({"sigma": defaults.SIGMA_RANGE[1] * 2}, "sigma"),
        ({"temperature": 0.0}, "temperature"),
        ({"temperature": defaults.TEMPERATURE_RANGE[1] * 10}, "temperature"),
        ({"candidates": []}, "candidates"),
        ({"candidates": [0.1, -1.0]}, "candidates"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        explorer_data(**kwargs)


def test_the_layers_data_start_and_ranges_come_from_the_defaults():
    data = layer_data("derivative")
    assert (data["n"], data["sigma"], data["temperature"], data["offset"]) == (defaults.N, defaults.SIGMA, 0.004, 0.1)
    assert tuple(data["temperature_range"]) == defaults.LAYER_TEMPERATURE_RANGE
    assert tuple(data["offset_range"]) == defaults.OFFSET_RANGE and data["offset_step"] == defaults.OFFSET_STEP
    np.testing.assert_array_equal(data["noise"], sa.unit_noise(defaults.N_RANGE[1], defaults.SEED))
    assert json.loads(explorer_json(layer="derivative", offset=0.05)) == layer_data("derivative", offset=0.05)


def test_the_offset_slider_steps_land_on_its_range():
    low, high = defaults.OFFSET_RANGE
    steps = (high - low) / defaults.OFFSET_STEP
    assert steps == pytest.approx(round(steps), abs=1e-9)  # an input type=range reaches both ends


def test_the_layers_fallback_is_the_package_derivative_layer():
    from selfattention.multihead import derivative_layer, multi_head, signal_tokens

    data = layer_data("derivative", n=40, sigma=0.5, temperature=0.01, offset=0.15)
    p, clean, noisy, outputs, weights, estimate, slope = layer_series(data)
    heads, W_O = derivative_layer(0.15, 0.01)
    X = signal_tokens(noisy, p)
    np.testing.assert_array_equal(estimate, multi_head(X, heads, W_O)[:, 0])
    for k, head in enumerate(heads):
        np.testing.assert_array_equal(weights[k], head(X)[1])
        np.testing.assert_array_equal(outputs[k], head(X)[0][:, 0])
    np.testing.assert_allclose(slope, 2 * np.pi * np.cos(2 * np.pi * p), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(clean, sa.noisy_sine(40, 0.0)[1])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: layer_data("jackknife"), "layer must be one of"),
        (lambda: layer_data("derivative", offset=0.3), "offset must lie in the slider range"),
        (lambda: layer_data("derivative", temperature=1e-4), "temperature must lie in the slider range"),
        (lambda: layer_series({"layer": "derivative"}), "data lacks"),
        (lambda: layer_series({**layer_data("derivative"), "offset": 0.0}), "data: offset must be positive"),
        (lambda: fallback_series(layer_data("derivative")), "layer_series"),
    ],
)
def test_the_layers_bad_data_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
