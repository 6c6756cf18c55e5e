"""selfattention.studies.approximate_heads: the errors it reports are those of the heads it names, replayed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import selfattention as sa
from selfattention import cost, random_features, window
from selfattention.metrics import rmse
from selfattention.studies import approximate_heads as ac
from selfattention.studies import feature_draws

TAU = 0.005


@pytest.fixture(scope="module")
def signal():
    positions, _, noisy = sa.noisy_sine(60, 0.3, rng=1729)
    return noisy, positions


def test_the_errors_are_the_named_heads_replayed_draw_by_draw(signal):
    s, p = signal
    found = ac.feature_errors(s, p, TAU, [2, 8], 3, rng=5)
    exact, _ = sa.gaussian_head(s, p, TAU)
    rng = np.random.default_rng(5)
    for k, count in enumerate([2, 8]):
        for d in range(3):
            for method in ac.METHODS:
                output, denominators = ac.feature_head(method, s, p, TAU, count, rng)
                assert found[method][d, k] == rmse(output, exact)
                if method == "fourier":
                    assert found["nonpositive"][d, k] == bool((denominators <= 0).any())
    np.testing.assert_array_equal(found["counts"], [2, 8])


def test_a_denominator_at_or_below_zero_is_flagged_and_none_above(signal, monkeypatch):
    """The rule itself, at its edge: a row's denominator of 0 or -5e-324 is flagged, 5e-324 is not."""
    s, p = signal
    edges = iter([0.0, -5e-324, 5e-324, -0.25])

    def head(method, signal, positions, temperature, count, rng=None):
        denominators = np.ones(np.size(signal))
        denominators[7] = next(edges)  # one row at the edge, the others well above it
        return np.zeros(np.size(signal)), denominators

    monkeypatch.setattr(ac, "feature_head", head)
    found = ac.feature_errors(s, p, TAU, [2, 4], 2, rng=0, methods=["fourier"])
    # The grid goes count by count: (draw 0, D = 2), (draw 1, D = 2), (draw 0, D = 4), (draw 1, D = 4).
    np.testing.assert_array_equal(found["nonpositive"], [[True, False], [True, True]])


def test_some_methods_only(signal):
    found = ac.feature_errors(*signal, TAU, [4], 2, rng=1, methods=["spread"])
    assert set(found) == {"counts", "spread", "nonpositive"}
    assert not found["nonpositive"].any(), "no cosine draw was made"


def test_the_first_draw_that_crosses_zero(signal):
    s, p = signal
    found = ac.nonpositive_draw(s, p, TAU, 4, rng=3)
    assert (found["denominators"] <= 0).any()
    output, denominators = random_features.random_feature_head(s, p, found["frequencies"])
    np.testing.assert_array_equal(output, found["output"])
    np.testing.assert_array_equal(denominators, found["denominators"])
    rng = np.random.default_rng(3)
    for _ in range(found["draw"]):  # every draw before it stayed above 0
        _, earlier = random_features.random_feature_head(s, p, random_features.gaussian_frequencies(4, TAU, rng))
        assert (earlier > 0).all()
    np.testing.assert_array_equal(found["exact_denominators"], ac.kernel_sums(p, TAU))


def test_a_draw_that_never_crosses_zero_is_refused_by_name(signal):
    with pytest.raises(ValueError, match="tries"):
        ac.nonpositive_draw(*signal, TAU, 4000, rng=1, tries=2)


def test_the_kernel_sums_are_the_rows_of_the_kernel(signal):
    p = signal[1]
    kernel = np.exp(-((p[:, None] - p[None, :]) ** 2) / TAU)
    np.testing.assert_allclose(ac.kernel_sums(p, TAU), kernel.sum(axis=1), rtol=1e-14)


def test_the_window_errors_are_the_window_heads(signal):
    s, p = signal
    widths = [0.0, 0.05, 0.2]
    found = ac.window_errors(s, p, TAU, widths)
    exact, _ = sa.gaussian_head(s, p, TAU)
    for k, U in enumerate(widths):
        output, keys = window.window_head(s, p, TAU, U)
        assert found["errors"][k] == rmse(output, exact)
        assert found["pairs"][k] == keys.sum() and found["keys"][k] == keys.mean()


