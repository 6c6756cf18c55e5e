"""The page "What attention costs": the quadratic wall, a key-value cache, random features and a local window.

The tests read what the chapter computed (its variables and glued values)
and check each sentence that describes it; the few that need more call the
package with the chapter's arguments. The times are `make bench`'s, read
from the committed file: no test here asserts a time, only what the text
says of the measured numbers (slopes, ratios, which is larger).
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import sympy as sp
from chapters.book import code_cells
from tolerances import EPS, average_atol, half_spread, square_gap

import selfattention as sa
from selfattention import cost, decoding, defaults, memory, random_features, spectrum, work
from selfattention.figures.cost import plot_decoding
from selfattention.head import gaussian_head_weights
from selfattention.metrics import rmse
from selfattention.positive_features import MARGIN, performer_centres, positive_feature_head, spread_centres
from selfattention.studies import approximate_heads, feature_draws
from selfattention.window import window_head
from tools import ROOT
from tools.measure import peak_bytes

STEM = "attention-cost"


def prose() -> str:
    """The page's text, its runs of white space as one space."""
    return re.sub(r"\s+", " ", (ROOT / "book" / f"{STEM}.md").read_text())


# --- the quadratic wall --------------------------------------------------------------------------


def test_the_listings_gloss_require_work_as_the_packages_work_limit():
    """Both listings call work.require_work; the prose says what it does, as src/selfattention/work.py does."""
    text = prose()
    assert text.count("work.require_work(") == 0, "the listings are included from the package, not typed"
    for stem in ("decoding", "window"):
        assert "work.require_work(" in (ROOT / "src" / "selfattention" / f"{stem}.py").read_text()
    glosses = re.findall(r"refuses? work beyond the package's limit", text)  # the note under each listing
    assert len(glosses) == 2, glosses
    with work.work_limit(10), pytest.raises(ValueError, match="X"):
        decoding.decode_cached(np.ones((5, 4)), *gaussian_head_weights(), 1.0)  # 15 pairs > 10


def test_the_counts_are_the_formulas_with_the_heads_dimensions(chapter):
    ns, glued = chapter.namespace, chapter.glued
    _, W_K, W_V = gaussian_head_weights()
    d_k, d_v = W_K.shape[1], W_V.shape[1]
    assert (d_k, d_v) == (3, 1)
    n = defaults.N
    assert ns["at_book_n"] == cost.Cost(n * n * (d_k + d_v), n * n, 8 * n * n)
    assert glued["cost-book-ops"] == 4 * n * n and glued["cost-book-kib"] == 8 * n * n / 1024
    assert glued["cost-million-tib"] == 8 * 2**40 / 2**40
    counted = np.array([c.multiply_adds for c in ns["counts"]], dtype=float)
    assert cost.loglog_slope(ns["counted_ns"], counted) == pytest.approx(2.0, abs=1e-12), "both grow as N**2"
    assert cost.loglog_slope(ns["counted_ns"], [c.nbytes for c in ns["counts"]]) == pytest.approx(2.0, abs=1e-12)


