r"""The data the in-page attention explorer embeds at build time.

The explorer (the ``attention-explorer`` directive of the book's Sphinx
extension in ``_ext/attention_explorer``) recomputes the engineered head in the
reader's browser, in JavaScript, with no kernel. To show the very signal the
book's Python figures show, it does not draw its own random numbers: the page
carries, as JSON, the book's defaults and the standard normal draws of
:func:`selfattention.unit_noise` for the largest ``N`` its slider reaches.
Because the first ``k`` draws of a seed do not depend on how many are drawn,
the JavaScript rebuilds, for every ``n``, ``sigma`` and ``periods``,

.. math:: p_i = \frac{i}{n - 1}, \qquad
    s_i = \sin(2 \pi \cdot \text{periods} \cdot p_i) + \sigma z_i, \quad i < n,

exactly as :func:`selfattention.noisy_sine` does with ``rng=SEED``.
:func:`fallback_series` computes, with the package, the picture the page
shows before (or without) JavaScript.

Importing this module needs only numpy.
"""

from __future__ import annotations

import json

import numpy as np

from .. import defaults
from .._validation import as_choice, as_count
from ..head import gaussian_head
from ..kernel import TIE_TOLERANCE, candidate_temperatures
from ..multihead import derivative_layer, multi_head, signal_tokens
from ..random_features import gaussian_frequencies, random_feature_head
from ..signals import noisy_sine, unit_noise
from ..studies.derivative import true_derivative
from ..studies.noise_and_samples import smoothed_sine


def explorer_data(*, n=None, sigma=None, temperature=None, candidates=None) -> dict:
    """Everything the explorer needs, as plain JSON-ready Python values.

    Parameters
    ----------
    n, sigma, temperature : optional
        The explorer's starting settings; the book's defaults
        (:mod:`selfattention.defaults`) when omitted. They must lie in the
        sliders' ranges.
    candidates : array_like, shape (m,), optional
        The temperatures the "best tau" button searches by leave-one-out;
        :data:`selfattention.kernel.DEFAULT_CANDIDATES` when omitted, so the
        button picks what :func:`selfattention.choose_temperature` picks
        (with the same tie rule, :data:`selfattention.kernel.TIE_TOLERANCE`).

    Returns
    -------
    dict
        ``seed``, ``periods``; the starting ``n``, ``sigma``,
        ``temperature``; the slider ranges ``n_range``, ``sigma_range``,
        ``temperature_range`` (inclusive ``[low, high]``); ``noise``, the
        ``n_range[1]`` unit normal draws ``z`` of the book's seed;
        ``candidates``; and ``tie_tolerance``.
    """
    n, sigma, tau = defaults.check_in_ranges(
        defaults.N if n is None else n,
        defaults.SIGMA if sigma is None else sigma,
        defaults.TEMPERATURE if temperature is None else temperature,
    )
    taus = candidate_temperatures(candidates)
    z = unit_noise(defaults.N_RANGE[1], defaults.SEED)  # (N_max,)
    return {
        "seed": defaults.SEED,
        "periods": float(defaults.PERIODS),
        "n": n,
        "sigma": sigma,
        "temperature": tau,
        "n_range": [int(v) for v in defaults.N_RANGE],
        "sigma_range": [float(v) for v in defaults.SIGMA_RANGE],
        "temperature_range": [float(v) for v in defaults.TEMPERATURE_RANGE],
        "noise": z.tolist(),
        "candidates": taus.tolist(),
        "tie_tolerance": TIE_TOLERANCE,
    }


#: The layers the explorer draws besides the one head: two heads at +delta and -delta, W_O = [1, -1] / (2 delta).
LAYERS = ("derivative",)


