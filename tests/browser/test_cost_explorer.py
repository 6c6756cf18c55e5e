"""The cost explorer of "What attention costs", in headless Chromium.

The explorer computes the exact head and the head of random Fourier features
in JavaScript (``_ext/attention_explorer/static/cost_explorer.js``); these
tests check both against the package (``selfattention.gaussian_head``,
``random_features.random_feature_head`` with the same frequencies) through
the API on its element, drive its sliders, run its timing, and check that
the timing leaves the page free between its slices. No test asserts a time.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tolerances import EPS, average_atol, rounding, square_scores_error

import selfattention as sa
from selfattention import defaults, random_features
from selfattention.interactive.explorer_data import COST_FEATURE_SEED, COST_TIMING_NS
from tools.chromium import show_explorer

SELECTOR = "[data-attention-explorer].ae-kind-cost"
API = f"document.querySelector('{SELECTOR}').attentionExplorer"
DRAWN = f"document.querySelector('{SELECTOR} .ae-cost-gap')?.textContent !== ''"


@pytest.fixture
def cost_explorer(page, site_url):
    return show_explorer(page, f"{site_url}/book/attention-cost.html", SELECTOR, DRAWN)


def series(page):
    return {key: np.asarray(value) for key, value in page.evaluate(f"{API}.series()").items()}


def exact_atol(n, noisy, tau):
    """The package expands the square of centred positions (P = 1/2), the script squares their difference
    (one rounding more, the difference of two centred positions); both sums of n weights: average_atol."""
    gap = square_scores_error(0.5, tau) + square_scores_error(0.5, tau, expanded=False) + rounding(1, 1 / tau)
    return average_atol(n, np.abs(noisy), gap) + rounding(2, np.abs(noisy).max())


def features_bound(noisy, denominators, output, count):
    r"""How far the script's head of random features can be from the package's, with the same frequencies.

    Both compute every angle omega_r q_i as the same product of the same doubles, and its cosine and sine to
    1 ulp (numpy's libm, the browser's fdlibm): features within 2 EPS / sqrt(D). The sums over the n keys,
    S_c = sum_j psi_jc v_j, are added in different orders (BLAS's blocks, the script's loop): each within
    n EPS sum_j |psi_jc v_j| <= n EPS n max|v| / sqrt(D) of the exact sum, twice that apart, plus n times
    the features' gap. Each row's dot product with S (2 D terms, sizes summing to at most 2 n max|v|) then
    rounds 2 D times either way. So numerators differ by at most (4 n**2 + 8 n D + 8 n) EPS max|v|, the
    denominators likewise with v = 1, and a ratio num / den by (d_num + |out| d_den) / (|den| - d_den).
    """
    n, v = noisy.size, max(1.0, np.abs(noisy).max())
    d_num = (4 * n**2 + 8 * n * count + 8 * n) * EPS * v
    d_den = (4 * n**2 + 8 * n * count + 8 * n) * EPS
    return (d_num + np.abs(output) * d_den) / (np.abs(denominators) - d_den)


def package_heads(n, count):
    positions, _, noisy = sa.noisy_sine(n, defaults.SIGMA, rng=defaults.SEED)
    exact, _ = sa.gaussian_head(noisy, positions, defaults.TEMPERATURE)
    omega = random_features.gaussian_frequencies(count, defaults.TEMPERATURE, COST_FEATURE_SEED)
    features, denominators = random_features.random_feature_head(noisy, positions, omega)
    return positions, noisy, exact, omega, features, denominators


def assert_matches_package(page):
    p = page.evaluate(f"{API}.params")
    got = series(page)
    positions, noisy, exact, omega, features, denominators = package_heads(p["n"], p["count"])
    np.testing.assert_array_equal(got["positions"], positions)
    np.testing.assert_array_equal(got["frequencies"], omega)  # the same draws, the same two roundings
    np.testing.assert_allclose(got["exact"], exact, rtol=0, atol=exact_atol(p["n"], noisy, defaults.TEMPERATURE))
    bound = features_bound(noisy, denominators, features, p["count"])
    assert (bound > 0).all(), "a denominator within its own rounding of 0"
    assert (np.abs(got["features"] - features) <= bound).all()
    return got, features, bound


def test_starts_at_the_directives_settings_and_replaces_the_fallback(cost_explorer):
    assert cost_explorer.evaluate(f"{API}.params") == {"n": defaults.N, "count": 256}
    assert_matches_package(cost_explorer)
    assert cost_explorer.locator(f"{SELECTOR} .attention-explorer-fallback").count() == 0
    assert cost_explorer.locator(f"{SELECTOR} canvas").count() == 2
    for key, text in (("n", str(defaults.N)), ("count", "256")):
        assert cost_explorer.locator(f"{SELECTOR} output[for$='-{key}']").text_content() == text
        assert cost_explorer.locator(f"{SELECTOR} label[for$='-{key}']").count() == 1
    note = cost_explorer.locator(f"{SELECTOR} .ae-cost-note").text_content()
    assert "in this browser, on this device" in note
    now = cost_explorer.locator(f"{SELECTOR} .ae-cost-now").text_content()
    assert now.startswith(f"This device, N = {defaults.N}: exact head ") and "D = 256 random frequencies" in now
    assert cost_explorer.external_requests == []


@pytest.mark.parametrize(("n", "count"), [(8, 8), (12, 4), (16, 4)])
def test_the_features_head_equals_the_packages_to_1e_12(cost_explorer, n, count):
    """Where the rounding bound above is below 1e-12 (few tokens and features), the two agree to 1e-12."""
    cost_explorer.evaluate(f"{API}.setParams({{n: {n}, count: {count}}})")
    got, features, bound = assert_matches_package(cost_explorer)
    assert bound.max() <= 1e-12, "the derived bound is itself below 1e-12 here"
    assert np.max(np.abs(got["features"] - features)) <= 1e-12


@pytest.mark.parametrize(("n", "count"), [(5, 1), (100, 64), (200, 3), (1000, 256), (777, 100)])
def test_both_heads_agree_with_the_package(cost_explorer, n, count):
    cost_explorer.evaluate(f"{API}.setParams({{n: {n}, count: {count}}})")
    assert cost_explorer.evaluate(f"{API}.params") == {"n": n, "count": count}
    assert_matches_package(cost_explorer)


def test_bad_params_are_refused(cost_explorer):
    for bad in ("{n: 4}", "{n: 1001}", "{count: 0}", "{count: 257}", "{count: 2.5}"):
        message = cost_explorer.evaluate(
            f"(() => {{ try {{ {API}.setParams({bad}); return null; }} catch (e) {{ return e.message; }} }})()")
        assert message and message.split()[0] in bad
    for bad in ("{ns: [8000]}", "{ns: []}", "{count: 0}"):
        message = cost_explorer.evaluate(
            f"(() => {{ try {{ {API}.timeHeads({bad}); return null; }} catch (e) {{ return e.message; }} }})()")
        assert message and message.split()[0] in bad, message
    assert max(cost_explorer.evaluate(f"{API}.data.timing_ns")) == max(COST_TIMING_NS) == 4000, "the cap on N"


@pytest.mark.parametrize("key", ["n", "count"])
def test_each_slider_moves_by_keyboard_and_redraws(cost_explorer, key):
    before = cost_explorer.evaluate(f"{API}.params")[key]
    at_top = before == cost_explorer.evaluate(f"{API}.data.{key}_range[1]")
    slider = cost_explorer.locator(f"{SELECTOR} input[id$='-{key}']")
    slider.focus()
    slider.press("ArrowLeft" if at_top else "ArrowRight")
    after = before - 1 if at_top else before + 1
    # Slider events are redrawn on the next animation frame: wait for the redraw, not only the params.
    cost_explorer.wait_for_function(f"(() => {{ const p = {API}.params, s = {API}.series(); "
                                    f"return p.{key} === {after} && s.positions.length === p.n "
                                    f"&& s.frequencies.length === p.count; }})()")
    assert_matches_package(cost_explorer)


def test_the_timing_runs_in_slices_that_leave_the_page_free(cost_explorer):
    """A timer the page sets just after the timing starts fires before the timing ends, at the largest N."""
    order = cost_explorer.evaluate(f"""async () => {{
        const events = [];
        const run = {API}.timeHeads({{ns: [1000, 4000], count: 64}}).then(() => events.push("timed"));
        setTimeout(() => events.push("page"), 0);
        await run;
        return events;
    }}""")
    assert order == ["page", "timed"]
    times = cost_explorer.evaluate(f"{API}.lastTimes()")
    assert times["ns"] == [1000, 4000] and times["count"] == 64
    assert all(t > 0 for t in times["exactMs"] + times["featureMs"])
    note = cost_explorer.locator(f"{SELECTOR} .ae-cost-note").text_content()
    assert note.startswith("Measured in this browser, on this device, just now: at N = 4000")


def test_the_button_times_both_heads_at_every_n(cost_explorer):
    button = cost_explorer.locator(f"{SELECTOR} button.ae-best")
    assert button.text_content() == "Time both heads as N grows"
    button.click()
    cost_explorer.wait_for_function(f"{API}.lastTimes() && {API}.lastTimes().featureMs.length === "
                                    f"{len(COST_TIMING_NS)}", timeout=120_000)
    assert cost_explorer.evaluate(f"{API}.lastTimes().ns") == list(COST_TIMING_NS)
    cost_explorer.wait_for_function(f"!document.querySelector('{SELECTOR} button.ae-best').disabled")


def test_nothing_is_timed_on_load(cost_explorer):
    assert cost_explorer.evaluate(f"{API}.lastTimes()") is None


def test_screenshots_light_and_dark(cost_explorer):
    cost_explorer.locator(SELECTOR).screenshot(path="/tmp/cost-explorer-light.png")
    cost_explorer.evaluate("document.documentElement.dataset.theme = 'dark'")
    cost_explorer.wait_for_timeout(100)
    cost_explorer.locator(SELECTOR).screenshot(path="/tmp/cost-explorer-dark.png")


def test_a_time_below_the_clocks_tick_reads_as_such(cost_explorer):
    """Chromium's clock ticks in steps of 0.1 ms here: a shorter time is "< 0.1 ms", never "0.0 ms"."""
    cost_explorer.evaluate(f"{API}.setParams({{n: 8, count: 4}})")
    now = cost_explorer.locator(f"{SELECTOR} .ae-cost-now").text_content()
    times = re.findall(r"(?:exact head|random frequencies) (< 0\.1|[0-9.]+) ms", now)
    assert len(times) == 2, now
    assert all(t == "< 0.1" or float(t) >= 0.1 for t in times), now
    assert "< 0.1 ms" in now, now  # the exact head of 8 samples takes a few microseconds


#: Where the pinned picture covers the times panel, as the page is scrolled through the explorer.
COVERED = """async ([SELECTOR, step]) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const root = document.querySelector(SELECTOR);
  const panel = root.querySelector('.ae-panel-times'), main = root.querySelector('.ae-main');
  window.scrollBy(0, root.getBoundingClientRect().top - innerHeight);
  await frame();
  const covered = [];
  for (let k = 0; k < 1000 && root.getBoundingClientRect().bottom > 0; k++) {
    const p = panel.getBoundingClientRect(), m = main.getBoundingClientRect();
    const overlap = Math.min(p.bottom, m.bottom) - Math.max(p.top, m.top);
    if (overlap > 0 && p.top < innerHeight && m.bottom > 0) covered.push(Math.round(overlap));
    window.scrollBy(0, step);
    await frame();
  }
  return covered;
}"""


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1440, "height": 900}])
def test_the_pinned_picture_never_covers_the_times_panel(cost_explorer, viewport):
    """The times panel moves with the button, not a slider: it follows the stage, and the pinned
    picture lets go of the view before the panel comes up."""
    cost_explorer.set_viewport_size(viewport)
    assert cost_explorer.evaluate(COVERED, [SELECTOR, 16]) == []