def test_cost_and_error_counts_with_the_cost_module(signal):
    s, p = signal
    found = ac.cost_and_error(s, p, TAU, [0.05, 0.2], [4, 16], 3, rng=2)
    pairs = ac.window_errors(s, p, TAU, [0.05, 0.2])["pairs"]
    np.testing.assert_array_equal(found["window"]["operations"], [cost.window_cost(int(x)).multiply_adds / 60
                                                                  for x in pairs])
    assert found["fourier"]["operations"].tolist() == [cost.feature_cost(60, 2 * D).multiply_adds / 60
                                                       for D in (4, 16)]
    assert found["spread"]["operations"].tolist() == [cost.feature_cost(60, D).multiply_adds / 60 for D in (4, 16)]
    errors = ac.feature_errors(s, p, TAU, [4, 16], 3, rng=2, methods=("fourier", "spread"))
    np.testing.assert_array_equal(found["spread"]["errors"], np.median(errors["spread"], axis=0))


def test_read_timings_checks_what_it_reads(tmp_path):
    path = tmp_path / "timings.json"
    good = {"machine": "m", "date": "d", "methods": {"exact": {"n": [1, 2], "seconds": [0.1, 0.4], "what": "x"}}}
    path.write_text(json.dumps(good))
    read = cost.read_timings(path)
    assert read["machine"] == "m" and read["exact"]["what"] == "x"
    np.testing.assert_array_equal(read["exact"]["seconds"], [0.1, 0.4])
    for bad, word in (({"machine": "m"}, "lacks"), ({**good, "methods": {"exact": {"n": [1], "seconds": [1, 2]}}},
                                                     "do not match")):
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=word):
            cost.read_timings(path)
    with pytest.raises(ValueError, match="path"):
        cost.read_timings(tmp_path / "missing.json")


def test_error_slopes_fit_the_medians_of_all_draws_and_of_each_group():
    counts = np.array([4.0, 16.0, 64.0, 256.0])
    rng = np.random.default_rng(3)
    errors = counts**-0.5 * np.exp(0.1 * rng.standard_normal((12, 4)))  # (draws, k)
    found = feature_draws.error_slopes(counts, errors, 16, groups=3)
    assert found["pooled"] == cost.loglog_slope(counts[1:], np.median(errors, axis=0)[1:])
    for g, slope in enumerate(found["groups"]):
        assert slope == cost.loglog_slope(counts[1:], np.median(errors[4 * g:4 * g + 4], axis=0)[1:])
    exact = feature_draws.error_slopes(counts, np.tile(counts**-0.5, (4, 1)), 4, groups=2)
    assert exact["pooled"] == pytest.approx(-0.5, abs=1e-12) and exact["groups"] == pytest.approx([-0.5, -0.5])
    with pytest.raises(ValueError, match="smallest"):
        feature_draws.error_slopes(counts, errors, 256, groups=3)
    with pytest.raises(ValueError, match="errors"):
        feature_draws.error_slopes(counts, errors[:, :3], 16, groups=3)


def test_the_nonpositive_rate_crosses_often_with_few_frequencies_and_never_with_a_flat_signal(signal):
    _, p = signal
    few = feature_draws.nonpositive_rate(p, TAU, 2, 200, rng=1)
    many = feature_draws.nonpositive_rate(p, TAU, 512, 20, rng=1)
    assert few["rate"] > 0.1 and many["rate"] == 0
    assert few["crossed"].shape == (200,) and few["rate"] == few["crossed"].mean()


# The first value at the bottom of the double range, the rest at the top: with a wide exact head, a
# one-key window's output (the value itself) and the exact head's (about 3/5 of the top) differ by
# more than the largest double, so the error cannot be measured.
HUGE = np.array([-1.0, 1.0, 1.0, 1.0, 1.0]) * np.finfo(float).max


@pytest.mark.parametrize("study", [
    lambda s, p: ac.window_errors(s, p, 10.0, [0.1, 0.5]),
    lambda s, p: ac.cost_and_error(s, p, 10.0, [0.1], [2], 2, rng=1),
])
def test_an_error_that_overflows_names_the_signal(study):
    with pytest.raises(ValueError, match=r"^signal: .*overflows the double range"):
        study(HUGE, np.linspace(0.0, 1.0, HUGE.size))
