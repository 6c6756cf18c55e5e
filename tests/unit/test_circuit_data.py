"""The induction circuit explorer's build-time data (:mod:`selfattention.interactive.circuit_data`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from selfattention import defaults, induction, memory, tokens
from selfattention.interactive import circuit_data
from selfattention.studies import induction as study


def test_the_explorer_starts_at_the_chapters_example():
    example = tokens.repeated_sequences(1, study.HALF, study.VOCABULARY, rng=defaults.SEED)[0]
    assert circuit_data.start_text() == "".join(tokens.to_text(example))
    data = json.loads(circuit_data.circuit_json())
    assert data["text"] == circuit_data.start_text() and data["margin"] == induction.MARGIN
    assert data["layer"] == "induction" and data["letters"] == tokens.LETTERS


def test_the_run_is_the_hand_built_circuits():
    text = "abcdabcd"
    ids = tokens.from_text(text)
    for knocked in (False, True):
        run = circuit_data.circuit_run(text, 4.0, knocked_out=knocked)
        want = induction.run_circuit(ids, induction.hand_built_circuit(26, ids.size + 1, 4.0),
                                     knocked_out=[0] if knocked else [])
        np.testing.assert_array_equal(run.weights, want.weights)
        np.testing.assert_array_equal(run.scores, want.scores)
    assert circuit_data.circuit_labels(text) == [tokens.START, *text]


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"text": ""}, "text"), ({"text": "ab1"}, "text"), ({"text": "a" * 65}, "text"), ({"text": 3}, "text"),
    ({"margin": 0.0}, "margin"), ({"margin": 16.5}, "margin"), ({"margin": float("nan")}, "margin"),
])
def test_bad_settings_are_refused_by_name(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        circuit_data.circuit_explorer_data(**kwargs)


def test_a_text_too_long_for_the_memory_limit_is_refused_naming_text():
    with memory.limit(2**20), pytest.raises(ValueError, match=r"^text: tokens: a run of 2 layers on 2001 rows"):
        circuit_data.circuit_run("ab" * 1000)
