"""The in-context explorer of "Heads that learn while they read", in headless Chromium.

The explorer computes three learners on a prompt the reader drags, in
JavaScript (``_ext/attention_explorer/static/in_context_explorer.js``); these
tests hold its curves to the package's (:mod:`selfattention.in_context`, through
:func:`selfattention.interactive.in_context_data.explorer_curves`) at the same
prompt, temperature and step size, drive its examples by mouse, touch and
keyboard and its sliders and buttons, check the chapter's sentences about
what each control moves, and that no request leaves the local server.
Screenshots land in /tmp/in-context-explorer-*.png.
"""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import EPS, average_atol, rounding

from selfattention.interactive import in_context_data as icd
from tools.chromium import open_page, show_explorer

SELECTOR = "[data-attention-explorer].ae-kind-in-context"
API = f"document.querySelector('{SELECTOR}').attentionExplorer"
PAGE = "book/in-context.html"
DRAWN = f"document.querySelector('{SELECTOR} .ae-ic-count')?.textContent !== ''"
FRAMES = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@pytest.fixture
def explorer(page, site_url):
    return show_explorer(page, f"{site_url}/{PAGE}", SELECTOR, DRAWN)


def series(page):
    return {key: np.asarray(value) for key, value in page.evaluate(f"{API}.series()").items()}


def softmax_atol(labels, tau):
    """How far the script's softmax head can be from the package's ``softmax_head``, inputs in [0, 1].

    The package scores ``[p_j, 1]`` against ``[q, 1]`` by the quadratic trick,
    ``2 q p_j + 2 - (p_j**2 + 1) - (q**2 + 1)``: four terms of sizes at most 2, whose products and additions
    round at most 7 times on at most their sum, 8 (in any order: BLAS may fuse or reorder them), and each
    squared length rounds twice on at most 2: ``28 + 4 = 32 EPS``. Dividing by ``tau`` and subtracting the
    largest score round twice on at most ``1 / tau`` (every score is in ``[-1 / tau, 0]``). The script squares
    ``q - p_j`` (three roundings on at most 1), then divides and subtracts (two on ``1 / tau``). So the scaled
    scores are at most ``g = (32 + 1 + 1.5 + 1) EPS / tau`` apart, and the weighted averages of the labels
    :func:`tolerances.average_atol` apart.
    """
    gap = 35.5 * EPS / tau
    return average_atol(labels.size, labels, gap)


def one_step_atol(labels, eta):
    """Both compute ``eta * (sum_j y_j (p_j q + 1)) / N``: each term rounds twice on at most ``2 |y|``, the sum
    ``N - 1`` times on at most ``2 N |y|`` (in any order), the mean and ``eta`` once each on the result: each
    computation within ``(N + 3) EPS / 2`` of ``eta 2 |y|``, the two within :func:`tolerances.rounding` of it."""
    return eta * rounding(labels.size + 3, 2 * np.abs(labels).max())


