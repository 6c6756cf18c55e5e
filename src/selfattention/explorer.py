"""The data the in-page attention explorer embeds at build time.

The explorer (the ``attention-explorer`` directive of the book's Sphinx
extension in ``_ext/attention_explorer``) recomputes the engineered head in the
reader's browser, in JavaScript, with no kernel. To show the very signal the
book's Python figures show, it does not draw its own random numbers: the page
carries, as JSON, the book's settings and the standard normal draws of
:func:`selfattention.unit_noise` for the largest ``N`` its slider reaches.
Because the first ``k`` draws of a seed do not depend on how many are drawn,
the JavaScript rebuilds, for every ``n``, ``sigma`` and ``periods``,

.. math:: p_i = \\frac{i}{n - 1}, \\qquad
    y_i = \\sin(2 \\pi f p_i) + \\sigma z_i, \\quad i < n,

exactly as :func:`selfattention.noisy_sine` does with ``rng=SEED``.

Importing this module needs only numpy.
"""

from __future__ import annotations

import json

from . import settings
from .kernel import check_candidates
from .signals import unit_noise

#: Version of the JSON layout, bumped when a key changes meaning.
SCHEMA = 1


def explorer_data(*, n=None, sigma=None, temperature=None, candidates=None) -> dict:
    """Everything the explorer needs, as plain JSON-ready Python values.

    Parameters
    ----------
    n, sigma, temperature : optional
        The explorer's starting settings; the book's defaults
        (:mod:`selfattention.settings`) when omitted. They must lie in the
        sliders' ranges.
    candidates : array_like, shape (m,), optional
        The temperatures the "best tau" button searches by leave-one-out;
        :data:`selfattention.kernel.DEFAULT_CANDIDATES` when omitted, so the
        button picks what :func:`selfattention.choose_temperature` picks.

    Returns
    -------
    dict
        ``schema``, ``seed``, ``periods``; the starting ``n``, ``sigma``,
        ``temperature``; the slider ranges ``n_range``, ``sigma_range``,
        ``temperature_range`` (inclusive ``[low, high]``); ``noise``, the
        ``n_range[1]`` unit normal draws ``z`` of the book's seed; and
        ``candidates``.
    """
    n, sigma, tau = settings.check_in_ranges(
        settings.N if n is None else n,
        settings.SIGMA if sigma is None else sigma,
        settings.TEMPERATURE if temperature is None else temperature,
    )
    taus = check_candidates(candidates)
    z = unit_noise(settings.N_RANGE[1], settings.SEED)  # (N_max,)
    return {
        "schema": SCHEMA,
        "seed": settings.SEED,
        "periods": float(settings.PERIODS),
        "n": n,
        "sigma": sigma,
        "temperature": tau,
        "n_range": [int(v) for v in settings.N_RANGE],
        "sigma_range": [float(v) for v in settings.SIGMA_RANGE],
        "temperature_range": [float(v) for v in settings.TEMPERATURE_RANGE],
        "noise": z.tolist(),
        "candidates": taus.tolist(),
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
    from .head import gaussian_head
    from .signals import noisy_sine

    positions, clean, noisy = noisy_sine(
        data["n"], data["sigma"], periods=data["periods"], rng=data["seed"]
    )
    output, weights = gaussian_head(noisy, positions, data["temperature"])
    return positions, clean, noisy, output, weights