def test_the_memory_guard_passes_its_largest_n_and_refuses_before_computing(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["cost-guard-n"] == 13377 and glued["cost-limit-gib"] == 4 and glued["cost-budget-bytes"] == 24
    assert glued["cost-guard-n"] == int(np.sqrt(memory.get_limit() / memory.BYTES_PER_ENTRY))
    memory.require_matrix(glued["cost-guard-n"], glued["cost-guard-n"], "n")
    with pytest.raises(ValueError, match="memory limit"):  # "one more is refused"
        memory.require_matrix(glued["cost-guard-n"] + 1, glued["cost-guard-n"] + 1, "n")
    assert "16384 x 16384" in ns["message"] and "memory limit of 4 GiB" in ns["message"]
    big = ns["big"]

    def refuse():
        with pytest.raises(ValueError):
            sa.gaussian_head(big[2], big[0], ns["tau"])

    peak = peak_bytes(refuse)
    assert peak < 2 * 8 * big[0].size * 8, "refused before a score: only the token arrays, no n x n"
    assert glued["cost-weights-n"] == 23170 and 8 * 23170**2 <= memory.get_limit() < 8 * 23171**2


def test_exact_attention_in_blocks_of_keys_with_an_online_softmax_needs_no_n_by_n_matrix(chapter):
    """A running largest score, a running sum of exponentials and a running weighted sum of the values, both
    sums rescaled when the largest score changes, give the exact head, a block of keys at a time (Milakov and
    Gimelshein; Rabe and Staats): only a block of weights is held, N x 16 here, never N x N."""
    ns = chapter.namespace
    p, s, tau = ns["positions"], ns["noisy"], ns["tau"]
    exact, _ = sa.gaussian_head(s, p, tau)
    p = sa.head.centre_positions(p)
    top, total, weighted = np.full(p.size, -np.inf), np.zeros(p.size), np.zeros(p.size)
    largest_block = 0
    for start in range(0, p.size, 16):
        scores = -((p[:, None] - p[None, start:start + 16]) ** 2) / tau  # (N, 16): one block of keys
        largest_block = max(largest_block, scores.size)
        new_top = np.maximum(top, scores.max(axis=1))
        shrink, block = np.exp(top - new_top), np.exp(scores - new_top[:, None])
        total = total * shrink + block.sum(axis=1)
        weighted = weighted * shrink + block @ s[start:start + 16]
        top = new_top
    # sums of N terms in another order: within N EPS of the largest output, relatively, and a bit for the exponents
    np.testing.assert_allclose(weighted / total, exact, rtol=0, atol=8 * p.size * EPS * np.max(np.abs(s)))
    assert largest_block == 16 * p.size < p.size**2
    assert "stored whole" in prose() and "online softmax" in prose()
    assert "a running weighted sum of the values, both sums rescaled whenever the largest score changes" in prose()


def test_the_times_are_read_from_the_committed_bench_file_and_the_chapter_times_nothing(chapter):
    bench = chapter.namespace["bench"]
    read = cost.read_timings(ROOT / "benchmarks" / "attention_cost.json")
    assert set(bench) == set(read)
    for name, entry in read.items():
        if isinstance(entry, dict):
            np.testing.assert_array_equal(bench[name]["seconds"], entry["seconds"])
            np.testing.assert_array_equal(bench[name]["n"], entry["n"])
    code = "\n".join(code_cells(STEM))
    assert not re.search(r"\btime\.|perf_counter|timeit|process_time", code)
    assert bench["machine"].startswith(chapter.glued["cost-machine"]) and chapter.glued["cost-date"] == bench["date"]
    assert chapter.glued["cost-machine"].endswith("cores"), "the processor and its cores"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", bench["date"]) and "cores" in bench["machine"]


def test_the_measured_slope_is_fitted_from_1024_tokens(chapter):
    ns, glued = chapter.namespace, chapter.glued
    exact = ns["bench"]["exact"]
    assert glued["cost-from-n"] == 1024
    large = exact["n"] >= 1024
    assert glued["cost-exact-slope"] == cost.loglog_slope(exact["n"][large], exact["seconds"][large])
    assert glued["cost-exact-largest-n"] == exact["n"][-1] == exact["n"].max()
    assert glued["cost-exact-largest-s"] == exact["seconds"][-1], "the time at that largest N"


def test_the_timing_figures_name_the_machine_and_date(chapter):
    ns = chapter.namespace
    for name in ("fig-cost-wall", "fig-cost-decoding", "fig-cost-times"):
        fig = chapter.glued[name]
        titles = [ax.get_title() for ax in fig.axes] + [fig.get_suptitle()]
        assert any(ns["bench"]["date"] in t and ns["bench"]["machine"].split(",")[0] in t for t in titles), name


# --- decoding with a cache -------------------------------------------------------------------------


def test_an_earlier_query_sees_the_same_keys_so_its_row_does_not_change(chapter):
    ns = chapter.namespace
    X, W_Q, W_K, W_V, tau = ns["X"], ns["W_Q"], ns["W_K"], ns["W_V"], ns["tau"]
    shorter, _ = decoding.decode_recomputed(X[:-1], W_Q, W_K, W_V, tau)
    np.testing.assert_array_equal(ns["again"][:-1], shorter)


def test_the_cache_changes_no_output_and_saves_the_counted_work(chapter):
    ns, glued = chapter.namespace, chapter.glued
    n = ns["X"].shape[0]
    # The two decoders' scores differ by rounding only (tests/unit/test_decoding.py's derivation).
    Q, K = ns["X"] @ ns["W_Q"], ns["X"] @ ns["W_K"]
    gap = 2 * 4 * 8 * EPS * float(np.max(np.abs(Q) @ np.abs(K).T)) / ns["tau"]
    assert glued["cost-decode-gap"] <= average_atol(n, ns["X"] @ ns["W_V"], gap)
    assert glued["cost-decode-again"] == 4 * n * (n + 1) * (2 * n + 1) // 6
    assert glued["cost-decode-kept"] == 4 * n * (n + 1) // 2
    assert glued["cost-decode-ratio"] == pytest.approx((2 * n + 1) / 3)
    assert ns["kept_cost"].nbytes == 8 * n * 4 and ns["again_cost"].nbytes == 8 * n * n
    # "the memory changes by another factor": N / (d_k + d_v), where the work changes (2 N + 1) / 3
    assert glued["cost-decode-memory-ratio"] == n / 4 == 25
    assert glued["cost-decode-memory-ratio"] < glued["cost-decode-ratio"] / 2


def test_both_decoders_read_a_fixed_sequence_and_feed_nothing_back(chapter):
    """Teacher-forced: the outputs are the causal head's on the given X in one pass (an output fed back as a
    later token would change the rows after it), and X is the noisy sine's tokens."""
    ns = chapter.namespace
    X, W_Q, W_K, W_V, tau = ns["X"], ns["W_Q"], ns["W_K"], ns["W_V"], ns["tau"]
    np.testing.assert_array_equal(X, sa.head.positional_features(ns["noisy"], ns["positions"]))
    one_pass, _ = sa.core.attention(X @ W_Q, X @ W_K, X @ W_V, tau, mask=sa.core.causal_mask(X.shape[0]))
    # both decoders sum in other orders (shorter products, one row at a time): rounding, as in the test above
    Q, K = X @ W_Q, X @ W_K
    gap = 2 * 4 * 8 * EPS * float(np.max(np.abs(Q) @ np.abs(K).T)) / tau
    for outputs in (ns["again"], ns["kept"]):
        assert np.max(np.abs(outputs - one_pass)) <= average_atol(X.shape[0], X @ W_V, gap)
    assert "teacher forcing" in prose() and "nothing they compute is fed back" in prose()


def python_calls(call) -> int:
    """The Python and C function calls ``call()`` makes."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return count


def test_every_cached_step_makes_the_same_python_calls_whatever_its_length(chapter):
    """The fixed cost per step the text names: the calls of a step do not grow with i (the arithmetic does)."""
    ns = chapter.namespace
    W_Q, W_K, W_V, tau = ns["W_Q"], ns["W_K"], ns["W_V"], ns["tau"]
    X = ns["X"]
    calls = {n: python_calls(lambda n=n: decoding.decode_cached(X[:n], W_Q, W_K, W_V, tau)) for n in (20, 40, 80)}
    per_step = (calls[80] - calls[40]) / 40
    assert calls[40] - calls[20] == 20 * per_step, "steps 21-40 make as many calls each as steps 41-80"
    assert per_step > 20, "dozens of calls a step"
    # the statement of cause is marked as a reading of the measured slope, not a measurement
    assert "our reading of the measured slope" in prose()


def test_the_measured_speed_up_and_the_slopes_of_the_decoders(chapter):
    ns, glued = chapter.namespace, chapter.glued
    again, kept = ns["recomputed_time"], ns["cached_time"]
    n = int(again["n"][-1])
    assert glued["cost-decode-speed-up"] == again["seconds"][-1] / kept["seconds"][-1] > 1
    assert glued["cost-decode-count-ratio"] == pytest.approx((2 * n + 1) / 3)
    assert glued["cost-decode-speed-up"] < glued["cost-decode-count-ratio"], "far less than the counts promise"
    # "not the 2 of its arithmetic": a fixed cost per step, so about N; recomputing, below its N**3 but steeper.
    assert glued["cost-decode-cached-slope"] < 1.5
    assert glued["cost-decode-cached-slope"] + 0.5 < glued["cost-decode-recomputed-slope"] < 3
    assert 4 * n > 2000, "a step's few thousand multiply-adds (up to 4 N)"


# --- random features -------------------------------------------------------------------------------


def test_sympy_finds_the_cosines_expectation_and_the_variance_two_over_tau(chapter):
    ns = chapter.namespace
    # Bochner's hypotheses, for the head's kernel on the book's positions: 1 at u = 0, no negative eigenvalue
    # (up to the rounding of a symmetric eigensolver, N EPS times the largest)
    p, tau = ns["positions"], ns["tau"]
    kernel = np.exp(-((p[:, None] - p[None, :]) ** 2) / tau)
    eigenvalues = np.linalg.eigvalsh(kernel)
    assert np.all(np.diag(kernel) == 1) and eigenvalues.min() >= -p.size * EPS * eigenvalues.max()
    assert sp.simplify(ns["expectation"] - sp.exp(-spectrum.nu * spectrum.u**2 / 2)) == 0
    assert sp.simplify(ns["variance"] - 2 / spectrum.tau) == 0
    variance = spectrum.cosine_variance()
    u, tau = spectrum.u, spectrum.tau
    expected = sp.Rational(1, 2) + sp.exp(-4 * u**2 / tau) / 2 - sp.exp(-2 * u**2 / tau)
    assert sp.simplify(variance - expected) == 0
    # "0 at u = 0 and rises to 1/2": noisiest on the far keys, where the kernel is near 0
    assert variance.subs(u, 0) == 0
    assert sp.limit(variance, u, sp.oo) == sp.Rational(1, 2)
    assert sp.simplify(variance - (1 - sp.exp(-2 * u**2 / tau)) ** 2 / 2) == 0, "the chapter's form"
    rising = 4 * u / tau * sp.exp(-2 * u**2 / tau) * (1 - sp.exp(-2 * u**2 / tau))  # >= 0 for u >= 0
    assert sp.simplify(sp.diff(variance, u) - rising) == 0
    text = prose()
    assert "cosines are noisiest on the far keys, where they estimate almost nothing" in text
    assert "as noisy on the far keys as anywhere" not in text


def test_the_features_are_the_encoding_over_root_d_and_their_product_the_mean_cosine(chapter):
    p = chapter.namespace["positions"]
    omega = random_features.gaussian_frequencies(5, chapter.namespace["tau"], 1)
    psi = random_features.fourier_features(p, omega)
    np.testing.assert_array_equal(psi, sa.positional.sinusoidal_encoding(p, omega) / np.sqrt(5))
    u = p[:, None] - p[None, :]
    np.testing.assert_allclose(psi @ psi.T, np.mean(np.cos(omega[:, None, None] * u), axis=0), atol=1e-12)


def test_the_two_sums_cost_2_n_d_each_and_each_row_two_dot_products(chapter):
    n, D = 1000, 64
    counted = cost.feature_cost(n, 2 * D)
    assert counted.multiply_adds == 2 * (2 * n * D) + n * 2 * (2 * D)
    assert counted.nbytes == 8 * (n + 2 * D) * 2, "memory grows as N (and D), never N**2"


def test_the_errors_fall_as_the_inverse_root_of_d_for_cosines_and_spread_bumps(chapter):
    ns, glued = chapter.namespace, chapter.glued
    counts = np.array(ns["feature_counts"])
    assert glued["cost-draws"] == 100, "a hundred draws"
    assert (glued["cost-fit-from"], glued["cost-fit-to"]) == (64, 512)
    for method in ("fourier", "spread"):
        assert glued[f"cost-slope-{method}"] == pytest.approx(-0.5, abs=0.1), method
        medians = ns["medians"][method]
        assert medians[counts == 512][0] / medians[counts == 128][0] == pytest.approx(0.5, rel=0.2), \
            "four times the features for half the error"
        # pooled: the medians of all the draws; the spread: ten groups of ten draws, the same fit on each
        fitted = counts >= 64
        assert glued[f"cost-slope-{method}"] == cost.loglog_slope(counts[fitted], medians[fitted])
        groups = [cost.loglog_slope(counts[fitted], np.median(ns["errors"][method][10 * g:10 * g + 10], axis=0)[fitted])
                  for g in range(10)]
        assert (glued[f"cost-slope-{method}-low"], glued[f"cost-slope-{method}-high"]) == (min(groups), max(groups))
        assert min(groups) <= glued[f"cost-slope-{method}"] <= max(groups) < 0
    assert (glued["cost-slope-groups"], glued["cost-slope-group-draws"]) == (10, 10)
    # "barely falls": less than half the D**-1/2 of the others, and far above them at D = 512
    assert -0.25 < glued["cost-slope-performer"] < 0, "the Performer's error barely falls"
    assert glued["cost-error-performer"] > 3 * glued["cost-error-fourier"]
    # the figure's alt text: the Performer's medians fall far less, and from sixteen on lie above both others
    medians, counts = ns["medians"], np.array(ns["feature_counts"])
    above = (medians["performer"] > medians["fourier"]) & (medians["performer"] > medians["spread"])
    assert above[counts >= 16].all()
    assert medians["performer"][0] / medians["performer"][-1] < medians["fourier"][0] / medians["fourier"][-1] / 4
    assert glued["cost-error-spread"] < glued["cost-error-fourier"], "spread bumps below the cosines"
    assert 2 * glued["cost-largest-d"] > defaults.N, "on so few tokens the features save nothing"
    assert glued["cost-error-fourier"] == ns["medians"]["fourier"][-1]


def test_below_64_some_cosine_draws_cross_zero_and_from_64_none(chapter):
    ns, glued = chapter.namespace, chapter.glued
    share = ns["crossing_share"]
    counts = np.array(ns["feature_counts"])
    assert (share[counts < 64] > 0).all() and (share[counts >= 64] == 0).all()
    assert glued["cost-crossing-none-from"] == 64
    assert not ns["errors"]["nonpositive"][:, counts >= 64].any()
    for D in (4, 8, 16, 32):
        assert glued[f"cost-crossing-{D}"] == share[list(counts).index(D)]
    # "rare is not never": a later draw of 64 frequencies crosses, after more tries than the hundred draws
    rare = ns["rare"]
    assert rare["frequencies"].size == 64 and rare["denominators"].min() <= 0
    assert glued["cost-crossing-64-try"] == rare["draw"] + 1 > glued["cost-draws"]
    # the rate: the same draws (the first crossing is the same try), their denominators only
    rate = ns["rate"]
    assert np.flatnonzero(rate["crossed"])[0] == rare["draw"]
    assert glued["cost-rate-draws"] == rate["crossed"].size == 5000
    assert glued["cost-rate-64"] == rate["crossed"].mean() and glued["cost-rate-64-count"] == rate["crossed"].sum()
    # "a hundred draws show one only ... of the time": the chance of at least one crossing in 100 draws
    assert glued["cost-rate-64-in-100"] == 1 - (1 - glued["cost-rate-64"]) ** glued["cost-draws"] < 0.5
    assert glued["cost-rate-64-count"] >= 10, "enough crossings that the rate is more than a guess"


def test_the_rate_counts_what_the_cosine_head_computes():
    """nonpositive_rate's denominators are random_feature_head's, draw by draw, from one generator."""
    p, _, s = sa.noisy_sine(40, 0.3, rng=2)
    found = feature_draws.nonpositive_rate(p, 0.01, 4, 300, rng=5)
    rng = np.random.default_rng(5)
    expected = [(random_features.random_feature_head(s, p, random_features.gaussian_frequencies(4, 0.01, rng))[1]
                 <= 0).any() for _ in range(300)]
    np.testing.assert_array_equal(found["crossed"], expected)
    assert 0 < found["rate"] < 1


def test_the_crossing_draw_and_what_it_does(chapter):
    ns, glued = chapter.namespace, chapter.glued
    crossed = ns["crossed"]
    assert crossed["frequencies"].size == 8 and ns["centres"].size == 8, "eight frequencies, eight centres"
    assert glued["cost-crossed-lowest"] <= 0 < glued["cost-crossed-exact"]
    _, _, noisy = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    assert glued["cost-signal-largest"] == np.max(np.abs(noisy)), "the bound is the noisy signal's, the heads' input"
    assert glued["cost-crossed-worst"] > 10 * glued["cost-signal-largest"], "the ratio of two small numbers"
    assert np.max(np.abs(ns["positive_output"])) <= glued["cost-signal-largest"] + 1e-12, "an average"
    assert glued["cost-crossed-draw"] == crossed["draw"] + 1


def test_the_performers_features_are_bumps_of_width_root_tau_over_two_near_position_zero(chapter):
    ns, glued = chapter.namespace, chapter.glued
    tau = ns["tau"]
    assert ns["difference"] == 0
    # exp(-2 (p - c)**2 / tau) is a Gaussian of standard deviation sqrt(tau / 4) = sqrt(tau) / 2
    p = np.linspace(-1, 1, 200_001)
    bump = np.exp(-2 * p**2 / tau)
    assert np.sqrt(np.sum(p**2 * bump) / np.sum(bump)) == pytest.approx(np.sqrt(tau) / 2, rel=1e-6)
    centres, _ = performer_centres(100_000, tau, 2)
    assert np.std(centres) == pytest.approx(np.sqrt(tau / 8), rel=0.01)
    # The centres are positions, drawn near position 0, the first token (positions run from 0 to 1):
    # the package's Performer head is this independent one on the positions as they are, not centred.
    # (Sums of N positive terms in another order: each off by N EPS at most, relatively; outputs below 2.)
    p, s = ns["positions"], ns["noisy"]
    assert (p[0], p[-1]) == (0.0, 1.0)
    centres, log_weights = performer_centres(512, tau, 7)
    bumps = np.exp(log_weights - 2 * (p[:, None] - centres) ** 2 / tau)  # (N, D): no bump below 1e-60 here
    weights = bumps @ bumps.T  # (N, N)
    np.testing.assert_allclose(positive_feature_head(s, p, tau, centres, log_weights),
                               weights @ s / weights.sum(axis=1), rtol=0, atol=4 * p.size * EPS)
    # a product of two bumps carries exp(4 pbar**2 / tau), one over the density of N(0, tau / 8) up to a constant
    np.testing.assert_allclose(2 * log_weights, 4 * centres**2 / tau, rtol=1e-15)
    assert glued["cost-end-sigmas"] == pytest.approx(0.5 / np.sqrt(tau / 8)) == pytest.approx(20)
    assert sp.simplify(ns["ratio"] - sp.sqrt(sp.pi * spectrum.tau) / 2) == 0


def test_the_chapters_performer_head_is_the_performer_on_centred_positions(chapter):
    """Independently: features exp(omega q - 2 q**2 / tau) of q = p - 1/2, omega ~ N(0, 2 / tau)."""
    ns = chapter.namespace
    p, s, tau = ns["positions"], ns["noisy"], ns["tau"]
    output, _ = approximate_heads.feature_head("performer", s, p, tau, 64, rng=9)
    omega = np.random.default_rng(9).standard_normal(64) * np.sqrt(2 / tau)  # (D,)
    q = p - 0.5
    logs = omega * q[:, None] - 2 * q[:, None] ** 2 / tau  # (N, D)
    features = np.exp(logs - logs.max())  # a common factor cancels in the ratio
    weights = features @ features.T
    # sums of N D positive terms in another order: N D EPS relatively, outputs below 2
    np.testing.assert_allclose(output, weights @ s / weights.sum(axis=1), rtol=0, atol=4 * p.size * 64 * EPS)


def test_the_performers_relative_variance_grows_with_the_pairs_sum(chapter):
    ns, glued = chapter.namespace, chapter.glued
    p_i, p_j, tau = spectrum.x, spectrum.y, spectrum.tau
    assert sp.simplify(ns["relative_variance"] - (sp.exp(2 * (p_i + p_j) ** 2 / tau) - 1)) == 0
    assert sp.simplify(ns["kernel_mean"] - sp.exp(-((p_i - p_j) ** 2) / tau)) == 0
    # Monte Carlo, where the variance is finite enough to estimate: tau = 1, p_i = 0.3, p_j = 0.1
    omega = np.random.default_rng(4).standard_normal(400_000) * np.sqrt(2.0)
    products = np.exp(omega * 0.4 - 2 * (0.3**2 + 0.1**2))
    assert products.mean() == pytest.approx(np.exp(-0.04), rel=0.01)
    assert products.var() / products.mean() ** 2 == pytest.approx(np.exp(2 * 0.16) - 1, rel=0.05)
    t = ns["tau"]
    assert glued["cost-performer-digits"] == int(np.floor((2 / t) / np.log(10))) + 1 == 174
    assert glued["cost-performer-calm"] == pytest.approx(np.sqrt(t * np.log(2) / 2))
    calm = glued["cost-performer-calm"]
    assert float(ns["relative_variance"].subs({p_i: calm / 2, p_j: calm / 2, tau: t})) == pytest.approx(1.0)


def test_spread_centres_reach_three_root_tau_beyond_each_end(chapter):
    assert MARGIN == 3.0
    p, tau = chapter.namespace["positions"], chapter.namespace["tau"]
    low, high = p.min() - 3 * np.sqrt(tau), p.max() + 3 * np.sqrt(tau)
    assert low <= chapter.namespace["centres"].min() <= chapter.namespace["centres"].max() <= high
    # Uniform there: of 20,000 centres, the extremes lie within 1 % of the span from each end (missed with
    # probability exp(-200) each), and the share left of the middle is within 0.025 of a half (7 standard errors).
    many = spread_centres(20_000, p, tau, rng=0)
    span = high - low
    assert low <= many.min() < low + 0.01 * span and high - 0.01 * span < many.max() <= high
    assert abs(np.mean(many < (low + high) / 2) - 0.5) < 0.025


# --- linear time -----------------------------------------------------------------------------------


def test_the_bench_doubled_n_from_256_and_the_counts_it_names(chapter):
    bench, glued = chapter.namespace["bench"], chapter.glued
    assert glued["cost-time-first-n"] == 256
    for name in chapter.namespace["measured"]:
        n = bench[name]["n"]
        assert n[0] == 256 and (n[1:] == 2 * n[:-1]).all(), name
    assert [glued[f"cost-count-{k}"] for k in ("fourier-64", "fourier-512", "spread-128", "window-257")] \
        == [64, 512, 128, 257]
    # The exact head: the largest power of two measured; the next is past the guard's largest N.
    guard = cost.largest_n(memory.get_limit())
    assert glued["cost-time-largest-n-exact"] <= guard < glued["cost-time-double-exact"] \
        == 2 * glued["cost-time-largest-n-exact"]
    assert glued["cost-guard-n"] == guard


def test_the_bench_stopped_each_cheaper_head_once_a_call_took_over_two_seconds(chapter):
    """The text says "over two seconds of processor time": the bench's limit, and what the file shows."""
    from benchmarks.bench_attention_cost import LIMIT_S

    assert LIMIT_S == 2.0 and "over two seconds of processor time" in prose()
    bench = chapter.namespace["bench"]
    for name in chapter.namespace["measured"][1:]:
        seconds = bench[name]["seconds"]
        assert seconds[-1] > LIMIT_S >= seconds[:-1].max(), name
    assert bench["exact"]["seconds"].max() < LIMIT_S, "the exact head stopped at the guard, not at the limit"


def test_the_slopes_are_near_two_and_one_and_the_crossovers(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert 1.7 < glued["cost-time-slope-exact"] < 3.0
    for name in ("fourier-64", "fourier-512", "spread-128", "window-257"):
        assert glued[f"cost-time-slope-{name}"] == pytest.approx(1.0, abs=0.25), name
    assert glued["cost-crossover-fourier-64"] < glued["cost-crossover-fourier-512"]
    assert glued["cost-crossover-ratio"] == glued["cost-crossover-fourier-512"] / glued["cost-crossover-fourier-64"]
    for name, where in ns["crossovers"].items():
        exact, other = ns["bench"]["exact"], ns["bench"][name]
        n = exact["n"][np.isin(exact["n"], other["n"])]
        assert n[0] <= where <= n[-1]
        beyond = n > where
        faster = other["seconds"][np.isin(other["n"], n[beyond])] < exact["seconds"][np.isin(exact["n"], n[beyond])]
        assert faster.all(), f"{name}: faster from its crossover on"


def test_eight_times_the_features_move_the_crossover_about_eight_times_further(chapter):
    glued = chapter.glued
    assert glued["cost-count-fourier-512"] / glued["cost-count-fourier-64"] == 8
    assert 4 <= glued["cost-crossover-ratio"] <= 16, "close to eight (within a factor 2)"


def test_counted_alike_with_the_row_sums_the_crossover_is_1_6_d(chapter):
    """The features' 8 N D holds their denominators (d_v + 1 columns); the exact count, N**2 (d_k + d_v), leaves
    the softmax's N**2 row-sum additions out. With them, 5 N**2 = 8 N D at N = 1.6 D."""
    glued = chapter.glued
    assert glued["cost-exact-alike-per-pair"] == 3 + 1 + 1, "d_k + d_v + one addition to the row sum"
    assert glued["cost-counted-alike-ratio"] == 8 / 5
    D, d_v = 5, 1
    n = 8 * D // 5  # N = 1.6 D, whole
    assert cost.feature_cost(n, 2 * D, d_v).multiply_adds == 2 * n * (2 * D) * (d_v + 1), "the ones column counted"
    assert cost.exact_cost(n).multiply_adds == n * n * (3 + d_v), "no row sums"
    assert cost.exact_cost(n).multiply_adds + n * n == cost.feature_cost(n, 2 * D).multiply_adds
    assert cost.exact_cost(n + 1).multiply_adds + (n + 1) ** 2 > cost.feature_cost(n + 1, 2 * D).multiply_adds
    assert cost.exact_cost(n - 1).multiply_adds + (n - 1) ** 2 < cost.feature_cost(n - 1, 2 * D).multiply_adds
    # the evaluations the counted crossover leaves out, at N = 2 D: N**2 = 4 D**2 against 4 N D = 8 D**2
    D = glued["cost-count-fourier-64"]
    assert glued["cost-counted-exps-fourier-64"] == 4 * D**2 == cost.exact_cost(2 * D).evaluations
    assert glued["cost-counted-trig-fourier-64"] == 8 * D**2 == cost.feature_cost(2 * D, 2 * D).evaluations
    text = prose()
    assert "leaves out the softmax's row sums" in text and "compares multiply-adds only" in text
    assert "weigh every operation alike" not in text and "many multiply-adds" not in text


def test_the_counted_crossover_is_n_equals_2d_and_the_timed_ones_lie_beyond(chapter):
    glued, bench = chapter.glued, chapter.namespace["bench"]
    for name in ("fourier-64", "fourier-512"):
        D = bench[name]["count"]
        counted = glued[f"cost-counted-crossover-{name}"]
        assert counted == 2 * D, "4 N**2 = 8 N D"
        assert cost.exact_cost(counted).multiply_adds == cost.feature_cost(counted, 2 * D).multiply_adds
        assert cost.exact_cost(counted + 1).multiply_adds > cost.feature_cost(counted + 1, 2 * D).multiply_adds
        assert cost.exact_cost(counted).evaluations < cost.feature_cost(counted, 2 * D).evaluations, \
            "the cosines and sines, 4 N D, still outnumber the exponentials there"
        assert glued[f"cost-crossover-beyond-{name}"] == glued[f"cost-crossover-{name}"] / counted > 1
    assert glued["cost-counted-crossover-fourier-512"] / glued["cost-counted-crossover-fourier-64"] == 8
    assert glued["cost-bench-load"] == bench["load"][0] and f"{glued['cost-bench-cores']} cores" in bench["machine"]


def test_causal_running_sums_of_features_are_the_masked_feature_head():
    """Katharopoulos et al.: query i needs the sums over j <= i only, one term more per token."""
    positions, _, noisy = sa.noisy_sine(50, 0.3, rng=1)
    omega = random_features.gaussian_frequencies(256, defaults.TEMPERATURE, 3)
    psi = random_features.fourier_features(sa.head.centre_positions(positions), omega)  # (n, 2D)
    running_s, running_1 = np.cumsum(psi * noisy[:, None], axis=0), np.cumsum(psi, axis=0)  # (n, 2D) each
    recurrent = np.sum(psi * running_s, axis=1) / np.sum(psi * running_1, axis=1)
    K = np.tril(psi @ psi.T)
    np.testing.assert_allclose(recurrent, K @ noisy / K.sum(axis=1), rtol=1e-9)


# --- the window ------------------------------------------------------------------------------------


def test_each_key_left_out_weighs_at_most_exp_minus_u_squared_over_tau(chapter):
    ns = chapter.namespace
    p, tau = ns["positions"], ns["tau"]
    for k in ns["reach"]:
        U = k * np.sqrt(tau)
        u = np.abs(p[:, None] - p[None, :])
        assert np.all(np.exp(-(u[u > U] ** 2) / tau) <= np.exp(-(U**2) / tau))


def test_the_window_errors_fall_to_the_heads_own_rounding(chapter):
    ns, glued = chapter.namespace, chapter.glued
    errors, reach = ns["windows"]["errors"], ns["reach"]
    p, s, tau = ns["positions"], ns["noisy"], ns["tau"]
    floor = average_atol(p.size, s, square_gap(half_spread(p), tau))  # the exact head's rounding against the window's
    assert (errors[reach >= 6] <= floor).all(), "from 6 sqrt(tau) on: rounding"
    assert glued["cost-window-error-6"] == errors[list(reach).index(6.0)]
    assert np.ptp(np.log10(errors[reach >= 6])) < 1, "it stays there"
    assert glued["cost-window-error-3"] > glued["cost-window-error-4"] > glued["cost-window-error-5"] \
        > glued["cost-window-error-6"]
    k = [list(reach).index(3.0), list(reach).index(4.0)]
    assert np.all(errors[k] <= p.size * np.exp(-reach[k] ** 2) * np.ptp(s))
    assert glued["cost-window-keys-3"] < glued["cost-window-keys-4"] < glued["cost-window-keys-5"] < defaults.N


def test_at_a_fixed_half_width_the_keys_grow_with_the_samples():
    """Quadratic when the width is fixed in position while the samples get denser."""
    keys = []
    for n in (500, 1000):
        positions, _, noisy = sa.noisy_sine(n, 0.3, rng=1)
        keys.append(window_head(noisy, positions, defaults.TEMPERATURE, 0.1)[1].mean())
    assert keys[1] / keys[0] == pytest.approx(2.0, rel=0.02)


def test_when_each_wins(chapter):
    ns, glued = chapter.namespace, chapter.glued
    narrow, wide = ns["comparisons"]
    assert ns["wide_tau"] == 100 * ns["tau"] and np.sqrt(ns["wide_tau"] / ns["tau"]) == pytest.approx(10)
    random_best = min(narrow["fourier"]["errors"].min(), narrow["spread"]["errors"].min())
    assert glued["cost-narrow-spread-best"] == random_best == narrow["spread"]["errors"].min()
    best = np.argmin(narrow["spread"]["errors"])
    assert glued["cost-narrow-spread-best-ops"] == narrow["spread"]["operations"][best], "that head's cost"
    assert glued["cost-narrow-window-2-error"] < random_best / 10, "the window at 2 sqrt(tau) wins"
    assert glued["cost-narrow-window-2-ops"] <= 1.1 * max(narrow["spread"]["operations"])
    assert glued["cost-narrow-window-4-error"] < 1e-6 * random_best
    assert glued["cost-wide-window-1-ops"] > 0.9 * glued["cost-exact-ops-per-token"], "nearly every key"
    assert glued["cost-wide-window-1-error"] > 2 * glued["cost-wide-fourier-64-error"]
    # the wide kernel's 64 frequencies: a median over 100 draws, as a share of the exact output's RMS
    wide_64, wide_exact = ns["wide_64"]["fourier"], ns["wide_exact"]
    assert glued["cost-wide-fourier-64-draws"] == wide_64.shape[0] == 100 and wide_64.shape[1] == 1
    assert glued["cost-wide-fourier-64-error"] == np.median(wide_64)
    # the figure's D = 64 point is another median, of 10 other draws (the comparisons' rng is 33, not 34)
    assert glued["cost-figure-draws"] == ns["figure_draws"] == 10
    redrawn = approximate_heads.feature_errors(ns["dense_s"], ns["dense_p"], ns["wide_tau"], [4, 16, 64, 256],
                                               ns["figure_draws"], 33, methods=("fourier", "spread"))
    assert glued["cost-wide-fourier-64-figure-error"] == wide["fourier"]["errors"][2] \
        == np.median(redrawn["fourier"][:, 2])
    np.testing.assert_array_equal(wide_exact, sa.gaussian_head(ns["dense_s"], ns["dense_p"], ns["wide_tau"])[0])
    assert glued["cost-wide-exact-rms"] == pytest.approx(rmse(wide_exact, np.zeros_like(wide_exact)), rel=1e-12)
    assert glued["cost-wide-fourier-64-share"] == pytest.approx(glued["cost-wide-fourier-64-error"]
                                                                / glued["cost-wide-exact-rms"], rel=1e-12)
    assert 0.02 < glued["cost-wide-fourier-64-share"] < 0.5, "some percent of the output"
    # the narrow kernel's winning window keeps a quarter of the keys, not few
    _, keys = window_head(ns["dense_s"], ns["dense_p"], ns["tau"], 2 * np.sqrt(ns["tau"]))
    assert glued["cost-narrow-window-2-keys"] == pytest.approx(keys.mean(), rel=1e-12)
    assert 0.2 * glued["cost-dense-n"] < glued["cost-narrow-window-2-keys"] < 0.3 * glued["cost-dense-n"]
    assert glued["cost-wide-fourier-64-ops"] < glued["cost-wide-window-1-ops"] / 4
    assert ns["settings"][ns["wide_tau"]][2] == np.sqrt(ns["wide_tau"]), "U = sqrt(tau)"
    np.testing.assert_array_equal(narrow["fourier"]["operations"], wide["fourier"]["operations"],
                                  err_msg="the features' cost does not grow with the kernel's width")


# --- exercises ---------------------------------------------------------------------------------------


def test_exercise_bytes(chapter):
    n = chapter.glued["ex-cost-bytes-n"]
    assert chapter.namespace["check_n"] == n, "the solution's N is the exercise's"
    assert chapter.glued["ex-cost-bytes-mib"] == 8 * n**2 / 2**20 == 128


def test_exercise_cache(chapter):
    n = chapter.glued["ex-cost-cache-n"]
    assert chapter.namespace["cache_n"] == n, "the solution's N is the exercise's"
    assert chapter.glued["ex-cost-cache-ratio"] == pytest.approx((2 * n + 1) / 3)


def test_exercise_live(chapter):
    glued = chapter.glued
    before, after = glued["ex-cost-live-keys-before"], glued["ex-cost-live-keys"]
    assert before < after < 2 * before, "more keys, less than twice: the window runs off the ends"
    assert 1 / 3 < glued["ex-cost-live-error"] / glued["ex-cost-live-error-before"] < 3, "about the same"
    p, _, s = sa.noisy_sine(defaults.N, defaults.SIGMA, rng=defaults.SEED)
    t = 4 * defaults.TEMPERATURE
    _, keys = window_head(s, p, t, 4 * np.sqrt(t))
    assert glued["ex-cost-live-keys"] == keys.mean()
    # "more than half the length of the positions, so every query's window runs off at least one end"
    U = glued["ex-cost-live-half-width"]
    assert U == 4 * np.sqrt(t) and (p[0], p[-1]) == (0.0, 1.0)
    assert np.all((p - U < p[0]) | (p + U > p[-1]))
    _, keys_before = window_head(s, p, defaults.TEMPERATURE, 4 * np.sqrt(defaults.TEMPERATURE))
    assert keys.max() < 2 * keys_before.max(), "no query sees twice the keys it saw"


def test_exercise_open(chapter):
    glued, ns = chapter.glued, chapter.namespace
    assert glued["ex-cost-open-both"] < glued["ex-cost-open-window"] / 2
    assert glued["ex-cost-open-d"] == 256 == 2 * glued["ex-cost-open-frequencies"], "as many numbers a token"
    assert glued["ex-cost-open-cosines"] > 10 * glued["ex-cost-open-window"], "with cosines, the window alone is better"
    assert (ns["cosines"].sum(axis=1) > 0).all(), "a poor estimate, not a crossing denominator"
    # the bumps' estimate of a pair is at most a constant (scale * D) times its kernel, and never negative
    # (a sum of D rounded products, each at most the kernel: D + 4 roundings at most)
    D = glued["ex-cost-open-d"]
    assert (ns["estimate"] <= ns["scale"] * D * ns["kernel"] * (1 + (D + 4) * EPS)).all()
    assert (ns["estimate"] >= 0).all()


# --- wording the review corrected ---------------------------------------------------------------------


def test_the_decoders_run_the_head_over_given_tokens_and_produce_none():
    """Teacher-forced: the decoders read X, they write nothing; the prose, the figure and its label say so."""
    text = prose()
    assert re.search(r"[Pp]roduc(e|es|ed|ing) [^.]{0,40}tokens", text) is None
    assert re.search(r"cache produces", text) is None
    assert "Running the causal head over $N$ given tokens one at a time" in text
    assert "the tokens $[s, p, p^2, 1]$ built from the book's noisy sine" in text
    assert "one causal pass, with the same outputs, up to rounding, as taking its tokens one at a time" in text
    fig = plot_decoding([16, 32], [1, 8], [1, 2], [16, 32], [1.0, 8.0], [1.0, 2.0], "a machine")
    assert {ax.get_xlabel() for ax in fig.axes} == {"given tokens $N$, taken one at a time"}


def test_the_kernel_matrix_is_what_psi_psi_transpose_estimates_not_the_weights(chapter):
    """Psi Psi^T averages to the kernel exp(-(p_i - p_j)**2 / tau), whose rows do not sum to 1 (the weights' do)."""
    ns = chapter.namespace
    p, tau = sa.head.centre_positions(ns["positions"]), ns["tau"]
    kernel = np.exp(-((p[:, None] - p[None, :]) ** 2) / tau)  # (N, N)
    assert np.all(kernel.sum(axis=1) > 2), "not weights: a row of the kernel sums to more than 1"
    text = prose()
    assert "$\\Psi \\Psi^\\top$ estimates the kernel matrix" in text
    assert "The estimated weights are $\\Psi \\Psi^\\top$" not in text


def test_the_random_feature_heads_centre_the_positions_as_the_exact_head_does_and_the_window_need_not():
    """Shifting every position by a constant changes no output, for any head: the kernel depends on differences;
    the sentence says which heads centre, and the window head's source does not."""
    text = prose()
    assert "Every random-feature head of this chapter, like the exact head, takes the positions about" in text
    for stem in ("random_features", "positive_features", "head"):
        assert "centre_positions(" in (ROOT / "src" / "selfattention" / f"{stem}.py").read_text()
    assert "centre_positions(" not in (ROOT / "src" / "selfattention" / "window.py").read_text()


def test_the_performer_is_named_and_its_frequencies_keep_their_signs():
    text = prose()
    assert "the Performer of {cite:t}`choromanski2021rethinking`" in text
    assert "drawn from the same $\\mathcal{N}(0, 2/\\tau)$, signs kept this time" in text
    # the cosine head's draws serve by their sizes |omega_r|; a Performer frequency's sign changes its feature
    p, omega, tau = 0.3, 2.0, defaults.TEMPERATURE
    assert np.exp(omega * p - 2 * p**2 / tau) != np.exp(-omega * p - 2 * p**2 / tau)
    assert np.cos(omega * p) == np.cos(-omega * p)


def test_the_relative_variance_is_over_the_draws_of_omega():
    text = prose()
    assert "\\operatorname{Var}_{\\omega}(\\text{product})" in text and "\\mathbb{E}_{\\omega}\\," in text
    notation = (ROOT / "book" / "notation.md").read_text()
    assert "| $\\mathcal{N}(0, \\nu)$ | the normal distribution of mean 0 and variance $\\nu$; any variance" in notation
    used = {v.replace(" ", "") for v in re.findall(r"\\mathcal\{N\}\(0, ([^)]*)\)", text)}
    assert used == {r"\nu", r"2/\tau", r"\tau/8"}, "every normal of the chapter has mean 0, as the row says"


def test_the_explorer_times_only_when_the_button_is_pressed_and_says_frequencies():
    text = prose()
    script = (ROOT / "_ext" / "attention_explorer" / "static" / "cost_explorer.js").read_text()
    label = re.search(r'this.timeButton = el\("button", [^\]]*\["([^"]+)"\]', script).group(1)
    assert f"Press the button, *{label}*, to time each head on your own device" in text
    assert "D random features" not in script and "random features ${" not in script
    assert script.count('"D random frequencies"') == 2, "both legends"


def test_training_and_inference_never_form_the_weights_whole_when_computed_in_blocks():
    text = prose()
    assert ("Computed a block of keys at a time, in training as at inference, they are never formed whole: the "
            "backward pass recomputes each block from the row maxima and sums saved in the forward pass") in text
    assert "{cite}`dao2022flashattention`" in text
    assert "@inproceedings{dao2022flashattention," in (ROOT / "references.bib").read_text()
