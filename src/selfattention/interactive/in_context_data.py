r"""The data of the in-context explorer of "Heads that learn while they read", embedded at build time.

The explorer (``in_context_explorer.js``, kind ``in-context`` of the
``attention-explorer`` directive) holds a prompt of examples
:math:`(p_j, s_j)` with one input :math:`p_j \in [0, 1]`, each written
:math:`[p_j, 1]` as the chapter's sine prompts are, and the reader drags
them. At every query input :math:`p` of a grid it recomputes, in the
reader's browser and with no kernel, the three learners of
:mod:`selfattention.in_context`:

* the softmax head, :math:`\sum_j \operatorname{softmax}_j(-(p - p_j)^2 / \tau)\, s_j`
  (:func:`~selfattention.in_context.softmax_head`);
* one step of gradient descent, :math:`\frac{\eta}{N} \sum_j s_j (p_j p + 1)`
  (:func:`~selfattention.in_context.one_step_prediction`);
* least squares' line (:func:`~selfattention.in_context.least_squares_prediction`).

:func:`explorer_curves` computes the same three curves here, with those
functions, for the static picture and for the tests that hold the browser's
curves to them.
"""

from __future__ import annotations

import json

import numpy as np

from .. import defaults, in_context
from .._validation import (
    as_array,
    as_count,
    as_entries,
    as_positive_scalar,
    as_temperature,
    naming,
    same_length,
)
from ..studies import in_context as study

#: The examples of the starting prompt, and the most and fewest the reader may hold.
EXAMPLES, MAX_EXAMPLES, MIN_EXAMPLES = 16, 64, 1
#: The temperature slider's range (log scale) and the starting temperature, the chapter's.
TEMPERATURE_RANGE, TEMPERATURE = (1e-3, 1.0), 0.01
#: The step size slider's range, its step, and the starting step size.
ETA_RANGE, ETA_STEP, ETA = (0.02, 2.0), 0.02, 1.0
#: Where the reader may put an example: inputs in [0, 1], labels in LABEL_RANGE.
INPUT_RANGE, LABEL_RANGE = (0.0, 1.0), (-1.5, 1.5)
#: The query inputs at which the curves are drawn (and compared with the package).
QUERIES = 201


def _in_range(value: float, name: str, bounds) -> float:
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}")
    return value


def start_prompt(examples=EXAMPLES, *, rng=defaults.SEED):
    r"""The starting prompt: one of the chapter's sine prompts (:func:`~selfattention.studies.in_context.sine_tasks`).

    Parameters
    ----------
    examples : int
        ``N``, from :data:`MIN_EXAMPLES` to :data:`MAX_EXAMPLES`.
    rng : int or numpy.random.Generator
        The draws of the prompt.

    Returns
    -------
    inputs, labels : ndarray, shape (N,) each
        The examples' :math:`p_j` and :math:`s_j`, labels clipped to :data:`LABEL_RANGE`.
    """
    N = as_count(examples, "examples", minimum=MIN_EXAMPLES, maximum=MAX_EXAMPLES)
    prompts = study.sine_tasks(1, N, noise=study.NOISE, rng=rng)
    return prompts.inputs[0, :, 0], np.clip(prompts.labels[0], *LABEL_RANGE)  # (N,), (N,)