def least_squares_atol(inputs, labels, queries):
    r"""How far the script's least squares can be from the package's, at each query.

    Both solve the problem :math:`\min_\phi \lVert A \phi - y \rVert`, ``A = [p, 1]`` (N x 2), by a backward
    stable method: the package by LAPACK's SVD (``lstsq``; ``A`` is scaled by its largest entry, 1 here, which is
    exact), the script by modified Gram-Schmidt on ``[1, p, y]`` (it centres ``p`` and ``y`` on the column of
    ones, then projects; Björck 1967, Higham, *Accuracy and Stability of Numerical Algorithms*, section 20.3),
    each the exact solution for data perturbed by at most ``e = 10 N EPS`` in norm (a modest multiple of the
    ``N`` roundings per entry of either). By the perturbation bound of least squares (Higham, theorem 20.1),
    each is within ``kappa e / (1 - kappa e) (2 + (kappa + 1) |r| / (|A| |phi|)) |phi|`` of the exact weights,
    ``kappa`` the condition number of ``A`` and ``r`` the residual; a prediction ``[q, 1] . phi`` within
    ``|[q, 1]|`` times that, and its own two roundings on ``|[q, 1]| |phi|``.

    All inputs equal (one example, say), ``A`` has rank one and the bound above does not hold; both then
    compute the shortest weights, ``phi = mean(y) [p, 1] / (p**2 + 1)``, from the mean of the labels (``N``
    roundings on at most ``mean |y|`` each, in relative terms) and a few roundings more:
    ``|d phi| <= e mean|y| / sqrt(p**2 + 1)`` each.
    """
    A = np.column_stack([inputs, np.ones_like(inputs)])
    phi, *_ = np.linalg.lstsq(A, labels, rcond=None)
    e, size_phi = 10 * inputs.size * EPS, np.linalg.norm(phi)
    if np.ptp(inputs) == 0:
        weights = e * np.abs(labels).mean() / np.hypot(inputs[0], 1.0)
    else:
        kappa = np.linalg.cond(A)
        ratio = np.linalg.norm(labels - A @ phi) / (np.linalg.norm(A, 2) * size_phi)
        weights = kappa * e / (1 - kappa * e) * (2 + (kappa + 1) * ratio) * size_phi
    reach = np.hypot(queries, 1.0)
    return 2 * (weights * reach) + rounding(2, reach * size_phi)


def check(page):
    """The explorer's three curves against the package's at its own settings; returns them, the gaps, the bounds."""
    page.evaluate(FRAMES)  # a change is redrawn at the next frame
    p = page.evaluate(f"{API}.params")
    got = series(page)
    inputs, labels = np.asarray(p["inputs"]), np.asarray(p["labels"])
    np.testing.assert_array_equal(got["inputs"], inputs)
    want = icd.explorer_curves(inputs, labels, got["queries"], p["tau"], p["eta"])
    gaps = {"softmax": np.abs(got["softmax"] - want["softmax head"]),
            "oneStep": np.abs(got["oneStep"] - want["one step"]),
            "leastSquares": np.abs(got["leastSquares"] - want["least squares"])}
    bounds = {"softmax": softmax_atol(labels, p["tau"]), "oneStep": one_step_atol(labels, p["eta"]),
              "leastSquares": least_squares_atol(inputs, labels, got["queries"])}
    for name, gap in gaps.items():
        assert (gap <= bounds[name]).all(), f"{name}: {gap.max():.3g} beyond its bound {np.max(bounds[name]):.3g}"
    return got, gaps, bounds


def set_state(page, **state):
    args = ", ".join(f"{key}: {np.asarray(value).tolist()!r}" for key, value in state.items())
    page.evaluate(f"{API}.setParams({{{args}}})")


#: Prompts the tests set: spread over [0, 1] (64, the most, and 5), and the corner cases of least squares.
SPREAD_64 = (np.linspace(0.0, 1.0, 64), np.round(np.sin(7 * np.linspace(0.0, 1.0, 64)), 3))
SPREAD_5 = ([0.05, 0.3, 0.5, 0.72, 0.95], [-1.0, 0.4, 1.2, -0.3, 0.8])
START = tuple(icd.start_prompt())
NEAR_LINE = (np.linspace(0.05, 0.95, 10), 0.8 * np.linspace(0.05, 0.95, 10) - 0.3 + 0.05 * np.cos(np.arange(10)))


def test_starts_at_the_chapters_prompt_and_replaces_the_fallback(explorer):
    data = icd.in_context_explorer_data()
    p = explorer.evaluate(f"{API}.params")
    assert p == {"tau": data["temperature"], "eta": data["eta"], "inputs": data["inputs"], "labels": data["labels"]}
    check(explorer)
    assert explorer.locator(f"{SELECTOR} .attention-explorer-fallback").count() == 0
    assert explorer.locator(f"{SELECTOR} .ae-ic-point").count() == len(data["inputs"])
    assert explorer.locator(f"{SELECTOR} .ae-ic-count").text_content() == f"N = {len(data['inputs'])} examples"
    for key, text in (("tau", "0.01"), ("eta", "1.00")):
        assert explorer.locator(f"{SELECTOR} output[for$='-{key}']").text_content() == text
    assert explorer.external_requests == []


