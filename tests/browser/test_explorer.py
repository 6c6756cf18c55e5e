"""The in-page attention explorer of the smoothing chapter, in headless Chromium.

The explorer recomputes the engineered head in JavaScript; these tests check
it against the package (``selfattention.gaussian_head``, ``choose_temperature``)
through the API on its element (``el.attentionExplorer``, documented at the
top of ``_ext/attention_explorer/static/attention_explorer.js``), drive its
sliders by keyboard, mouse and touch, and check the page without JavaScript.
Screenshots land in /tmp/explorer-*.png.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tolerances import assert_close, average_atol, mse_atol, rounding, softmax_rtol, square_scores_error

import selfattention as sa
from selfattention import defaults
from tools import ROOT
from tools.chromium import open_page, show_explorer

SELECTOR = "[data-attention-explorer]"
API = f"document.querySelector('{SELECTOR}').attentionExplorer"
SCRIPT = ROOT / "_ext" / "attention_explorer" / "static" / "attention_explorer.js"
#: The script's CUT: it leaves out of a band the kernel entries below CUT times their row's largest, so a weight
#: left out is below CUT (a row's largest weight is at most 1) and the weights kept lose less than n CUT of their
#: row's sum, a relative change (test_the_band_cut_is_the_scripts checks the value against the script).
CUT = 2.0**-60


def weights_tolerance(n, tau) -> dict:
    """``rtol`` and ``atol`` between the explorer's weights and the package's (the scores' gap, then the cut)."""
    return {"rtol": softmax_rtol(n, js_gap(tau)) + n * CUT, "atol": CUT}


def js_gap(tau, *, leave_one_out=False):
    """How far the explorer's scaled scores can be from the package's, on the book's grid of [0, 1].

    The JavaScript squares the grid distance ``d * step`` directly; the package's positions ``i * step``
    are each rounded (2 roundings more on the distances, on 1 / tau once squared). The head expands the
    square on the centred positions (``P = 1/2``); leave-one-out squares the centred differences (centring:
    1 rounding more on ``4 P**2 / tau``).
    """
    package = (square_scores_error(0.5, tau, expanded=False) + rounding(1, 1 / tau) if leave_one_out
               else square_scores_error(0.5, tau))
    return package + square_scores_error(0.5, tau, expanded=False) + rounding(2, 1 / tau)


def test_the_band_cut_is_the_scripts():
    assert re.search(r"const CUT = 2 \*\* -(\d+);", SCRIPT.read_text())[1] == "60"


def noisy_atol(noisy):
    """Math.sin and numpy's sin of one argument, 1 ulp each; adding the same sigma z rounds once on max|noisy|."""
    return rounding(2) + rounding(1, np.abs(noisy).max())


DRAWN = f"document.querySelector('{SELECTOR} .ae-scale-max').textContent !== ''"


@pytest.fixture
def explorer(page, site_url):
    return show_explorer(page, f"{site_url}/book/smoothing.html", SELECTOR, DRAWN)


def drawn(page):
    """Wait until the explorer has redrawn for its last change (a slider schedules one frame; under load it
    comes late, and the series are the last frame's)."""
    page.wait_for_function(f"!{API}.pending")


def params(page):
    return page.evaluate(f"{API}.params")


def series(page, weights=True):
    data = page.evaluate(f"{API}.series({{weights: {'true' if weights else 'false'}}})")
    return {key: np.asarray(value) for key, value in data.items()}


def assert_matches_package(page, weights=True):
    """The explorer's series equal the package's for its current params."""
    p = params(page)
    got = series(page, weights)
    positions, clean, noisy = sa.noisy_sine(p["n"], p["sigma"], rng=defaults.SEED)
    output, w = sa.gaussian_head(noisy, positions, p["tau"])
    np.testing.assert_array_equal(got["positions"], positions)  # i * (1 / (n - 1)), last 1: numpy's linspace
    np.testing.assert_allclose(got["clean"], clean, rtol=0, atol=rounding(2))  # one argument, two sines
    np.testing.assert_allclose(got["noisy"], noisy, rtol=0, atol=noisy_atol(noisy))
    gap = js_gap(p["tau"])
    # Weighted averages of values within noisy_atol of the package's, by weights within the scores' gap.
    atol = average_atol(p["n"], np.abs(noisy), gap) + noisy_atol(noisy)
    np.testing.assert_allclose(got["output"], output, rtol=0, atol=atol)
    if weights:
        np.testing.assert_allclose(got["weights"], w, **weights_tolerance(p["n"], p["tau"]))
    return got, w


def canvas_pixels(page):
    """{"signal", "matrix" (and "slope"): the canvas's pixels as a data URL}."""
    return page.evaluate(
        f"""() => Object.fromEntries([...document.querySelectorAll('{SELECTOR} canvas')]
            .map(c => [[...c.classList].at(-1).replace('ae-canvas-', ''), c.toDataURL()]))"""
    )


VIRIDIS_TOP, VIRIDIS_BOTTOM = [253, 231, 37], [68, 1, 84]


def heat_map_colors(page):
    """RGB of the heat map at the middle of its diagonal and far off it."""
    return page.evaluate(
        f"""() => {{
            const c = document.querySelector('{SELECTOR} canvas.ae-canvas-matrix');
            const ctx = c.getContext('2d'), s = c.width;
            const rgb = (x, y) => [...ctx.getImageData(x, y, 1, 1).data.slice(0, 3)];
            return {{"diagonal": rgb(s / 2, s / 2), "off diagonal": rgb(Math.floor(s / 5), Math.floor(4 * s / 5))}};
        }}"""
    )


def test_starts_at_the_chapters_figure_and_replaces_the_fallback(explorer):
    assert params(explorer) == {"sigma": defaults.SIGMA, "tau": defaults.TEMPERATURE, "n": defaults.N}
    _, weights = assert_matches_package(explorer)
    assert explorer.locator(f"{SELECTOR} .ae-scale-max").text_content() == f"{weights.max():.2g}"
    assert explorer.locator(f"{SELECTOR} .attention-explorer-fallback").count() == 0
    assert explorer.locator(f"{SELECTOR} canvas").count() == 2
    for key, text in (("sigma", "0.30"), ("tau", "0.005"), ("n", "100")):
        readout = explorer.locator(f"{SELECTOR} output[for$='-{key}']")
        # Announced once per change, by the slider: the readout is hidden from screen readers.
        assert readout.get_attribute("aria-hidden") == "true" and readout.get_attribute("aria-live") is None
        assert readout.text_content() == text
        assert explorer.locator(f"{SELECTOR} input[id$='-{key}']").get_attribute("aria-valuetext") == text
    assert explorer.locator(f"{SELECTOR} [aria-live]").count() == 1  # the best-tau result
    loaded = explorer.evaluate("performance.getEntriesByType('resource').map(entry => entry.name)")
    assert not [url for url in loaded if "attention-explorer-" in url], "the no-JavaScript figure was downloaded"
    assert explorer.external_requests == []


def test_draws_only_when_it_comes_near_the_viewport(page, site_url):
    page.goto(f"{site_url}/book/smoothing.html", wait_until="networkidle")
    page.wait_for_function(f"!!{API}")
    assert page.evaluate(f"window.scrollY === 0 && !({DRAWN})"), "drew while far below the first screen"
    before = page.locator(SELECTOR).bounding_box()["height"]
    page.locator(SELECTOR).scroll_into_view_if_needed()
    page.wait_for_function(DRAWN)
    assert page.locator(SELECTOR).bounding_box()["height"] == before  # its box was final from the start
    assert_matches_package(page)


def test_temperature_is_spoken_in_words(explorer):
    explorer.evaluate(f"{API}.setParams({{tau: 1e-6}})")
    slider = explorer.locator(f"{SELECTOR} input[id$='-tau']")
    assert explorer.locator(f"{SELECTOR} output[for$='-tau']").text_content() == "1.00e-6"
    assert slider.get_attribute("aria-valuetext") == "1.00 times 10 to the power of minus 6"
    explorer.evaluate(f"{API}.setParams({{sigma: 0.0, n: 50}})")
    explorer.locator(f"{SELECTOR} button.ae-best").click()
    best = explorer.locator(f"{SELECTOR} .ae-best-value")
    assert best.get_attribute("aria-live") == "polite"
    tau = params(explorer)["tau"]
    assert tau < 1e-3, tau  # no noise: the least error is at the smallest candidates
    spoken = best.locator(".ae-visually-hidden").text_content()
    assert spoken.startswith("Best temperature: tau = ") and "times 10 to the power of minus" in spoken
    assert best.locator("[aria-hidden=true]").text_content().startswith("τ = ")


@pytest.mark.parametrize(
    "sigma, tau, n",
    [
        (0.0, 0.005, 5),
        (0.3, 1e-6, 100),
        (1.5, 1e-6, 1000),
        (0.7, 3e-4, 257),
        (1.2, 0.05, 500),
        (0.3, 10.0, 1000),
        (0.05, 10.0, 6),
    ],
)
def test_head_agrees_with_the_package(explorer, sigma, tau, n):
    explorer.evaluate(f"{API}.setParams({{sigma: {sigma}, tau: {tau}, n: {n}}})")
    assert params(explorer) == {"sigma": sigma, "tau": tau, "n": n}
    assert_matches_package(explorer, weights=n <= 500)
    if n > 500:  # 10^6 weights: compare the rows at both ends and the middle
        rows = explorer.evaluate(
            f"(() => {{ const w = {API}.series().weights; return [w[0], w[{n // 2}], w[{n - 1}]]; }})()"
        )
        positions, _, noisy = sa.noisy_sine(n, sigma, rng=defaults.SEED)
        _, w = sa.gaussian_head(noisy, positions, tau)
        np.testing.assert_allclose(rows, w[[0, n // 2, n - 1]], **weights_tolerance(n, tau))


def test_bad_params_are_refused(explorer):
    for bad in ("{n: 4}", "{n: 10.5}", "{sigma: -1}", "{tau: 0}", "{tau: 100}"):
        message = explorer.evaluate(
            f"(() => {{ try {{ {API}.setParams({bad}); return null; }} catch (e) {{ return e.message; }} }})()"
        )
        assert message and message.split()[0] in bad
    assert params(explorer) == {"sigma": defaults.SIGMA, "tau": defaults.TEMPERATURE, "n": defaults.N}


@pytest.mark.parametrize("key", ["sigma", "tau", "n"])
def test_each_slider_moves_by_keyboard(explorer, key):
    slider = explorer.locator(f"{SELECTOR} input[id$='-{key}']")
    readout = explorer.locator(f"{SELECTOR} output[for$='-{key}']")
    before, pixels, text = params(explorer), canvas_pixels(explorer), readout.text_content()
    slider.focus()
    slider.press("ArrowRight")
    slider.press("PageUp")
    explorer.wait_for_function(f"{API}.timing.latencyMs > 0")  # the coalesced frame ran
    explorer.wait_for_timeout(50)
    after = params(explorer)
    assert after[key] > before[key]
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    assert readout.text_content() != text
    assert readout.text_content() == slider.get_attribute("aria-valuetext")
    after = canvas_pixels(explorer)
    assert after["signal"] != pixels["signal"]
    if key != "sigma":  # the noise does not change the weights
        assert after["matrix"] != pixels["matrix"]
    assert_matches_package(explorer)


@pytest.mark.parametrize("key", ["sigma", "tau", "n"])
def test_each_slider_moves_by_mouse_drag(explorer, key):
    slider = explorer.locator(f"{SELECTOR} input[id$='-{key}']")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    before, pixels = params(explorer), canvas_pixels(explorer)
    y = box["y"] + box["height"] / 2
    explorer.mouse.move(box["x"] + 0.2 * box["width"], y)
    explorer.mouse.down()
    for frac in (0.3, 0.45, 0.6, 0.7):  # a drag: several moves before the release
        explorer.mouse.move(box["x"] + frac * box["width"], y, steps=3)
    explorer.mouse.up()
    explorer.wait_for_timeout(100)
    after = params(explorer)
    assert after[key] != before[key]
    assert canvas_pixels(explorer) != pixels
    assert_matches_package(explorer, weights=after["n"] <= 500)


def tap_slider(page, url, key):
    """Open ``url`` and tap slider ``key`` at 80 % of its track."""
    page.goto(url, wait_until="networkidle")
    page.wait_for_function(f"!!{API}")
    slider = page.locator(f"{SELECTOR} input[id$='-{key}']")
    box = slider.bounding_box()
    # Tapped where it is once scrolled to and laid out: the parts above it are rendered as they come
    # into view (content-visibility), which moves it after the scroll.
    slider.tap(position={"x": 0.8 * box["width"], "y": box["height"] / 2})
    page.wait_for_timeout(100)


def touch_page(browser, site_url, width):
    """A phone's page, ``width`` px wide, with a touch screen."""
    return open_page(browser, {site_url}, viewport={"width": width, "height": 780}, has_touch=True, is_mobile=True)


def test_slider_moves_by_touch(browser, site_url):
    page = touch_page(browser, site_url, 375)
    try:
        tap_slider(page, f"{site_url}/book/smoothing.html", "n")
        assert params(page)["n"] > defaults.N
        assert_matches_package(page, weights=False)
        assert page.external_requests == []
    finally:
        page.context.close()


def test_temperature_slider_reaches_identity_and_uniform(explorer):
    slider = explorer.locator(f"{SELECTOR} input[id$='-tau']")
    slider.focus()
    slider.press("Home")
    drawn(explorer)
    assert params(explorer)["tau"] == defaults.TEMPERATURE_RANGE[0]
    got, _ = assert_matches_package(explorer)
    # Exactly: the nearest neighbour's kernel, exp(-(1 / (N - 1))**2 / 1e-8) = exp(-1e4), underflows to 0.
    np.testing.assert_array_equal(got["weights"], np.eye(defaults.N))
    np.testing.assert_array_equal(got["output"], got["noisy"])  # no smoothing: y_i * 1 / 1
    assert heat_map_colors(explorer) == {"diagonal": VIRIDIS_TOP, "off diagonal": VIRIDIS_BOTTOM}
    slider.press("End")
    drawn(explorer)
    assert params(explorer)["tau"] == defaults.TEMPERATURE_RANGE[1]
    got, _ = assert_matches_package(explorer)
    n = defaults.N
    assert np.abs(got["weights"] * n - 1).max() < 0.11  # every weight within 11 % of 1/n
    assert np.ptp(got["output"]) < 0.1 * np.ptp(got["clean"])  # flattened to nearly a constant
    colors = heat_map_colors(explorer)
    assert colors["diagonal"][0] > 200 and colors["off diagonal"][0] > 200  # all near viridis' top


def loo_choice(page, sigma, n):
    page.evaluate(f"{API}.setParams({{sigma: {sigma}, n: {n}}})")
    choice = page.evaluate(f"{API}.chooseTemperature({{apply: false}})")
    positions, _, noisy = sa.noisy_sine(n, sigma, rng=defaults.SEED)
    best_tau, scores = sa.choose_temperature(noisy, positions)
    # Mean squared leave-one-out errors whose predictions average n - 1 values within noisy_atol of the
    # package's, by weights within the scores' gap at each candidate.
    atol = [mse_atol(n, 2 * np.abs(noisy).max(),
                     average_atol(n - 1, np.abs(noisy), js_gap(tau, leave_one_out=True)) + noisy_atol(noisy))
            for tau in sa.kernel.DEFAULT_CANDIDATES]
    assert_close(choice["scores"], scores, atol)
    return choice, best_tau, scores


@pytest.mark.parametrize("sigma, n", [(0.3, 100), (0.1, 40), (1.0, 300), (1.5, 1000), (0.02, 30)])
def test_best_tau_is_the_packages_leave_one_out_choice(explorer, sigma, n):
    choice, best_tau, _ = loo_choice(explorer, sigma, n)
    assert choice["tau"] == best_tau


#: The grid of (n, sigma) on which the two "best tau" controls must agree: small n and small sigma, where
#: several candidates tie to rounding (the nearest-neighbour regime), and the book's range beyond.
TIE_GRID_NS = (5, 6, 7, 8, 10, 15, 20, 50, 100)
TIE_GRID_SIGMAS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5)


def test_best_tau_agrees_with_the_package_on_a_grid_covering_ties(explorer):
    """One tie rule: of the candidates within TIE_TOLERANCE of the least error, the largest tau, in both.

    Before, each side took the first candidate of a tie, and rounding decided
    which candidate that was: 4 of 108 such cases disagreed.
    """
    candidates = np.array(explorer.evaluate(f"{API}.data.candidates"))
    np.testing.assert_array_equal(candidates, sa.kernel.DEFAULT_CANDIDATES)
    assert explorer.evaluate(f"{API}.data.tie_tolerance") == sa.kernel.TIE_TOLERANCE
    disagree, ties = [], 0
    for n in TIE_GRID_NS:
        for sigma in TIE_GRID_SIGMAS:
            choice, best_tau, scores = loo_choice(explorer, sigma, n)
            tied = scores <= scores.min() * (1 + sa.kernel.TIE_TOLERANCE)
            ties += int(tied.sum() > 1)
            assert best_tau == candidates[tied].max(), (n, sigma)  # the package takes the largest tied tau
            if choice["tau"] != best_tau:
                disagree.append((n, sigma, choice["tau"], best_tau))
    assert disagree == []
    assert ties >= len(TIE_GRID_NS) * len(TIE_GRID_SIGMAS) // 4, "the grid must cover ties"


def test_best_tau_button_sets_the_temperature(explorer):
    explorer.evaluate(f"{API}.setParams({{sigma: 0.8, n: 200, tau: 10}})")
    explorer.locator(f"{SELECTOR} button.ae-best").click()
    explorer.wait_for_timeout(50)
    positions, _, noisy = sa.noisy_sine(200, 0.8, rng=defaults.SEED)
    best_tau, _ = sa.choose_temperature(noisy, positions)
    assert params(explorer) == {"sigma": 0.8, "tau": best_tau, "n": 200}
    assert "τ =" in explorer.locator(f"{SELECTOR} .ae-best-value").text_content()
    assert_matches_package(explorer)


def test_redraws_are_coalesced_into_animation_frames(explorer):
    redraws = explorer.evaluate(
        f"""() => new Promise(resolve => {{
            const root = document.querySelector('{SELECTOR}');
            const slider = root.querySelector("input[id$='-sigma']");
            let count = 0;
            root.addEventListener('attention-explorer:redraw', () => count++);
            for (let k = 0; k < 20; k++) {{
                slider.value = String(0.05 * k);
                slider.dispatchEvent(new Event('input', {{bubbles: true}}));
            }}
            requestAnimationFrame(() => requestAnimationFrame(() => resolve(count)));
        }})"""
    )
    assert redraws == 1
    # The last value set, 0.05 * 19, through the slider's string and its step: a few roundings on 1.
    assert params(explorer)["sigma"] == pytest.approx(0.95, rel=0, abs=rounding(4))


def test_dark_mode_changes_the_drawing(explorer):
    light = canvas_pixels(explorer)
    explorer.evaluate("document.documentElement.dataset.theme = 'dark'")
    explorer.wait_for_timeout(100)
    assert canvas_pixels(explorer)["signal"] != light["signal"]
    clean = explorer.evaluate(
        f"getComputedStyle(document.querySelector('{SELECTOR}')).getPropertyValue('--ae-clean').trim()"
    )
    assert clean != "#000000"


def test_fits_a_phone_and_stacks_the_panels(browser, site_url):
    page = open_page(browser, {site_url}, viewport={"width": 375, "height": 740}, device_scale_factor=2)
    try:
        page.goto(f"{site_url}/book/smoothing.html", wait_until="networkidle")
        page.wait_for_function(f"!!{API}")
        root = page.locator(SELECTOR)
        assert root.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert root.bounding_box()["width"] <= 375
        signal = page.locator(f"{SELECTOR} .ae-panel-signal").bounding_box()
        matrix = page.locator(f"{SELECTOR} .ae-panel-matrix").bounding_box()
        assert matrix["y"] >= signal["y"] + signal["height"] - 1  # stacked
        root.scroll_into_view_if_needed()
        root.screenshot(path="/tmp/explorer-phone.png")
    finally:
        page.context.close()


def test_screenshots_light_and_dark(explorer):
    root = explorer.locator(SELECTOR)
    root.scroll_into_view_if_needed()
    root.screenshot(path="/tmp/explorer-light.png")
    explorer.evaluate("document.documentElement.dataset.theme = 'dark'")
    explorer.wait_for_timeout(100)
    root.screenshot(path="/tmp/explorer-dark.png")


def test_without_javascript_the_static_figure_shows(browser, site_url):
    page = open_page(browser, {site_url}, java_script_enabled=False)
    try:
        page.goto(f"{site_url}/book/smoothing.html", wait_until="load")
        image = page.locator(f"{SELECTOR} .attention-explorer-fallback img:not(.lean-dark)")  # the dark twin aside
        assert image.count() == 1
        assert image.is_visible()
        assert image.evaluate("img => img.complete && img.naturalWidth > 300")
        assert "attention matrix" in image.get_attribute("alt")
        assert image.get_attribute("src").startswith("../_images/attention-explorer-")  # a file, not base64
        assert image.evaluate("img => img.closest('noscript') !== null")
        assert page.locator(f"{SELECTOR} canvas").count() == 0
        page.locator(SELECTOR).screenshot(path="/tmp/explorer-nojs.png")
        assert page.external_requests == []
    finally:
        page.context.close()


# --- the derivative layer of "Many heads" --------------------------------------------------------

#: Both sides compute each weight as exp(-(p_i + delta - p_j)**2 / tau) over its row's sum, the package
#: through the expanded square, whose terms it rounds to about eps (max|p| + delta)**2 = 1e-16; divided by
#: tau >= 1e-3 (the slider's least, defaults.LAYER_TEMPERATURE_RANGE) that is about 1e-13 in a score, and
#: so in a weight (at most 1) and in an output (a weighted average of values) relative to the values' size:
#: 1e-12 leaves a factor of ten. The layer's output divides by 2 delta, and so does its tolerance.
LAYER_TOL = 1e-12


@pytest.fixture
def layer(page, site_url):
    return show_explorer(page, f"{site_url}/book/many-heads.html", SELECTOR, DRAWN)


def layer_series(page, weights=True):
    data = page.evaluate(f"{API}.series({{weights: {'true' if weights else 'false'}}})")
    heads = [{key: np.asarray(value) for key, value in head.items()} for head in data.pop("heads")]
    return {key: np.asarray(value) for key, value in data.items()}, heads


def package_layer(p):
    """The package's derivative layer at the explorer's params: tokens, heads' outputs and weights, output."""
    from selfattention.multihead import derivative_layer, multi_head, signal_tokens
    from selfattention.studies.derivative import true_derivative

    positions, clean, noisy = sa.noisy_sine(p["n"], p["sigma"], rng=defaults.SEED)
    heads, W_O = derivative_layer(p["delta"], p["tau"])
    X = signal_tokens(noisy, positions)
    runs = [head(X) for head in heads]
    return positions, clean, noisy, runs, multi_head(X, heads, W_O)[:, 0], true_derivative(positions)


def assert_layer_matches_package(page, weights=True):
    p = page.evaluate(f"{API}.params")
    got, heads = layer_series(page, weights)
    positions, clean, noisy, runs, output, slope = package_layer(p)
    scale = max(1.0, np.abs(noisy).max())  # outputs are weighted averages of the samples
    np.testing.assert_allclose(got["positions"], positions, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["clean"], clean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["noisy"], noisy, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["slope"], slope, rtol=0, atol=1e-12)
    for head, (want_out, want_w) in zip(heads, runs, strict=True):
        np.testing.assert_allclose(head["output"], want_out[:, 0], rtol=0, atol=LAYER_TOL * scale)
        if weights:
            np.testing.assert_allclose(head["weights"], want_w, rtol=0, atol=LAYER_TOL)
    np.testing.assert_allclose(got["output"], output, rtol=0, atol=LAYER_TOL * scale / p["delta"])
    return got, heads, runs


def test_the_layer_starts_at_the_directives_settings_and_replaces_the_fallback(layer):
    assert layer.evaluate(f"{API}.params") == {"delta": 0.1, "tau": 0.004, "sigma": defaults.SIGMA, "n": defaults.N}
    assert_layer_matches_package(layer)
    assert layer.locator(f"{SELECTOR} .attention-explorer-fallback").count() == 0
    assert layer.locator(f"{SELECTOR} canvas").count() == 3
    assert layer.locator(f"{SELECTOR} button").count() == 0  # no best-tau button: leave-one-out is the head's
    assert layer.evaluate(f"{API}.chooseTemperature") is None
    for key, text in (("delta", "0.100"), ("tau", "0.004"), ("sigma", "0.30"), ("n", "100")):
        readout = layer.locator(f"{SELECTOR} output[for$='-{key}']")
        assert readout.get_attribute("aria-hidden") == "true" and readout.text_content() == text
        assert layer.locator(f"{SELECTOR} input[id$='-{key}']").get_attribute("aria-valuetext") == text
        assert layer.locator(f"{SELECTOR} label[for$='-{key}']").count() == 1
    assert layer.external_requests == []


@pytest.mark.parametrize(
    "delta, tau, sigma, n",
    [
        (0.1, 0.004, 0.3, 100),
        (0.005, 0.001, 0.0, 5),  # an offset below one step of the grid
        (0.25, 0.001, 1.5, 7),  # four grid steps ahead, most rows looking past an end
        (0.25, 0.1, 0.7, 333),  # wide bands
        (0.005, 0.1, 0.2, 1000),
        (0.123, 0.0123, 0.9, 1000),
        (0.2, 0.001, 0.3, 100),  # narrow bands far from the query: 20 rows with their own kernel
    ],
)
def test_the_layer_agrees_with_the_package(layer, delta, tau, sigma, n):
    layer.evaluate(f"{API}.setParams({{delta: {delta}, tau: {tau}, sigma: {sigma}, n: {n}}})")
    assert layer.evaluate(f"{API}.params") == {"delta": delta, "tau": tau, "sigma": sigma, "n": n}
    assert_layer_matches_package(layer, weights=n <= 500)
    if n > 500:  # compare some rows of each head's weights
        rows = layer.evaluate(f"""(() => {{ const h = {API}.series().heads;
            return h.map(x => [x.weights[0], x.weights[{n // 2}], x.weights[{n - 1}]]); }})()""")
        _, _, _, runs, _, _ = package_layer({"delta": delta, "tau": tau, "sigma": sigma, "n": n})
        for got, (_, w) in zip(rows, runs, strict=True):
            np.testing.assert_allclose(got, w[[0, n // 2, n - 1]], rtol=0, atol=LAYER_TOL)


def test_each_head_looks_its_way_and_the_layer_estimates_the_slope(layer):
    got, heads, _ = assert_layer_matches_package(layer)
    p, middle = got["positions"], defaults.N // 2
    ahead, behind = (h["weights"][middle] @ p for h in heads)
    assert ahead == pytest.approx(p[middle] + 0.1, abs=1e-6) and behind == pytest.approx(p[middle] - 0.1, abs=1e-6)
    inside = (p >= 0.25) & (p <= 0.75)
    assert np.sqrt(np.mean((got["output"] - got["slope"])[inside] ** 2)) < 1.0  # the chapter's 0.8, on 6.3


def test_the_layers_bad_params_are_refused(layer):
    for bad in ("{delta: 0}", "{delta: 0.3}", "{tau: 1e-4}", "{tau: 0.2}", "{n: 4}", "{sigma: 2}"):
        message = layer.evaluate(
            f"(() => {{ try {{ {API}.setParams({bad}); return null; }} catch (e) {{ return e.message; }} }})()"
        )
        assert message and message.split()[0] in bad
    assert layer.evaluate(f"{API}.params")["delta"] == 0.1


@pytest.mark.parametrize("key", ["delta", "tau", "sigma", "n"])
def test_each_layer_slider_moves_by_keyboard_and_redraws(layer, key):
    slider = layer.locator(f"{SELECTOR} input[id$='-{key}']")
    before, pixels = layer.evaluate(f"{API}.params"), canvas_pixels(layer)
    slider.focus()
    slider.press("ArrowRight")
    slider.press("PageUp")
    layer.wait_for_function(f"{API}.timing.latencyMs > 0")
    layer.wait_for_timeout(50)
    after = layer.evaluate(f"{API}.params")
    assert after[key] > before[key]
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    now = canvas_pixels(layer)
    assert now["signal"] != pixels["signal"] and now["slope"] != pixels["slope"]  # the heads' outputs, the slope
    if key != "sigma":
        assert now["matrix"] != pixels["matrix"]  # the bands move; the noise does not change them
    assert_layer_matches_package(layer)


def test_the_offset_slider_moves_by_touch(browser, site_url):
    page = touch_page(browser, site_url, 390)
    try:
        tap_slider(page, f"{site_url}/book/many-heads.html", "delta")
        assert page.evaluate(f"{API}.params")["delta"] > 0.1
        assert_layer_matches_package(page, weights=False)
        root = page.locator(SELECTOR)
        assert root.evaluate("el => el.scrollWidth <= el.clientWidth")
        panels = [page.locator(f"{SELECTOR} .ae-panel-{name}").bounding_box() for name in ("signal", "slope", "matrix")]
        assert panels[1]["y"] >= panels[0]["y"] + panels[0]["height"] - 1  # stacked on a phone
        assert panels[2]["y"] >= panels[1]["y"] + panels[1]["height"] - 1
        root.screenshot(path="/tmp/explorer-layer-phone.png")
        assert page.external_requests == []
    finally:
        page.context.close()


def test_the_layer_in_dark_mode_and_screenshots(layer):
    root = layer.locator(SELECTOR)
    root.screenshot(path="/tmp/explorer-layer-light.png")
    light = canvas_pixels(layer)
    layer.evaluate("document.documentElement.dataset.theme = 'dark'")
    layer.wait_for_timeout(100)
    assert canvas_pixels(layer)["signal"] != light["signal"]
    root.screenshot(path="/tmp/explorer-layer-dark.png")


def test_without_javascript_the_layers_static_figure_shows(browser, site_url):
    page = open_page(browser, {site_url}, java_script_enabled=False)
    try:
        page.goto(f"{site_url}/book/many-heads.html", wait_until="load")
        image = page.locator(f"{SELECTOR} .attention-explorer-fallback img:not(.lean-dark)")  # the dark twin aside
        assert image.count() == 1 and image.is_visible()
        assert image.evaluate("img => img.complete && img.naturalWidth > 300")
        assert "two heads' weights" in image.get_attribute("alt")
        caption = page.locator(f"{SELECTOR} .attention-explorer-fallback figcaption").text_content()
        assert caption.startswith("The derivative layer of two heads")
        assert page.external_requests == []
    finally:
        page.context.close()