def in_context_explorer_data(*, examples=EXAMPLES, temperature=TEMPERATURE, eta=ETA, rng=defaults.SEED) -> dict:
    r"""Everything the explorer needs, as plain JSON-ready values.

    Parameters
    ----------
    examples : int
        The starting prompt's ``N`` (:func:`start_prompt`).
    temperature : float
        The starting :math:`\\tau`, in :data:`TEMPERATURE_RANGE`.
    eta : float
        The starting :math:`\\eta`, in :data:`ETA_RANGE`.
    rng : int or numpy.random.Generator
        The draws of the starting prompt.

    Returns
    -------
    dict
        ``layer`` (``"in-context"``), ``inputs`` and ``labels`` (the prompt),
        ``temperature``, ``eta``, the sliders' ``temperature_range``,
        ``eta_range`` and ``eta_step``, ``input_range``, ``label_range``,
        ``max_examples``, ``min_examples`` and ``queries`` (the grid of query inputs).
    """
    tau = _in_range(as_temperature(temperature, "temperature"), "temperature", TEMPERATURE_RANGE)
    step = _in_range(as_positive_scalar(eta, "eta"), "eta", ETA_RANGE)
    inputs, labels = start_prompt(examples, rng=rng)
    return {"layer": "in-context", "inputs": inputs.tolist(), "labels": labels.tolist(),
            "temperature": tau, "eta": step, "temperature_range": list(TEMPERATURE_RANGE),
            "eta_range": list(ETA_RANGE), "eta_step": ETA_STEP, "input_range": list(INPUT_RANGE),
            "label_range": list(LABEL_RANGE), "max_examples": MAX_EXAMPLES, "min_examples": MIN_EXAMPLES,
            "queries": np.linspace(*INPUT_RANGE, QUERIES).tolist()}


def in_context_explorer_json(**kwargs) -> str:
    """:func:`in_context_explorer_data` as compact JSON (floats by ``repr``: the browser reads the same doubles).

    Parameters
    ----------
    **kwargs
        As in :func:`in_context_explorer_data`.

    Returns
    -------
    str
    """
    return json.dumps(in_context_explorer_data(**kwargs), separators=(",", ":"), allow_nan=False)


def explorer_curves(inputs, labels, queries, temperature, eta) -> dict:
    r"""The three learners' predictions at each query input, by the package's functions.

    Parameters
    ----------
    inputs, labels : array_like, shape (N,) each
        The examples :math:`p_j` (written :math:`[p_j, 1]`) and :math:`s_j`.
    queries : array_like, shape (m,)
        The query inputs :math:`p`.
    temperature, eta : float
        The softmax head's :math:`\tau` and the step's :math:`\eta`, both > 0.

    Returns
    -------
    dict
        ``"softmax head"``, ``"one step"``, ``"least squares"``: arrays (m,).
    """
    p = as_array(inputs, "inputs", ndim=1)
    y = as_array(labels, "labels", ndim=1)
    same_length(p, y, "inputs", "labels")
    grid = as_array(queries, "queries", ndim=1)
    tau, step = as_temperature(temperature, "temperature"), as_positive_scalar(eta, "eta")
    P = np.column_stack([p, np.ones_like(p)])  # (N, 2): [p_j, 1]
    Q = np.column_stack([grid, np.ones_like(grid)])  # (m, 2)
    with naming("queries", "query"):  # the package's functions take one query at a time
        return {"softmax head": np.array([in_context.softmax_head(P, y, q, tau)[0] for q in Q]),
                "one step": np.array([in_context.one_step_prediction(P, y, q, step) for q in Q]),
                "least squares": np.array([in_context.least_squares_prediction(P, y, q) for q in Q])}


def fallback_panel(data) -> dict:
    """The static picture's panel (for :func:`selfattention.figures.in_context.plot_prompts`) at ``data``'s start.

    Parameters
    ----------
    data : dict
        :func:`in_context_explorer_data`'s: ``inputs``, ``labels``, ``queries``, ``temperature`` and ``eta``.

    Returns
    -------
    dict
    """
    arrays = as_entries(data, "data", ("inputs", "labels", "queries"))
    knobs = as_entries(data, "data", ("temperature", "eta"))
    curves = explorer_curves(arrays["inputs"], arrays["labels"], arrays["queries"], float(knobs["temperature"]),
                             float(knobs["eta"]))
    return {"inputs": arrays["inputs"], "labels": arrays["labels"], "grid": arrays["queries"],
            "title": "the explorer's starting prompt", **curves}
