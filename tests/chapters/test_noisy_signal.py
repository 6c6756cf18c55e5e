"""The page "A noisy signal": the book's sine, and why a head on one-number tokens cannot smooth it."""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import average_atol, rounding

from selfattention import defaults
from selfattention.metrics import most_attended, rmse
from selfattention.studies.onedim import onedim_curve, onedim_head, strength_sweep

STEM = "noisy-signal"


@pytest.fixture(scope="module")
def ns(chapter):
    return chapter.namespace


def test_the_noisy_input_is_off_by_about_sigma(chapter):
    # Not rounding: the RMSE of N = 100 draws is sigma to about 1 / sqrt(2 N) = 7% relative.
    assert chapter.glued["sig-noisy-rmse"] == pytest.approx(chapter.glued["sig-sigma"], rel=0.2)


def test_every_token_attends_most_to_the_largest_or_smallest_value(chapter, ns):
    positions, noisy, top = ns["positions"], ns["noisy"], most_attended(ns["weights"])
    hi, lo = np.argmax(noisy), np.argmin(noisy)
    np.testing.assert_array_equal(top, np.where(noisy > 0, hi, lo))
    assert chapter.glued["one-n-top"] == 2
    assert chapter.glued["one-top-high"] == positions[hi] and chapter.glued["one-top-low"] == positions[lo]
    # "near the crest of the sine ... near the trough"
    assert abs(positions[hi] - 0.25) < 0.1 and abs(positions[lo] - 0.75) < 0.1


def test_onedim_attention_is_hardly_local(chapter):
    local, uniform = chapter.glued["one-local"], chapter.glued["one-local-uniform"]
    assert uniform < local < 2 * uniform, "less than twice what a plain mean puts there"
    assert chapter.glued["one-local-band"] > 0.9


def test_shuffling_the_signal_only_shuffles_the_output(chapter, ns):
    # Rounding: the same scores, shuffled; only the sums run in another order.
    assert chapter.glued["one-shuffle-diff"] <= average_atol(ns["noisy"].size, np.abs(ns["noisy"]))


def test_the_onedim_head_makes_the_error_worse(chapter):
    assert chapter.glued["one-rmse"] > chapter.glued["sig-noisy-rmse"]


def test_zero_strength_gives_the_mean_and_negative_strength_is_worse(chapter, ns):
    strengths, errors, noisy, clean = ns["strengths"], ns["errors"], ns["noisy"], ns["clean"]
    zero = np.argmin(np.abs(strengths))
    assert strengths[zero] == 0.0
    # Uniform weights 1 / n against numpy's mean (n + 2 roundings on max|noisy|); the RMSE rounds n + 4 times.
    mean_rmse = rmse(np.full_like(noisy, noisy.mean()), clean)
    atol = rounding(noisy.size + 2, np.abs(noisy).max()) + rounding(noisy.size + 4, mean_rmse)
    assert chapter.glued["sweep-zero-rmse"] == pytest.approx(mean_rmse, rel=0, abs=atol)
    assert np.all(errors[strengths < 0] > errors[zero])


def test_the_best_strength_barely_beats_the_noisy_input(chapter, ns):
    strengths, errors = ns["strengths"], ns["errors"]
    best = np.argmin(errors)
    assert 0 < best < strengths.size - 1, "an interior minimum: the range covers it"
    wide = strength_sweep(ns["noisy"], ns["clean"], np.linspace(-50.0, 50.0, 401))
    assert wide.min() >= errors[best] - 1e-3, "nothing outside the range does better"  # 1e-3: the grids' spacing
    assert 0 < chapter.glued["sweep-gain"] < 0.3
    assert chapter.glued["sweep-band-rmse"] < chapter.glued["sweep-best-rmse"] / 2


@pytest.fixture(scope="module")
def best_head(chapter, ns):
    """The best 1-D head's output on the book's signal, from the package."""
    output, _ = onedim_head(ns["noisy"], w_q=chapter.glued["sweep-best-c"])
    return output


def test_the_best_head_shrinks_only_a_minority_of_values(chapter, ns, best_head):
    """"only ... of the outputs are smaller in magnitude than their input" (not "shrinking every value")."""
    shrunk = np.abs(best_head) < np.abs(ns["noisy"])
    assert chapter.glued["sweep-shrunk"] == shrunk.mean() < 0.5
    order = np.argsort(ns["noisy"])
    assert np.all(np.diff(best_head[order]) >= 0), "one fixed increasing curve of the own value"


