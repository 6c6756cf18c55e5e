"""Chapters 8 ("Learning the head") and 9 ("Attention that looks at content").

Every behaviour the two chapters claim is asserted here against the package,
with the chapters' own arguments (not by running the chapters); the source
checks hold the chapters to the book's conventions; the slow tests execute
each chapter alone and compare a few glued numbers with the package.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import selfattention as sa
from selfattention import bilateral_symbolic, defaults, learning
from selfattention.bilateral import bilateral_head
from selfattention.metrics import rmse
from selfattention.studies import content_attention as ca
from selfattention.studies import learned_head as lh

BOOK = Path(__file__).resolve().parents[2] / "book"
PREFIX = {"learning": "learning", "content-attention": "content"}
#: The chapters' training defaults.
COMMON = dict(steps=2000, learning_rate=0.1, init_scale=0.1, rng=defaults.SEED)


# --- chapter 8: the claims ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sine():
    positions, clean, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    return positions, clean, noisy, lh.engineered(positions, noisy, defaults.SIGMA)


@pytest.fixture(scope="module")
def band(sine):
    positions, _, noisy, _ = sine
    return lh.learn(positions, noisy, checkpoints=(0, 50, 200, 2000), **COMMON)


def test_plain_gradient_descent_needs_the_right_step_size(sine, band):
    positions, _, noisy, reference = sine
    slow, good, saturated = lh.gradient_descent_runs(positions, noisy, [1.0, 10.0, 100.0], steps=2000,
                                                     rng=defaults.SEED)
    assert slow.loss > reference.loo_loss > good.loss > band.loss
    assert saturated.loss > 0.5
    assert np.abs(saturated.W_Q @ saturated.W_K.T).max() > 100, "the scores reach hundreds"
    _, weights = learning.learned_head(saturated.W_Q, saturated.W_K, learning.token_features(positions), noisy,
                                       leave_one_out=True)
    keys, share = lh.favourite_keys(weights)
    assert np.all(keys[:-1] == defaults.N - 1), "every query but the last favours the last sample"
    assert np.median(share) > 0.99
    _, _, dW_K = learning.loo_loss_and_grad(saturated.W_Q, saturated.W_K, learning.token_features(positions), noisy)
    _, _, start_grad = learning.loo_loss_and_grad(*band.checkpoints[200], learning.token_features(positions), noisy)
    assert np.abs(dW_K).max() < 0.01 * np.abs(start_grad).max(), "almost no gradient"


def test_centring_the_positions_decorrelates_them_and_speeds_training(sine, band):
    positions, _, noisy, reference = sine
    assert np.corrcoef(positions, positions**2)[0, 1] > 0.95
    centred = 2 * positions - 1
    assert abs(np.corrcoef(centred, centred**2)[0, 1]) < 1e-12
    raw = lh.learn(positions, noisy, centred=False, **COMMON)
    centred_steps, raw_steps = (int(np.argmax(fit.losses <= reference.loo_loss)) for fit in (band, raw))
    assert 0 < centred_steps < raw_steps / 2


def test_the_leaking_head_copies_its_samples(sine):
    positions, clean, noisy, reference = sine
    leak = lh.learn(positions, noisy, sees_value=True, **COMMON)
    assert leak.loss < 0.05 * reference.loo_loss and leak.loss < defaults.SIGMA**2 / 10
    W_QK = leak.W_Q @ leak.W_K.T  # rows and columns [s, pt, pt^2, 1]
    assert np.argmax(np.abs(W_QK)) == 0 and W_QK[0, 0] > 0, "the largest entry pairs s_i with s_j"
    prediction, _ = learning.learned_head(leak.W_Q, leak.W_K, lh.features_of(leak, positions, noisy), noisy,
                                          leave_one_out=True)
    assert rmse(prediction, noisy) < 0.25 * defaults.SIGMA
    assert rmse(prediction, clean) > 0.95 * rmse(noisy, clean), "no better than the samples"
    _, weights = learning.learned_head(leak.W_Q, leak.W_K, lh.features_of(leak, positions, noisy), noisy,
                                       leave_one_out=True)
    assert ca.mean_distance(weights, positions) > 0.15, "it attends to keys far away"
    high = noisy > np.median(noisy)
    assert np.mean((weights @ noisy)[high]) > np.mean(noisy[high]) - 0.1, "high queries attend to high keys"


def test_an_honest_prediction_cannot_beat_the_noise_variance_on_average():
    """E[(s_i - g)^2] = sigma^2 + (f_i - g)^2 when g does not depend on the noise z_i."""
    rng = np.random.default_rng(0)
    f, g, sigma = 0.3, 0.1, 0.3
    s = f + sigma * rng.standard_normal(400_000)
    assert np.mean((s - g) ** 2) == pytest.approx(sigma**2 + (f - g) ** 2, rel=0.01)


def test_the_band_forms_from_uniform_attention_and_beats_the_engineered_heads(sine, band):
    positions, _, noisy, reference = sine
    weights = lh.checkpoint_weights(band, positions, noisy)
    off = ~np.eye(defaults.N, dtype=bool)
    assert np.abs(weights[0] - 1 / (defaults.N - 1))[off].max() < 1e-3
    reach = [ca.mean_distance(weights[t], positions) for t in sorted(weights)]
    assert all(a > b for a, b in pairwise(reach)), "the band narrows step after step"
    assert band.losses[0] > 5 * band.loss
    assert band.loss < reference.loo_loss


@pytest.mark.parametrize("seed", [defaults.SEED, 1, 2, 3, 4, 5])
def test_the_learned_loo_loss_is_no_worse_than_the_best_engineered_head(seed):
    positions, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=seed)
    reference = lh.engineered(positions, noisy, defaults.SIGMA)
    assert lh.learn(positions, noisy, **COMMON).loss <= (1 + lh.LOSS_TOLERANCE) * reference.loo_loss


def test_what_the_band_learned(sine, band):
    positions, clean, noisy, reference = sine
    X = learning.token_features(positions)
    tau, centres = lh.row_gaussians(band.W_Q, band.W_K, positions)
    assert np.all(tau > 0), "every row is a Gaussian bump"
    middle = defaults.N // 2
    assert reference.loo_temperature < tau[middle] < reference.best_temperature
    centred = lh.centred_scores(band.W_Q, band.W_K, X)
    engineered = -((positions - positions[middle]) ** 2) / tau[middle]
    in_band = np.abs(positions - positions[middle]) <= 3 * np.sqrt(tau[middle] / 2)
    assert np.abs(centred[middle] - engineered)[in_band].max() < 0.25
    assert np.argmax(tau) == 0 and np.argmin(tau) == defaults.N - 1 and np.all(np.diff(tau) < 0)
    assert centres[0] < 0 and centres[-1] > 1
    output, _ = learning.learned_head(band.W_Q, band.W_K, X, noisy)
    assert rmse(output, clean) > 1.1 * rmse(sa.gaussian_head(noisy, positions, reference.loo_temperature)[0], clean)


def test_other_draws_drift_other_ways(sine):
    positions = sine[0]
    profiles = [lh.row_gaussians(*(lambda f: (f.W_Q, f.W_K))(lh.learn(positions, noisy, **COMMON)), positions)[0]
                for noisy in (sa.noisy_sine(defaults.N, defaults.SIGMA, rng=seed)[2] for seed in (1, 2, 3))]
    assert any(p[-1] > p[0] for p in profiles), "not every draw narrows the band to the right"


def test_the_scores_shift_invariance_and_the_product(sine, band):
    positions, _, noisy, _ = sine
    X = learning.token_features(positions)
    scores = (X @ band.W_Q) @ (X @ band.W_K).T
    G = np.random.default_rng(defaults.SEED).standard_normal((3, 3))
    W_Q_G, W_K_G = lh.reparametrise(band.W_Q, band.W_K, G)
    assert lh.relative_gap(W_Q_G, band.W_Q) > 0.5
    assert np.abs((X @ W_Q_G) @ (X @ W_K_G).T - scores).max() < 1e-12 * np.abs(scores).max()
    second = lh.learn(positions, noisy, **{**COMMON, "rng": defaults.SEED + 1})
    assert lh.relative_gap(second.W_Q, band.W_Q) > 0.5
    assert lh.relative_gap(second.W_Q @ second.W_K.T, band.W_Q @ band.W_K.T) < 0.05
    np.testing.assert_allclose(band.W_K[-1], band.checkpoints[0][1][-1], atol=1e-6)
    assert np.abs((band.W_Q @ band.W_K.T)[:, -1]).max() < 0.05 * np.abs(band.W_Q @ band.W_K.T).max()


# --- chapter 9: the claims ---------------------------------------------------------------


@pytest.fixture(scope="module")
def step():
    book = ca.step_signal(defaults.N, defaults.SIGMA, jump=1.5, at=0.5, rng=defaults.SEED)
    train = ca.step_signals(20, defaults.N, defaults.SIGMA, jump=1.5, low=0.2, high=0.8, rng=defaults.SEED)
    test = ca.step_signals(50, defaults.N, defaults.SIGMA, jump=1.5, low=0.2, high=0.8, rng=defaults.SEED + 1)
    tau_gauss, (tau_p, tau_s) = ca.best_temperatures(train, np.logspace(-3.5, -1.5, 9), np.logspace(-1, 1.5, 11))
    return book, train, test, tau_gauss, tau_p, tau_s


@pytest.fixture(scope="module")
def heads(step):
    _, train, _, *_ = step
    position = ca.train_position_head(train, steps=600, rng=defaults.SEED)
    content = ca.train_content_head(train, start=position, steps=300, rng=defaults.SEED)
    return position, content


def test_the_gaussian_head_blurs_the_jump_and_the_jump_narrows_its_band(step):
    book = step[0]
    positions, noisy = book.positions, book.noisy[0]
    tau, _ = sa.choose_temperature(noisy, positions)
    tau_sine, _ = sa.choose_temperature(sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)[2], positions)
    assert tau < tau_sine
    errors = ca.region_errors(sa.gaussian_head(noisy, positions, tau)[0][None], book)
    assert errors["near"] > 2 * errors["away"]


def test_the_bilateral_score_is_derived_exactly():
    assert bilateral_symbolic.is_bilateral_score()


def test_leave_one_out_cannot_choose_the_signal_temperature(step):
    """The masked bilateral head "predicts" a sample better the smaller tau_s: the leak of chapter 8."""
    book = step[0]
    p, s = book.positions, book.noisy[0]
    losses = []
    for tau_s in (10.0, 1.0, 0.1, 0.01, 0.001):
        e = -((p[:, None] - p) ** 2) / step[4] - (s[:, None] - s) ** 2 / tau_s
        np.fill_diagonal(e, -np.inf)
        a = np.exp(e - e.max(axis=1, keepdims=True))
        losses.append(np.mean((a @ s / a.sum(axis=1) - s) ** 2))
    assert all(a > b for a, b in pairwise(losses)) and losses[-1] < defaults.SIGMA**2 / 2


def test_the_second_draw_adds_sigma_squared_to_the_expected_error():
    rng = np.random.default_rng(1)
    f, output, sigma = 1.2, 0.9, 0.3
    second = f + sigma * rng.standard_normal(400_000)
    assert np.mean((output - second) ** 2) == pytest.approx((output - f) ** 2 + sigma**2, rel=0.01)


def test_the_bilateral_head_splits_at_the_jump(step):
    book, _, _, _, tau_p, tau_s = step
    positions, noisy = book.positions, book.noisy[0]
    tau, _ = sa.choose_temperature(noisy, positions)
    gauss_out, gauss_w = sa.gaussian_head(noisy, positions, tau)
    bil_out, bil_w = bilateral_head(noisy, positions, tau_p, tau_s)
    assert ca.weight_across(bil_w, positions, 0.5) < 0.6 * ca.weight_across(gauss_w, positions, 0.5)
    gauss, bil = ca.region_errors(gauss_out[None], book), ca.region_errors(bil_out[None], book)
    assert bil["near"] < 0.7 * gauss["near"] and bil["away"] > gauss["away"]
    assert np.exp(-(1.5**2) / tau_s) > 0.1, "the chosen tau_s does not cut the other side completely"


def test_one_pair_is_not_enough(step, heads):
    _, _, test, *_ = step
    one = ca.step_signal(defaults.N, defaults.SIGMA, jump=1.5, at=0.5, rng=defaults.SEED + 2)
    position = ca.train_position_head(one, rng=defaults.SEED)
    content = ca.train_content_head(one, start=position, rng=defaults.SEED)
    assert content.loss < position.loss
    one_errors = [ca.region_errors(ca.learned_outputs(fit, test, content=c)[0], test)["whole"]
                  for fit, c in ((position, False), (content, True))]
    many_errors = [ca.region_errors(ca.learned_outputs(fit, test, content=c)[0], test)["whole"]
                   for fit, c in zip(heads, (False, True), strict=True)]
    assert one_errors[1] > one_errors[0] > 2 * max(many_errors)


def test_a_random_start_never_forms_a_band(step, heads):
    _, train, test, *_ = step
    random_start = ca.train_content_head(train, steps=300, rng=defaults.SEED)
    out, weights = ca.learned_outputs(random_start, test, content=True)
    _, learned_weights = ca.learned_outputs(heads[1], test, content=True)
    assert ca.mean_distance(weights, test.positions) > 5 * ca.mean_distance(learned_weights, test.positions)
    assert ca.region_errors(out, test)["whole"] > 1.3 * ca.region_errors(
        ca.learned_outputs(heads[1], test, content=True)[0], test)["whole"]


def test_held_out_errors_near_and_away_from_the_jumps(step, heads):
    _, _, test, tau_gauss, tau_p, tau_s = step
    position, content = heads
    errors = {
        "gauss": ca.region_errors(ca.gaussian_outputs(test, tau_gauss), test),
        "position": ca.region_errors(ca.learned_outputs(position, test, content=False)[0], test),
        "bilateral": ca.region_errors(ca.bilateral_outputs(test, tau_p, tau_s), test),
        "content": ca.region_errors(ca.learned_outputs(content, test, content=True)[0], test),
    }
    near = {k: v["near"] for k, v in errors.items()}
    assert near["content"] < near["bilateral"] < min(near["gauss"], near["position"])
    assert min(errors, key=lambda k: errors[k]["away"]) == "position"
    assert errors["gauss"]["away"] > max(errors["bilateral"]["away"], errors["content"]["away"])
    assert abs(errors["content"]["whole"] - errors["bilateral"]["whole"]) < 0.01
    assert content.loss > defaults.SIGMA**2, "the second draw's noise is a floor"
    tau_sine, _ = sa.choose_temperature(sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)[2],
                                        test.positions)
    assert tau_gauss < tau_sine, "the Gaussian head's band is narrow because of the jumps"


def test_the_learned_head_has_the_bilateral_entries(step, heads):
    *_, tau_p, tau_s = step
    read = ca.read_temperatures(heads[1])
    for key, engineered in (("tau_s from s.s", tau_s), ("tau_s from 1.s^2", tau_s),
                            ("tau_p from pt.pt", tau_p), ("tau_p from 1.pt^2", tau_p)):
        assert 1 / 1.5 < read[key] / engineered < 1.5, key
    W_QK = heads[1].W_Q @ heads[1].W_K.T
    assert W_QK[0, 2] > 0 and W_QK[0, 3] > 0, "s_i meets the key's position with positive entries"
    centres = []
    for s_i in (-1.0, 0.0, 2.0):  # a query in the middle (pt = 0) with a low, a middle and a high sample
        x_i = np.array([s_i, s_i**2, 0.0, 0.0, 1.0])
        lam1, lam2 = x_i @ W_QK[:, 2], x_i @ W_QK[:, 3]  # coefficients of pt_j and pt_j^2
        assert lam2 < 0
        centres.append(-lam1 / (2 * lam2))
    assert centres == sorted(centres), "a higher sample moves the band toward larger positions"


def test_sinusoidal_encodings_dot_products_depend_on_the_distance_only():
    p_i, p_j, omega = np.random.default_rng(2).uniform(0, 1, (3, 50))
    lhs = np.sin(omega * p_i) * np.sin(omega * p_j) + np.cos(omega * p_i) * np.cos(omega * p_j)
    np.testing.assert_allclose(lhs, np.cos(omega * (p_i - p_j)), atol=1e-15)


# --- the sources --------------------------------------------------------------------------

FIGURE = re.compile(r"^```\{glue:figure\}\s+(\S+)\n(.*?)^```[ \t]*$", re.S | re.M)
CODE = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
ROLE = re.compile(r"\{glue(?::text|:md)?\}`([^`:]+)(?::[^`]*)?`")


def source(stem):
    return (BOOK / f"{stem}.md").read_text().split("---", 2)[2]


def prose(stem):
    """The text a reader reads: code cells, math, roles and inline code removed; captions kept."""
    text = re.sub(r"^```\{(code-cell|literalinclude)\}.*?^```[ \t]*$", "", source(stem), flags=re.S | re.M)
    text = re.sub(r"^:(alt|name|tags|pyobject|language):.*$", "", text, flags=re.M)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"\$[^$]+\$", "", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    return re.sub(r"`[^`]*`", "", text)


@pytest.mark.parametrize("stem", PREFIX)
def test_figures_are_named_described_captioned_referenced_and_hidden(stem):
    figures = FIGURE.findall(source(stem))
    assert len(figures) >= 3
    cells = CODE.findall(source(stem))
    for name, body in figures:
        assert name.startswith(f"fig-{PREFIX[stem]}-") and f":name: {name}\n" in body
        alt = re.search(r"^:alt: (.+)$", body, re.M)
        assert alt and len(alt.group(1)) > 80 and not re.search(r"\d", alt.group(1)), f"{name}: alt text"
        caption = "\n".join(line for line in body.splitlines() if not line.startswith(":")).strip()
        assert len(caption) > 60, f"{name} needs a caption"
        assert f"{{numref}}`{name}`" in source(stem), f"{name} is never referenced"
        drawing = [c for c in cells if f'glue("{name}", fig, display=False)' in c]
        assert len(drawing) == 1 and drawing[0].startswith(":tags: [hide-input]"), name


@pytest.mark.parametrize("stem", PREFIX)
def test_every_glued_name_is_shown_and_every_shown_name_glued(stem):
    code = "\n".join(CODE.findall(source(stem)))
    exact = set(re.findall(r"""glue\(\s*["']([^"'{]+)["']""", code))
    prefixes = set(re.findall(r"""glue\(\s*f["']([^"'{]+)\{""", code))
    shown = set(ROLE.findall(source(stem))) | {name for name, _ in FIGURE.findall(source(stem))}
    for name in shown:
        assert name in exact or any(name.startswith(p) for p in prefixes), f"{name} is not glued"
    assert exact <= shown, f"glued but never shown: {exact - shown}"


@pytest.mark.parametrize("stem", PREFIX)
def test_no_number_is_typed_into_the_prose(stem):
    text = re.sub(r"\b[Cc]hapter \d\b|Noise2Noise", "", prose(stem))
    assert re.findall(r".{0,30}\d.{0,30}", text) == []


def test_number_rule_can_fail():
    assert re.search(r"\d", re.sub(r"\b[Cc]hapter \d\b", "", "decay rates 0.9 and 0.999 in chapter 8"))


@pytest.mark.parametrize("stem", PREFIX)
def test_chapters_use_no_pyplot_and_no_global_random_state(stem):
    code = "\n".join(CODE.findall(source(stem)))
    assert "pyplot" not in code and "plt." not in code
    assert not re.search(r"np\.random\.(seed|rand|randn|normal|standard_normal|uniform)\(", code)


def test_notation_of_the_book():
    """One symbol, one meaning: no W for the attention matrix, no y for samples, no K_h, no epsilon."""
    for stem in PREFIX:
        math = " ".join(re.findall(r"\$[^$]+\$", source(stem)))
        assert not re.search(r"w_\{?ij|(?<![\w\\])y_i|K_h|\\varepsilon|\\epsilon", math), stem


def test_the_toc_places_both_chapters_after_kernel_regression():
    toc = (BOOK.parent / "_toc.yml").read_text()
    order = [toc.index(f"book/{stem}\n") for stem in ("kernel-regression", "learning", "content-attention",
                                                       "references")]
    assert order == sorted(order)


# --- slow: execute each chapter alone -----------------------------------------------------


def run_chapter(stem):
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient

    nb = read_myst_markdown_notebook((BOOK / f"{stem}.md").read_text())
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(BOOK)}}).execute()
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = next((v for k, v in out["data"].items() if k.endswith("text/plain")), "")
    return glued


@pytest.mark.slow
def test_chapter_8_runs_alone_and_glues_the_packages_numbers(sine, band):
    glued = run_chapter("learning")
    reference = sine[3]
    assert float(glued["learning-loss-ratio"]) == band.loss / reference.loo_loss
    assert float(glued["learning-tau-loo"]) == reference.loo_temperature
    assert float(glued["learning-grad-gap"]) < 1e-6


@pytest.mark.slow
def test_chapter_9_runs_alone_and_glues_the_packages_numbers(step, heads):
    glued = run_chapter("content-attention")
    assert glued["content-identity-holds"] == "True"
    assert float(glued["content-tau-s"]) == step[5]
    assert float(glued["content-train-loss"]) == heads[1].loss
