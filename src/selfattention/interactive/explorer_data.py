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

from .. import defaults
from ..kernel import TIE_TOLERANCE, candidate_temperatures
from ..signals import unit_noise
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


def explorer_json(**kwargs) -> str:
    """:func:`explorer_data` as compact JSON for a ``<script>`` element.

    Floats are written by ``repr``, so the browser parses back the very same
    doubles. The data hold only numbers, so the text can never contain the
    ``</script>`` that would end its element.
    """
    return json.dumps(explorer_data(**kwargs), separators=(",", ":"), allow_nan=False)


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
    missing = sorted({"n", "sigma", "temperature", "periods", "seed"} - set(data))
    if missing:
        raise ValueError(f"data lacks {', '.join(missing)}: pass the dict of explorer_data()")
    try:
        n, sigma, tau = defaults.check_in_ranges(data["n"], data["sigma"], data["temperature"])
        head = smoothed_sine(n, sigma, tau, periods=data["periods"], rng=data["seed"])
    except ValueError as exc:  # name the caller's argument
        raise type(exc)(f"data: {exc}") from exc
    return head.positions, head.clean, head.noisy, head.output, head.weights