def layer_data(layer, *, n=None, sigma=None, temperature=None, offset=None) -> dict:
    """What the explorer of a layer of several heads needs: the derivative layer's.

    Parameters
    ----------
    layer : {"derivative"}
    n, sigma, temperature, offset : optional
        The starting settings; the book's ``N`` and ``SIGMA``, a temperature
        of 0.004 and an offset of 0.1 when omitted. They must lie in the
        sliders' ranges (:func:`selfattention.defaults.check_layer_ranges`).

    Returns
    -------
    dict
        ``layer``, ``seed``, ``periods``; the starting ``n``, ``sigma``,
        ``temperature``, ``offset``; the ranges ``n_range``, ``sigma_range``,
        ``temperature_range``, ``offset_range``; ``offset_step``; ``noise``,
        as for :func:`explorer_data`.
    """
    layer = as_choice(layer, "layer", LAYERS)
    n, sigma, tau, delta = defaults.check_layer_ranges(
        defaults.N if n is None else n,
        defaults.SIGMA if sigma is None else sigma,
        0.004 if temperature is None else temperature,
        0.1 if offset is None else offset,
    )
    return {
        "layer": layer,
        "seed": defaults.SEED,
        "periods": float(defaults.PERIODS),
        "n": n,
        "sigma": sigma,
        "temperature": tau,
        "offset": delta,
        "n_range": [int(v) for v in defaults.N_RANGE],
        "sigma_range": [float(v) for v in defaults.SIGMA_RANGE],
        "temperature_range": [float(v) for v in defaults.LAYER_TEMPERATURE_RANGE],
        "offset_range": [float(v) for v in defaults.OFFSET_RANGE],
        "offset_step": defaults.OFFSET_STEP,
        "noise": unit_noise(defaults.N_RANGE[1], defaults.SEED).tolist(),
    }


#: The cost explorer: the seed of its frequencies' normal draws, the range of
#: its slider for ``D``, and the ``N`` at which it times both heads. The seed
#: is a typical draw: at the explorer's start (the book's ``N``, ``D = 256``)
#: its error against the exact head is the median one of seeds 0 to 199, so
#: the first picture shows what random features usually do.
COST_FEATURE_SEED = 52
COST_COUNT_RANGE = (1, 256)
COST_TIMING_NS = (125, 250, 500, 1000, 2000, 4000)


def cost_data(*, n=None, count=None) -> dict:
    """What the cost explorer needs: the exact head against the head of ``D`` random Fourier features.

    Parameters
    ----------
    n : int, optional
        The starting number of samples, in the book's ``N`` range; the
        book's ``N`` when omitted.
    count : int, optional
        The starting ``D``, in :data:`COST_COUNT_RANGE`; its largest when
        omitted (the reader lowers it to see the estimate part from the
        exact head).

    Returns
    -------
    dict
        ``layer`` ("cost"), ``seed``, ``periods``, ``sigma`` and
        ``temperature`` (the book's); the starting ``n`` and ``count``; the
        ranges ``n_range`` and ``count_range``; ``noise``, as for
        :func:`explorer_data`; ``draws``, the standard normal draws of
        :data:`COST_FEATURE_SEED` for the largest ``D``, whose first ``D``
        sizes times ``sqrt(2 / tau)`` are
        ``random_features.gaussian_frequencies(D, tau, COST_FEATURE_SEED)``;
        ``timing_ns``, the ``N`` the page times the two heads at.
    """
    n, _ = defaults.check_sample_ranges(defaults.N if n is None else n, defaults.SIGMA)
    count = as_count(COST_COUNT_RANGE[1] if count is None else count, "count")
    if not COST_COUNT_RANGE[0] <= count <= COST_COUNT_RANGE[1]:
        raise ValueError(f"count must lie in the slider range {list(COST_COUNT_RANGE)}, got {count}")
    draws = np.random.default_rng(COST_FEATURE_SEED).standard_normal(COST_COUNT_RANGE[1])
    return {
        "layer": "cost", "seed": defaults.SEED, "periods": float(defaults.PERIODS),
        "sigma": defaults.SIGMA, "temperature": defaults.TEMPERATURE, "n": n, "count": count,
        "n_range": [int(v) for v in defaults.N_RANGE], "count_range": list(COST_COUNT_RANGE),
        "noise": unit_noise(defaults.N_RANGE[1], defaults.SEED).tolist(), "draws": draws.tolist(),
        "feature_seed": COST_FEATURE_SEED, "timing_ns": list(COST_TIMING_NS),
    }