@pytest.mark.parametrize("prompt", [SPREAD_5, NEAR_LINE], ids=["5 examples", "10 examples near a line"])
@pytest.mark.parametrize(("tau", "eta"), [(0.05, 0.02), (0.2, 1.0), (1.0, 2.0)])
def test_the_curves_equal_the_packages_to_1e_12(explorer, prompt, tau, eta):
    """Where the derived bounds are below 1e-12, the curves agree to 1e-12: temperatures from 0.05 up (the
    softmax head's bound grows as 1 / tau), and prompts of few examples that a line fits well (least squares'
    bound grows with N, with the condition number of [p, 1] and with the residual: on the starting prompt, 16
    noisy examples of a sine, it is 1.1e-12; at 64 examples a few times 1e-12; see the test below)."""
    set_state(explorer, tau=tau, eta=eta, inputs=prompt[0], labels=prompt[1])
    _, gaps, bounds = check(explorer)
    for name, gap in gaps.items():
        assert np.max(bounds[name]) <= 1e-12, f"the derived bound of {name} is itself below 1e-12 here"
        assert gap.max() <= 1e-12


@pytest.mark.parametrize(("inputs", "labels", "tau"), [
    (*SPREAD_64, 1e-3), (*SPREAD_64, 0.05), (*SPREAD_64, 1.0), (*SPREAD_5, 0.01), (*START, 1e-3),
    ([0.4], [0.7], 0.01),  # one example: least squares' shortest weights
    ([0.3, 0.3, 0.3], [0.2, -0.5, 1.1], 0.002),  # all inputs equal: the same
    ([0.0, 1.0], [-1.5, 1.5], 1.0),
])
def test_the_curves_agree_with_the_package_within_their_bounds(explorer, inputs, labels, tau):
    set_state(explorer, tau=tau, inputs=inputs, labels=labels)
    check(explorer)


def test_bad_params_are_refused_naming_the_key(explorer):
    for bad in ("{tau: 0}", "{tau: 2}", "{eta: 0}", "{eta: 2.5}", "{inputs: [0.5, 1.5], labels: [0, 0]}",
                "{labels: [9]}", "{inputs: [], labels: []}", "{inputs: [0.1, 0.2], labels: [0.3]}",
                "{inputs: Array(65).fill(0.5), labels: Array(65).fill(0)}"):
        message = explorer.evaluate(
            f"(() => {{ try {{ {API}.setParams({bad}); return null; }} catch (e) {{ return e.message; }} }})()")
        assert message and message.split()[0] in bad, (bad, message)


def test_the_keyboard_selects_moves_and_removes_examples(explorer):
    before = explorer.evaluate(f"{API}.params")
    first = explorer.locator(f"{SELECTOR} .ae-ic-point").first
    assert first.get_attribute("role") == "slider"
    assert first.get_attribute("aria-label") == f"Example 1 of {len(before['inputs'])}"
    first.focus()
    for key in ("ArrowRight", "ArrowRight", "ArrowUp", "Shift+ArrowDown"):
        first.press(key)
    explorer.wait_for_timeout(50)
    p = explorer.evaluate(f"{API}.params")
    assert p["inputs"][0] == pytest.approx(before["inputs"][0] + 0.02, abs=1e-12)
    assert p["labels"][0] == pytest.approx(before["labels"][0] + 0.05 - 0.5, abs=1e-12)
    assert first.get_attribute("aria-valuetext") == f"input p = {p['inputs'][0]:.2f}, label s = {p['labels'][0]:.2f}"
    check(explorer)
    first.press("Delete")
    explorer.wait_for_timeout(50)
    after = explorer.evaluate(f"{API}.params")
    assert after["inputs"] == p["inputs"][1:] and after["labels"] == p["labels"][1:]
    assert explorer.evaluate("document.activeElement.getAttribute('aria-label')") == \
        f"Example 1 of {len(after['inputs'])}", "the focus stays on the examples"
    last = explorer.locator(f"{SELECTOR} .ae-ic-point").last
    last.focus()
    last.press("Backspace")
    n = len(after["inputs"]) - 1
    assert explorer.evaluate(f"{API}.params.inputs") == after["inputs"][:-1]
    assert explorer.evaluate("document.activeElement.getAttribute('aria-label')") == f"Example {n} of {n}", \
        "removing the last example, the focus goes to the one before"
    check(explorer)