def test_the_best_head_is_a_soft_clip(chapter, ns, best_head):
    """Slope above 1 near zero (c w_v times the variance of the values), clipped extremes."""
    glued, noisy, c = chapter.glued, ns["noisy"], chapter.glued["sweep-best-c"]
    # E[s**2] - E[s]**2 against the mean of squared deviations: 2 n + 4 roundings on |c| max|s|**2.
    atol = rounding(2 * noisy.size + 4, abs(c) * np.abs(noisy).max() ** 2)
    assert glued["sweep-slope-zero"] == pytest.approx(c * noisy.var(), rel=0, abs=atol)
    assert glued["sweep-slope-zero"] > 1
    _, (slope_low,) = onedim_curve(noisy, [noisy.min()], c)
    assert glued["sweep-slope-top"] < 0.5 and slope_low < 0.5, "the slope falls at both extremes"
    top = np.argmax(noisy)
    assert glued["sweep-input-top"] == noisy[top] and glued["sweep-output-top"] == best_head[top]
    assert glued["sweep-output-top"] < glued["sweep-input-top"]
    far = np.abs(noisy) > 1
    assert far.any() and np.all(np.abs(best_head[far]) < np.abs(noisy[far])), "pulls in the furthest samples"


# --- the exercises -----------------------------------------------------------------------------


def test_ex_reversed_samples_get_the_same_outputs(chapter, ns):
    # Rounding: the same scores, reversed; only the sums run in another order.
    assert chapter.glued["ex-noisy-reverse-gap"] <= average_atol(ns["noisy"].size, np.abs(ns["noisy"]))


def test_ex_a_negative_strength_attends_to_the_opposite_sign(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert ns["w_q"] == 1.0
    assert glued["ex-noisy-live-before"] == glued["one-rmse"]  # the same head (w_q = 1) on the same draw
    assert glued["ex-noisy-live-after"] > 2 * glued["sig-noisy-rmse"], "far above the noisy input's"
    np.testing.assert_array_equal(ns["live_noisy"], ns["noisy"])  # the live cell draws the chapter's samples
    noisy = ns["noisy"]
    flipped, w = onedim_head(noisy, w_q=-1.0)
    assert glued["ex-noisy-live-after"] == rmse(flipped, ns["clean"])  # w_q = -1: the same head, the same function
    top = most_attended(w)  # (N,): the key each query attends to most
    positive, negative = noisy > 0, noisy < 0
    assert positive.any() and negative.any() and np.all(positive | negative)
    assert np.all(top[positive] == np.argmin(noisy)), "every positive sample attends most to the smallest"
    assert np.all(top[negative] == np.argmax(noisy)), "every negative one to the largest"
    # what the live cell prints, for the positive samples: the largest sample's position, then the smallest's
    assert glued["ex-noisy-live-top-before"] == glued["one-top-high"]
    assert glued["ex-noisy-live-top-after"] == glued["one-top-low"]
    # "in the trough ... on its crest"
    assert abs(glued["ex-noisy-live-top-after"] - 0.75) < 0.1 and abs(glued["ex-noisy-live-top-before"] - 0.25) < 0.1


def test_ex_position_tokens_look_at_the_last_token_but_hardly_more_than_at_any_other(chapter):
    glued, ns = chapter.glued, chapter.namespace
    positions, noisy = ns["positions"], ns["noisy"]
    # The exercise's projections give q_i = k_i = p_i and v_j = s_j, exactly (products by 1 and 0).
    tokens = ns["position_tokens"]
    np.testing.assert_array_equal(tokens @ ns["W_position"], positions[:, None])
    np.testing.assert_array_equal(tokens @ ns["W_sample"], noisy[:, None])
    # A count over N against 1 - 1 / N: a rounding on each side.
    assert glued["ex-noisy-open-last"] == pytest.approx(1 - 1 / defaults.N, rel=rounding(2), abs=0), "all but the first"
    w = ns["position_weights"]
    # "within a factor e of each other": row i's scores span p_i <= 1 (the exponential rounds, 2 ulps)
    assert (w.max(axis=1) / w.min(axis=1)).max() <= np.e * (1 + rounding(8))
    assert glued["ex-noisy-open-low"] == w.min() < glued["ex-noisy-open-uniform"] == 1 / defaults.N
    assert glued["ex-noisy-open-high"] == w.max() < 2 * glued["ex-noisy-open-uniform"]
    # the first query's scores are all 0: the plain mean, to the rounding of an average of N samples
    assert glued["ex-noisy-open-first"] == pytest.approx(noisy.mean(), rel=0, abs=average_atol(defaults.N, noisy))
    # "tilted towards its end": the outputs fall steadily from the plain mean, as the weights shift to the end
    output = ns["position_output"][:, 0]
    assert glued["ex-noisy-open-final"] == output[-1] < glued["ex-noisy-open-first"]
    assert np.all(np.diff(output) < 0)
    assert glued["ex-noisy-open-mean-rmse"] == rmse(np.full(defaults.N, noisy.mean()), ns["clean"])
    # "against ... for the plain mean everywhere": not smoothing, and close to the plain mean's
    assert glued["sig-noisy-rmse"] < glued["ex-noisy-open-rmse"] < glued["ex-noisy-open-mean-rmse"]
    assert glued["ex-noisy-open-rmse"] == pytest.approx(glued["ex-noisy-open-mean-rmse"], rel=0.1)
