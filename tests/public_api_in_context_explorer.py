"""The audit's entries (:class:`public_api.Call`) for the in-context explorer's data.

:mod:`selfattention.interactive.in_context_data`, which the explorer of
"Heads that learn while they read" embeds at build time. Kinds as in
:mod:`public_api`; each valid call is small (prompts of four examples, three queries).
"""

from __future__ import annotations

import numpy as np
from public_api import Call

from selfattention.interactive import in_context_data

#: A prompt of four examples with one input each, and three query inputs.
INPUTS, LABELS = np.array([0.1, 0.4, 0.6, 0.9]), np.array([0.3, -0.2, 0.5, 0.1])
QUERIES = np.array([0.0, 0.5, 1.0])


def in_context_explorer_calls() -> list[Call]:
    """Entries of the explorer's data, its curves and its static picture's panel."""
    a, f = "array", False
    start = {"examples": 4, "temperature": 0.01, "eta": 0.5, "rng": 1}
    start_kinds = {"examples": "count", "temperature": "temperature", "eta": "positive", "rng": "rng"}
    curves = {"inputs": INPUTS, "labels": LABELS, "queries": QUERIES, "temperature": 0.05, "eta": 0.5}
    curve_kinds = {"inputs": a, "labels": a, "queries": a, "temperature": "temperature", "eta": "positive"}
    return [
        Call("in_context_data.start_prompt", in_context_data.start_prompt, {"examples": 4, "rng": 1},
             {"examples": "count", "rng": "rng"}),
        Call("in_context_data.in_context_explorer_data", in_context_data.in_context_explorer_data, start, start_kinds,
             f),
        Call("in_context_data.in_context_explorer_json", in_context_data.in_context_explorer_json, start, start_kinds,
             f),
        Call("in_context_data.explorer_curves", in_context_data.explorer_curves, curves, curve_kinds),
        Call("in_context_data.fallback_panel", in_context_data.fallback_panel,
             {"data": in_context_data.in_context_explorer_data(examples=4)}, {"data": "mapping"}, f),
    ]