def handle_centre(page, k):
    box = page.locator(f"{SELECTOR} .ae-ic-point").nth(k).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_the_mouse_drags_an_example_and_a_click_adds_one(explorer):
    before = explorer.evaluate(f"{API}.params")
    x, y = handle_centre(explorer, 2)
    explorer.mouse.move(x, y)
    explorer.mouse.down()
    explorer.mouse.move(x + 40, y - 30, steps=5)
    explorer.mouse.up()
    explorer.wait_for_timeout(50)
    p = explorer.evaluate(f"{API}.params")
    assert p["inputs"][2] > before["inputs"][2] and p["labels"][2] > before["labels"][2]
    assert p["inputs"][:2] == before["inputs"][:2] and p["inputs"][3:] == before["inputs"][3:]
    # the handle followed the pointer: it is where the mouse let go of it
    assert handle_centre(explorer, 2) == pytest.approx((x + 40, y - 30), abs=1.5)
    check(explorer)
    canvas = explorer.locator(f"{SELECTOR} canvas").bounding_box()
    explorer.mouse.click(canvas["x"] + canvas["width"] * 0.5, canvas["y"] + canvas["height"] * 0.12)
    explorer.wait_for_timeout(50)
    added = explorer.evaluate(f"{API}.params")
    assert len(added["inputs"]) == len(before["inputs"]) + 1
    assert 0.4 < added["inputs"][-1] < 0.6 and added["labels"][-1] > 1
    check(explorer)


def test_the_buttons_add_remove_and_restore(explorer):
    data = icd.in_context_explorer_data()
    n = len(data["inputs"])
    explorer.locator(f"{SELECTOR} button", has_text="Add an example").click()
    p = explorer.evaluate(f"{API}.params")
    assert len(p["inputs"]) == n + 1 and p["labels"][-1] == 0
    gaps = np.diff(np.sort([0.0, *data["inputs"], 1.0]))
    assert p["inputs"][-1] not in data["inputs"] and np.min(np.abs(np.array(data["inputs"]) - p["inputs"][-1])) \
        == pytest.approx(gaps.max() / 2), "in the middle of the widest gap"
    assert explorer.evaluate("document.activeElement.getAttribute('aria-label')") == f"Example {n + 1} of {n + 1}"
    explorer.locator(f"{SELECTOR} button", has_text="Remove the selected example").click()
    assert explorer.evaluate(f"{API}.params")["inputs"] == data["inputs"]
    set_state(explorer, inputs=[0.5], labels=[0.0])
    explorer.locator(f"{SELECTOR} .ae-ic-point").first.focus()
    assert explorer.locator(f"{SELECTOR} button", has_text="Remove the selected example").is_disabled(), \
        "a prompt keeps at least one example"
    set_state(explorer, inputs=SPREAD_64[0], labels=SPREAD_64[1])
    assert explorer.locator(f"{SELECTOR} button", has_text="Add an example").is_disabled()
    explorer.locator(f"{SELECTOR} button", has_text="Restore the starting prompt").click()
    p = explorer.evaluate(f"{API}.params")
    assert p["inputs"] == data["inputs"] and p["labels"] == data["labels"]
    check(explorer)


@pytest.mark.parametrize(("key", "moved", "still"), [("eta", "oneStep", ("softmax", "leastSquares")),
                                                      ("tau", "softmax", ("oneStep", "leastSquares"))])