def cost_series(data: dict):
    """The cost explorer's picture for its data, computed by the package.

    Parameters
    ----------
    data : dict
        As returned by :func:`cost_data`.

    Returns
    -------
    positions, clean, noisy, exact, approximate : ndarray, shape (n,)
        The book's noisy sine, the exact head's output and the output of
        the head of ``data["count"]`` random Fourier features.
    """
    if not isinstance(data, dict) or data.get("layer") != "cost":
        raise TypeError("data must be the dict of cost_data()")
    missing = sorted({"n", "count", "sigma", "temperature", "periods", "seed"} - set(data))
    if missing:
        raise ValueError(f"data lacks {', '.join(missing)}: pass the dict of cost_data()")
    try:
        n, sigma = defaults.check_sample_ranges(data["n"], data["sigma"])
        p, clean, noisy = noisy_sine(n, sigma, periods=data["periods"], rng=data["seed"])
        exact, _ = gaussian_head(noisy, p, data["temperature"])
        omega = gaussian_frequencies(data["count"], data["temperature"], COST_FEATURE_SEED)
    except ValueError as exc:  # name the caller's argument
        raise type(exc)(f"data: {exc}") from exc
    return p, clean, noisy, exact, random_feature_head(noisy, p, omega)[0]


def explorer_json(**kwargs) -> str:
    """:func:`explorer_data` (or, with ``layer``, :func:`layer_data` or :func:`cost_data`) as compact JSON.

    Floats are written by ``repr``, so the browser parses back the very same
    doubles. The data hold only numbers and the layer's name, so the text can
    never contain the ``</script>`` that would end its element.
    """
    layer = kwargs.pop("layer", None)
    if layer == "cost":
        data = cost_data(**kwargs)
    else:
        data = explorer_data(**kwargs) if layer is None else layer_data(layer, **kwargs)
    return json.dumps(data, separators=(",", ":"), allow_nan=False)


def fallback_series(data: dict):
    """The explorer's starting picture, computed by the package.

    Parameters
    ----------
    data : dict
        As returned by :func:`explorer_data`.

    Returns
    -------
    positions, clean, noisy, output : ndarray, shape (n,)
    weights : ndarray, shape (n, n)
        What the explorer shows before any slider moves; the static
        fallback image for readers without JavaScript draws exactly this.
    """
    if not isinstance(data, dict):
        raise TypeError(f"data must be the dict of explorer_data(), got {type(data).__name__}")
    if "layer" in data:
        raise ValueError("data: a layer's data draw with layer_series(), not fallback_series()")
    missing = sorted({"n", "sigma", "temperature", "periods", "seed"} - set(data))
    if missing:
        raise ValueError(f"data lacks {', '.join(missing)}: pass the dict of explorer_data()")
    try:
        n, sigma, tau = defaults.check_in_ranges(data["n"], data["sigma"], data["temperature"])
        head = smoothed_sine(n, sigma, tau, periods=data["periods"], rng=data["seed"])
    except ValueError as exc:  # name the caller's argument
        raise type(exc)(f"data: {exc}") from exc
    return head.positions, head.clean, head.noisy, head.output, head.weights


def layer_series(data: dict):
    """The layer explorer's starting picture, computed by the package.

    Parameters
    ----------
    data : dict
        As returned by :func:`layer_data`.

    Returns
    -------
    positions, clean, noisy : ndarray, shape (n,)
    outputs : ndarray, shape (2, n)
        The two heads' outputs, at ``+delta`` and ``-delta``.
    weights : ndarray, shape (2, n, n)
        Their attention matrices.
    estimate, slope : ndarray, shape (n,)
        The layer's output and the true slope of the sine.
    """
    if not isinstance(data, dict):
        raise TypeError(f"data must be the dict of layer_data(), got {type(data).__name__}")
    missing = sorted({"layer", "n", "sigma", "temperature", "offset", "periods", "seed"} - set(data))
    if missing:
        raise ValueError(f"data lacks {', '.join(missing)}: pass the dict of layer_data()")
    try:
        as_choice(data["layer"], "layer", LAYERS)
        n, sigma, tau, delta = defaults.check_layer_ranges(data["n"], data["sigma"], data["temperature"],
                                                            data["offset"])
        p, clean, noisy = noisy_sine(n, sigma, periods=data["periods"], rng=data["seed"])
    except ValueError as exc:  # name the caller's argument
        raise type(exc)(f"data: {exc}") from exc
    heads, W_O = derivative_layer(delta, tau)
    X = signal_tokens(noisy, p)  # (n, 4)
    runs = [head(X) for head in heads]
    outputs = np.stack([out[:, 0] for out, _ in runs])  # (2, n)
    weights = np.stack([w for _, w in runs])  # (2, n, n)
    estimate = multi_head(X, heads, W_O)[:, 0]  # (n,)
    return p, clean, noisy, outputs, weights, estimate, true_derivative(p, data["periods"])
