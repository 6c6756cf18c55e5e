"""The in-context explorer's build-time data (:mod:`selfattention.interactive.in_context_data`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from selfattention import defaults, in_context
from selfattention.interactive import in_context_data as icd
from selfattention.studies import in_context as study


def test_the_explorer_starts_at_a_sine_prompt_of_the_chapters():
    prompts = study.sine_tasks(1, icd.EXAMPLES, noise=study.NOISE, rng=defaults.SEED)
    data = json.loads(icd.in_context_explorer_json())
    assert data["layer"] == "in-context"
    np.testing.assert_array_equal(data["inputs"], prompts.inputs[0, :, 0])  # JSON keeps every double (repr)
    np.testing.assert_array_equal(data["labels"], np.clip(prompts.labels[0], *icd.LABEL_RANGE))
    assert (data["temperature"], data["eta"]) == (icd.TEMPERATURE, icd.ETA)
    np.testing.assert_array_equal(data["queries"], np.linspace(0.0, 1.0, icd.QUERIES))
    low, high = data["temperature_range"]
    assert low <= data["temperature"] <= high and data["eta_range"][0] <= data["eta"] <= data["eta_range"][1]
    assert data["min_examples"] <= len(data["inputs"]) <= data["max_examples"] == 64


def test_the_starting_prompt_follows_its_rng():
    first, again, other = (icd.start_prompt(5, rng=seed) for seed in (3, 3, 4))
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], other[0])
    generator = np.random.default_rng(3)
    np.testing.assert_array_equal(icd.start_prompt(5, rng=generator)[0], first[0])


def test_the_curves_are_the_packages_learners_on_inputs_p_and_1():
    p, y, queries = np.array([0.1, 0.3, 0.8]), np.array([0.5, -0.2, 0.9]), np.array([0.0, 0.45, 1.0])
    curves = icd.explorer_curves(p, y, queries, 0.02, 0.7)
    P = np.column_stack([p, np.ones(3)])
    for k, q in enumerate(queries):
        assert curves["softmax head"][k] == in_context.softmax_head(P, y, [q, 1.0], 0.02)[0]
        assert curves["one step"][k] == in_context.one_step_prediction(P, y, [q, 1.0], 0.7)
        assert curves["least squares"][k] == in_context.least_squares_prediction(P, y, [q, 1.0])
    # least squares with an intercept: the line through these three examples of least squared error
    slope, intercept = np.polyfit(p, y, 1)
    np.testing.assert_allclose(curves["least squares"], slope * queries + intercept, rtol=0, atol=1e-12)


def test_the_fallback_panel_is_the_starting_prompts():
    data = icd.in_context_explorer_data(examples=6)
    panel = icd.fallback_panel(data)
    np.testing.assert_array_equal(panel["inputs"], data["inputs"])
    curves = icd.explorer_curves(data["inputs"], data["labels"], data["queries"], data["temperature"], data["eta"])
    for name in ("softmax head", "one step", "least squares"):
        np.testing.assert_array_equal(panel[name], curves[name])


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"examples": 0}, "examples"), ({"examples": 65}, "examples"), ({"temperature": 2.0}, "temperature"),
    ({"temperature": 1e-4}, "temperature"), ({"temperature": float("nan")}, "temperature"), ({"eta": 0.0}, "eta"),
    ({"eta": 2.5}, "eta"), ({"rng": -1}, "rng"),
])
def test_bad_settings_are_refused_by_name(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        icd.in_context_explorer_data(**kwargs)


def test_a_bad_query_is_refused_naming_queries():
    with pytest.raises(ValueError, match=r"^queries: "):
        icd.explorer_curves([0.1, 0.2], [1.0, 2.0], [0.5, 1e300], 0.1, 0.5)