def test_each_slider_moves_only_its_learner(explorer, key, moved, still):
    """The chapter: "The slider for eta moves only the step's line, and the one for tau only the softmax head's
    curve." Moved by the keyboard, as a reader would."""
    before = series(explorer)
    slider = explorer.locator(f"{SELECTOR} input[id$='-{key}']")
    slider.focus()
    for _ in range(5):
        slider.press("ArrowRight")
    start = icd.ETA if key == "eta" else icd.TEMPERATURE
    assert explorer.evaluate(f"{API}.params.{key}") > start
    explorer.evaluate(f"{API}.redraw()")  # the redraw of the last key, now rather than at the next frame
    after, _, _ = check(explorer)
    assert np.abs(after[moved] - before[moved]).max() > 1e-3
    for name in still:
        np.testing.assert_array_equal(after[name], before[name])


def test_an_example_moves_the_softmax_curve_near_it_and_both_lines(explorer):
    """The chapter: dragging an example changes the softmax head's curve most near it, over a width that shrinks
    with tau, while both lines move with every example."""
    inputs, labels = SPREAD_5
    widths = []
    for tau in (0.002, 0.02):
        set_state(explorer, tau=tau, inputs=inputs, labels=labels)
        before = series(explorer)
        set_state(explorer, labels=[*labels[:2], labels[2] + 0.3, *labels[3:]])
        after, _, _ = check(explorer)
        change = np.abs(after["softmax"] - before["softmax"])
        queries = after["queries"]
        assert abs(queries[np.argmax(change)] - inputs[2]) < 0.05, "most near the example moved"
        widths.append(np.ptp(queries[change >= change.max() / 2]))
        for name in ("oneStep", "leastSquares"):
            assert np.abs(after[name] - before[name]).min() > 0, f"{name} moves at every query"
    assert widths[0] < widths[1], f"the width shrinks with tau: {widths}"


def test_works_by_touch_on_a_phone(browser, site_url):
    """On a 390-px phone: an example dragged by a finger (touch events, which Chromium turns into pointer
    events), a slider tapped, no horizontal overflow, handles large enough for a finger."""
    page = open_page(browser, {site_url}, **PHONE)
    try:
        show_explorer(page, f"{site_url}/{PAGE}", SELECTOR, DRAWN)
        page.locator(f"{SELECTOR} .ae-ic-point").nth(4).scroll_into_view_if_needed()
        before = page.evaluate(f"{API}.params")
        x, y = handle_centre(page, 4)
        client = page.context.new_cdp_session(page)
        client.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for k in range(1, 6):
            point = {"x": x - 6 * k, "y": y + 5 * k}
            client.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        client.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_timeout(100)
        p = page.evaluate(f"{API}.params")
        assert p["inputs"][4] < before["inputs"][4] and p["labels"][4] < before["labels"][4]
        assert handle_centre(page, 4) == pytest.approx((x - 30, y + 25), abs=1.5)
        slider = page.locator(f"{SELECTOR} input[id$='-eta']")
        box = slider.bounding_box()
        slider.tap(position={"x": 0.2 * box["width"], "y": box["height"] / 2})
        page.wait_for_timeout(100)
        assert page.evaluate(f"{API}.params.eta") < icd.ETA
        check(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        root = page.locator(SELECTOR).bounding_box()
        assert root["x"] >= 0 and root["x"] + root["width"] <= 390
        handle = page.locator(f"{SELECTOR} .ae-ic-point").first.bounding_box()
        assert min(handle["width"], handle["height"]) >= 40, "a finger's target, about 10 mm"
        page.locator(SELECTOR).screenshot(path="/tmp/in-context-explorer-390.png")
        assert page.external_requests == []
    finally:
        page.context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_screenshots_on_a_desktop(browser, site_url, theme):
    page = open_page(browser, {site_url}, viewport={"width": 1440, "height": 900})
    try:
        show_explorer(page, f"{site_url}/{PAGE}", SELECTOR, DRAWN)
        page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        page.wait_for_timeout(150)
        page.locator(SELECTOR).screenshot(path=f"/tmp/in-context-explorer-1440-{theme}.png")
        assert page.external_requests == []
    finally:
        page.context.close()
