"""The induction circuit's explorer of chapter 12 ("Heads that work together"), in headless Chromium.

The explorer runs the hand-built circuit in JavaScript (``runCircuit`` in
``attention_explorer.js``); these tests check it against the package
(:func:`selfattention.interactive.circuit_data.circuit_run`) through the API
on its element, drive its slider, text field and switch by keyboard and
touch, and check that bad input is refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from tolerances import rounding, softmax_rtol

from selfattention import induction
from selfattention.interactive import circuit_data
from tools.chromium import open_page, show_explorer

SELECTOR = "[data-attention-explorer].ae-kind-induction"
API = f"document.querySelector('{SELECTOR}').attentionExplorer"
PAGE = "book/heads-together.html"
DRAWN = f"!!document.querySelector('{SELECTOR} .ae-circuit-predicted span')"


def gaps(n_rows, margin):
    """How far the explorer's scaled scores can be from the package's, layer 1 and layer 2.

    Layer 1: each of ``q_i``'s and ``k_j``'s entries rounds at most 4 times on
    sizes up to 1 (centred positions, ``|p| <= 1/2``, ``|delta| <= 1``), their
    dot product 6 more on a sum up to 3 (:func:`tolerances.rounding`), and the
    division by ``tau = delta**2 / margin`` multiplies that by
    ``margin (N - 1)**2`` (and rounds once on the score). Layer 2 reads the
    first layer's output, sums of weights: each off by at most
    ``softmax_rtol(N, gap_1)`` of the row's total, 1, times ``margin``.
    """
    scale = margin * (n_rows - 1) ** 2
    gap_1 = rounding(14, 3.0) * scale + rounding(2, 3.0 * scale)
    off_1 = softmax_rtol(n_rows, gap_1) + rounding(n_rows)  # a sum of weights, each within rtol, summing to 1
    gap_2 = (off_1 + rounding(2)) * margin + rounding(2, margin)
    return gap_1, gap_2


def assert_matches_package(page):
    p = page.evaluate(f"{API}.params")
    got = page.evaluate(f"{API}.series()")
    run = circuit_data.circuit_run(p["text"], p["margin"], knocked_out=p["knocked"])
    n_rows = len(p["text"]) + 1
    gap_1, gap_2 = gaps(n_rows, p["margin"])
    for k, gap in enumerate((gap_1, gap_2)):
        np.testing.assert_allclose(np.array(got["weights"][k]), run.weights[k],
                                   rtol=softmax_rtol(n_rows, gap), atol=1e-300)
    off_2 = softmax_rtol(n_rows, gap_2) + rounding(n_rows)
    np.testing.assert_allclose(np.array(got["scores"]), run.scores, rtol=0, atol=off_2)
    # The predicted letter wherever the package's best score leads the next by more than both can be off.
    top = np.sort(run.scores, axis=1)
    clear = top[:, -1] - top[:, -2] > 2 * off_2
    assert np.array_equal(np.array(got["predicted"])[clear], run.predicted[clear])
    return got, run


@pytest.fixture
def circuit(page, site_url):
    return show_explorer(page, f"{site_url}/{PAGE}", SELECTOR, DRAWN)


def test_starts_at_the_chapters_example_and_margin(circuit):
    p = circuit.evaluate(f"{API}.params")
    assert p == {"margin": induction.MARGIN, "text": circuit_data.start_text(), "knocked": False}
    _, run = assert_matches_package(circuit)
    assert circuit.locator(f"{SELECTOR} .ae-circuit-predicted").text_content() == "".join(
        circuit_data.tokens.LETTERS[v] for v in run.predicted)
    assert circuit.locator(f"{SELECTOR}.ae-live .ae-stage canvas").count() == 2
    assert circuit.external_requests == []


@pytest.mark.parametrize(("text", "margin", "knocked"), [
    ("tajeshtajesh", 8.0, True),
    ("abcabcabc", 0.5, False),
    ("xbqxcrx", 16.0, False),
    ("a", 4.0, False),
    ("qwertyuiopasdfghjklzxcvbnmqwertyuiopasdfghjklzxcvbnmqwertyuiopas", 8.0, False),  # 64 letters
    ("qwertyuiopasdfghjklzxcvbnmqwertyuiopasdfghjklzxcvbnmqwertyuiopas", 16.0, True),
])
def test_agrees_with_the_package(circuit, text, margin, knocked):
    circuit.evaluate(f"{API}.setParams({{text: '{text}', margin: {margin}, knocked: {str(knocked).lower()}}})")
    got, _ = assert_matches_package(circuit)
    assert got["text"] == text


def test_the_repeat_is_predicted_and_the_knock_out_breaks_it(circuit):
    text = "qwertyuiopqwertyuiop"
    circuit.evaluate(f"{API}.setParams({{text: '{text}'}})")
    both = circuit.evaluate(f"{API}.series({{weights: false}})")["predicted"]
    circuit.evaluate(f"{API}.setParams({{knocked: true}})")
    alone = circuit.evaluate(f"{API}.series({{weights: false}})")["predicted"]
    repeat = np.arange(11, 20)  # rows 11..19 predict letters 12..20 (row r predicts token r + 1)
    want = np.array([circuit_data.tokens.LETTERS.index(c) for c in text])[repeat]
    assert np.array_equal(np.array(both)[repeat], want)
    assert np.mean(np.array(alone)[repeat] == want) < 0.5


@pytest.mark.parametrize("params", ["{text: ''}", "{text: 'ab1'}", "{text: 'Ab'}", "{text: 'a'.repeat(65)}",
                                    "{margin: 0}", "{margin: 17}", "{knocked: 1}"])
def test_bad_params_are_refused(circuit, params):
    before = circuit.evaluate(f"{API}.params")
    message = circuit.evaluate(f"(() => {{ try {{ {API}.setParams({params}); return null; }} "
                               "catch (e) { return e.name + ': ' + e.message; } })()")
    assert message is not None and message.startswith("RangeError")
    name = params.strip("{}").split(":")[0]
    assert name in message
    assert circuit.evaluate(f"{API}.params") == before


def test_slider_text_and_switch_work_by_keyboard(circuit):
    slider = circuit.locator(f"{SELECTOR} input[id$='-margin']")
    slider.focus()
    circuit.keyboard.press("ArrowRight")
    circuit.wait_for_timeout(100)
    assert circuit.evaluate(f"{API}.params")["margin"] == induction.MARGIN + circuit_data.MARGIN_STEP
    field = circuit.locator(f"{SELECTOR} input[id$='-text']")
    field.fill("")
    field.press_sequentially("abcABC")  # capitals are read as small letters
    circuit.wait_for_timeout(100)
    assert circuit.evaluate(f"{API}.params")["text"] == "abcabc"
    field.press_sequentially("7")
    circuit.wait_for_timeout(100)
    assert circuit.evaluate(f"{API}.params")["text"] == "abcabc"  # refused, and said so
    assert '"7"' in circuit.locator(f"{SELECTOR} .ae-circuit-error").text_content()
    switch = circuit.locator(f"{SELECTOR} input[id$='-knock']")
    switch.focus()
    circuit.keyboard.press("Space")
    circuit.wait_for_timeout(100)
    assert circuit.evaluate(f"{API}.params")["knocked"] is True
    assert_matches_package(circuit)


def test_works_by_touch_on_a_phone(browser, site_url):
    page = open_page(browser, {site_url}, viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        show_explorer(page, f"{site_url}/{PAGE}", SELECTOR, DRAWN)
        switch = page.locator(f"{SELECTOR} input[id$='-knock']")
        switch.tap()
        slider = page.locator(f"{SELECTOR} input[id$='-margin']")
        box = slider.bounding_box()
        slider.tap(position={"x": 0.9 * box["width"], "y": box["height"] / 2})
        page.wait_for_timeout(100)
        p = page.evaluate(f"{API}.params")
        assert p["knocked"] is True and p["margin"] > induction.MARGIN
        assert_matches_package(page)
        canvases = page.locator(f"{SELECTOR} canvas")
        assert canvases.count() == 2
        for k in range(2):
            assert canvases.nth(k).bounding_box()["width"] > 120  # two squares side by side on a phone
        page.screenshot(path="/tmp/circuit-explorer-phone.png")
        assert page.external_requests == []
    finally:
        page.context.close()


def test_redraws_a_64_token_sequence(circuit):
    circuit.evaluate(f"{API}.setParams({{text: 'ab'.repeat(32)}})")
    times = [circuit.evaluate(f"{API}.redraw()") for _ in range(5)]
    assert all(t >= 0 for t in times)  # the budget (16 ms) is measured in make bench, not here
    circuit.set_viewport_size({"width": 1440, "height": 900})
    circuit.locator(SELECTOR).scroll_into_view_if_needed()
    circuit.screenshot(path="/tmp/circuit-explorer-desktop.png")


def letters_of(page, selector):
    return page.evaluate(f"[...document.querySelectorAll('{SELECTOR} {selector} span')].map((s) => s.textContent)")


def test_axes_name_every_row_and_column_and_the_predictions_line_up(circuit):
    p = circuit.evaluate(f"{API}.params")
    rows = [circuit_data.tokens.START, *p["text"]]
    for axis in (".ae-axis-top", ".ae-axis-left"):  # both layers' maps, each axis
        assert letters_of(circuit, axis) == rows * 2
    # Each predicted letter stands under the letter of its row (same x), and the two lines scroll together.
    got = circuit.evaluate(f"""(() => {{
        const xs = (s) => [...document.querySelectorAll('{SELECTOR} ' + s + ' span')]
            .map((e) => Math.round(e.getBoundingClientRect().left * 10) / 10);
        return [xs('.ae-circuit-rows'), xs('.ae-circuit-predicted')]; }})()""")
    assert len(got[0]) == len(rows) and got[0] == got[1]
    assert letters_of(circuit, ".ae-circuit-rows") == rows


def test_a_long_sequence_drops_the_axis_letters_and_the_readout_names_a_cell(circuit):
    text = "abcdefghijklmnopqrstuvwxyz" * 2
    circuit.evaluate(f"{API}.setParams({{text: '{text}'}})")
    assert letters_of(circuit, ".ae-axis-top") == []  # 53 cells of a few px: no room for letters
    canvas = circuit.locator(f"{SELECTOR} canvas").nth(1)
    box = canvas.bounding_box()
    n_rows = len(text) + 1
    i, j = 30, 5  # row 30 (d) -> key 5 (e), cell centres
    canvas.hover(position={"x": (j + 0.5) * box["width"] / n_rows, "y": (i + 0.5) * box["height"] / n_rows})
    readout = circuit.locator(f"{SELECTOR} .ae-circuit-readout").text_content()
    run = circuit_data.circuit_run(text, induction.MARGIN)
    rows = circuit_data.tokens.START + text
    assert readout == f"Layer 2: row {i} ({rows[i]}) → key {j} ({rows[j]}): {run.weights[1][i, j]:.2f}"


def test_a_knocked_out_layer_and_refused_text_are_shown_as_such(circuit):
    first = circuit.locator(f"{SELECTOR} .ae-circuit-layer").nth(0)
    assert "knocked out" not in first.text_content()
    circuit.evaluate(f"{API}.setParams({{knocked: true}})")
    assert "ae-discarded" in first.get_attribute("class") and "knocked out" in first.text_content()
    assert float(first.locator("canvas").evaluate("(c) => getComputedStyle(c).opacity")) < 0.5
    circuit.evaluate(f"{API}.setParams({{knocked: false}})")
    assert "ae-discarded" not in first.get_attribute("class")
    field = circuit.locator(f"{SELECTOR} input[id$='-text']")
    before = circuit.evaluate(f"{API}.params")["text"]
    field.fill("ab7")
    main = circuit.locator(f"{SELECTOR} .ae-main")
    assert "ae-stale" in main.get_attribute("class")
    assert f'last valid sequence, "{before}"' in circuit.locator(f"{SELECTOR} .ae-stale-note").text_content()
    field.fill("abab")
    assert "ae-stale" not in main.get_attribute("class")
    assert circuit.locator(f"{SELECTOR} .ae-stale-note").is_hidden()
