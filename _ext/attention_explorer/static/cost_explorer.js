/*
 * The cost explorer: the exact Gaussian head against the head of D random frequencies (2D features),
 * both computed, and timed, in the reader's browser, with no live session (no Python).
 *
 * It is one kind of the book's explorers (data.layer === "cost", written at build time by
 * selfattention.interactive.explorer_data.cost_data): it uses the base class, the layout and the
 * drawing of attention_explorer.js, which the page loads first, through
 * window.AttentionExplorerKit, and registers itself there.
 *
 * The math, in the package's words (selfattention.gaussian_head, random_features):
 *   p_i = i / (n - 1), s_i = sin(2 pi f p_i) + sigma z_i          the book's noisy sine
 *   q_i = p_i - (min p + max p) / 2                               positions centred, as the heads do
 *   exact_i = sum_j exp(-(q_i - q_j)^2 / tau) s_j / sum_j exp(-(q_i - q_j)^2 / tau)
 *   omega_r = |g_r| sqrt(2) sqrt(1 / tau), r < D                  gaussian_frequencies(D, tau, seed)
 *   psi(q)  = [cos omega_1 q, sin omega_1 q, ..., cos omega_D q, sin omega_D q] / sqrt(D)
 *   features_i = psi(q_i) . sum_j psi(q_j)^T s_j / psi(q_i) . sum_j psi(q_j)^T
 * with g the standard normal draws of the frequencies' seed embedded in the page. The exact head
 * scores every pair, n^2 exponentials; the features' head evaluates 2 D cosines and sines per token
 * and pass (keys, then queries) and never forms the n x n matrix.
 *
 * Timing. Each redraw computes both heads at the sliders' N and D and shows how long each took
 * here. The button times both as N grows (data.timing_ns), on the clean sine (the time depends on
 * N and D only): each head runs in slices of at most SLICE_MS, and the page paints between them
 * (setTimeout), so that it never freezes; a head's time is the sum of its slices' times
 * (performance.now()), the waits between them not counted. Nothing is timed on load.
 *
 * JavaScript API, on the element (el.attentionExplorer), besides the shared one (params, setParams,
 * redraw, timing, data):
 *   series()   -> {positions, clean, noisy, exact, features, denominators, frequencies}: plain arrays
 *   timeHeads({ns, count}) -> a Promise of {ns, count, exactMs, featureMs} (ns defaults to
 *                 data.timing_ns, count to the slider's D), drawn as it goes; one run at a time;
 *                 a RangeError for an N beyond the largest of data.timing_ns (the cap) or a D
 *                 outside the slider's range
 *   lastTimes() -> the last such result, or null
 */
(function () {
  "use strict";

  const kit = window.AttentionExplorerKit;
  if (!kit) return;
  const { Explorer, el, drawCurves, yLimit, legend, noisySine, registerKind } = kit;

  /** The longest a slice of timed work runs before the page may paint. */
  const SLICE_MS = 8;

  // ---------------------------------------------------------------- the math

  /** Positions less the middle of their range, as selfattention.head.centre_positions. */
  function centred(positions) {
    let lo = Infinity, hi = -Infinity;
    for (const p of positions) { lo = Math.min(lo, p); hi = Math.max(hi, p); }
    const mid = lo / 2 + hi / 2;
    return positions.map((p) => p - mid);
  }

  /** D frequencies |g_r| sqrt(2 / tau), as random_features.gaussian_frequencies with the same draws. */
  function frequencies(draws, count, tau) {
    const spread = Math.SQRT2 * Math.sqrt(1 / tau);
    return Float64Array.from(draws.slice(0, count), (g) => Math.abs(g) * spread);
  }

  /** The exact head's output for query i: every key, exp(-(q_i - q_j)^2 / tau), normalised. */
  function exactRow(q, s, tau, i) {
    let num = 0, den = 0;
    for (let j = 0; j < q.length; j++) {
      const u = q[i] - q[j];
      const w = Math.exp(-(u * (u / tau)));
      num += w * s[j]; den += w;
    }
    return num / den;
  }

  /** The features of one position, psi(q) (2 D), into `out`. */
  function features(q, omega, out) {
    const root = Math.sqrt(omega.length);
    for (let r = 0; r < omega.length; r++) {
      const angle = q * omega[r];
      out[2 * r] = Math.cos(angle) / root;
      out[2 * r + 1] = Math.sin(angle) / root;
    }
    return out;
  }

  /**
   * The features' head as work items: items 0..n-1 add key j's psi(q_j)^T [s_j, 1] to the two
   * sums, items n..2n-1 give query i its numerator and denominator. Returns {step(k), result()}.
   */
  function featureHead(q, s, omega) {
    const n = q.length, width = 2 * omega.length;
    const sumS = new Float64Array(width), sum1 = new Float64Array(width);
    const psi = new Float64Array(width);
    const output = new Float64Array(n), denominators = new Float64Array(n);
    const step = (k) => {
      if (k < n) {
        features(q[k], omega, psi);
        for (let c = 0; c < width; c++) { sumS[c] += psi[c] * s[k]; sum1[c] += psi[c]; }
        return;
      }
      const i = k - n;
      features(q[i], omega, psi);
      let num = 0, den = 0;
      for (let c = 0; c < width; c++) { num += psi[c] * sumS[c]; den += psi[c] * sum1[c]; }
      output[i] = num / den;
      denominators[i] = den;
    };
    return { items: 2 * n, step, result: () => ({ output, denominators }) };
  }

  function exactHead(q, s, tau) {
    const output = new Float64Array(q.length);
    return { items: q.length, step: (i) => { output[i] = exactRow(q, s, tau, i); }, result: () => ({ output }) };
  }

  /** Every item at once; returns [result, milliseconds]. */
  function runNow(work) {
    const t0 = performance.now();
    for (let k = 0; k < work.items; k++) work.step(k);
    return [work.result(), performance.now() - t0];
  }

  /** The items in slices of at most SLICE_MS, the page free between them: a Promise of the busy ms. */
  function runSliced(work) {
    return new Promise((resolve) => {
      let k = 0, busy = 0;
      const slice = () => {
        const t0 = performance.now();
        while (k < work.items) {
          work.step(k++);
          if (performance.now() - t0 > SLICE_MS) break;
        }
        busy += performance.now() - t0;
        if (k < work.items) setTimeout(slice, 0);
        else resolve(busy);
      };
      setTimeout(slice, 0);
    });
  }

  // ---------------------------------------------------------------- drawing the times

  /**
   * A time with its unit, for the eye: a browser's clock ticks in steps of about 0.1 ms (Chromium
   * coarsens performance.now() to 100 µs on a page that is not cross-origin isolated), so a shorter
   * time reads "< 0.1 ms", never "0.0 ms".
   */
  function formatMs(ms) {
    if (ms < 0.1) return "< 0.1 ms";
    return `${ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)} ms`;
  }

  /** Log-log axes of milliseconds against N, and the measured points of both heads. */
  function drawTimes(canvas, colors, ns, series) {
    const ctx = canvas.getContext("2d");
    const dpr = window.devicePixelRatio || 1;
    const W = canvas.width, H = canvas.height;
    const pad = { l: 40 * dpr, r: 12 * dpr, t: 18 * dpr, b: 24 * dpr };
    const measured = series.flatMap(({ ms }) => ms.filter((v) => v > 0));
    const lo = Math.log10(Math.min(0.1, ...measured)), hi = Math.log10(Math.max(10, ...measured));
    const xLo = Math.log10(ns[0]), xHi = Math.log10(ns[ns.length - 1]);
    const X = (n) => pad.l + ((Math.log10(n) - xLo) / (xHi - xLo)) * (W - pad.l - pad.r);
    const Y = (v) => pad.t + ((hi - Math.log10(v)) / (hi - lo)) * (H - pad.t - pad.b);
    ctx.clearRect(0, 0, W, H);
    ctx.font = `${11 * dpr}px ${colors.font}`;
    ctx.fillStyle = colors.fg; ctx.strokeStyle = colors.grid; ctx.lineWidth = dpr;
    ctx.beginPath();
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) {
      ctx.moveTo(pad.l, Y(10 ** e)); ctx.lineTo(W - pad.r, Y(10 ** e));
      ctx.fillText(e >= 0 ? String(10 ** e) : (10 ** e).toFixed(-e), pad.l - 4 * dpr, Y(10 ** e));
    }
    ctx.textBaseline = "top";
    ns.forEach((n, k) => {
      ctx.moveTo(X(n), pad.t); ctx.lineTo(X(n), H - pad.b);
      ctx.textAlign = k === ns.length - 1 ? "right" : k === 0 ? "left" : "center"; // the ends stay inside
      ctx.fillText(String(n), X(n), H - pad.b + 4 * dpr);
    });
    ctx.stroke();
    ctx.textAlign = "left"; ctx.textBaseline = "top";
    ctx.fillText("ms", 4 * dpr, 2 * dpr); // the unit of the vertical axis; N is the horizontal one (caption)
    for (const { ms, color } of series) {
      ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = 2 * dpr;
      ctx.beginPath();
      ms.forEach((v, k) => { if (v > 0) (k && ms[k - 1] > 0 ? ctx.lineTo : ctx.moveTo).call(ctx, X(ns[k]), Y(v)); });
      ctx.stroke();
      ms.forEach((v, k) => { if (v > 0) { ctx.beginPath(); ctx.arc(X(ns[k]), Y(v), 3 * dpr, 0, 2 * Math.PI); ctx.fill(); } });
    }
  }

  // ---------------------------------------------------------------- the explorer

  class CostExplorer extends Explorer {
    sliders() {
      const d = this.data;
      return [
        this.linearSpec("n", "Samples N", d.n_range, d.n, 1, String, true),
        this.linearSpec("count", "Random frequencies D", d.count_range, d.count, 1, String, true),
      ];
    }

    buildPanels() {
      this.canvasSignal = this.signalCanvas(
        "Signal panel: the noisy observations (dots), the exact head's output and the output of the head of D random frequencies (two lines), against position from 0 to 1.");
      this.gapOutput = el("span", { class: "ae-cost-gap" });
      this.canvasTimes = el("canvas", { class: "ae-canvas-times", role: "img",
        "aria-label": "Times measured in this browser: milliseconds against the number of samples N, both on logarithmic scales, for the exact head and the head of random features." });
      this.timesNote = el("output", { class: "ae-cost-note", "aria-live": "polite" },
        ["Times are measured in this browser, on this device, when you press the button."]);
      return {
        main: [el("figure", { class: "ae-panel ae-panel-signal" }, [this.canvasSignal,
          legend([["noisy", "noisy input"], ["output", "exact head"], ["features", "D random frequencies"]]),
          el("figcaption", {}, [this.gapOutput])])],
        after: [el("figure", { class: "ae-panel ae-panel-times" }, [this.canvasTimes,
          legend([["output", "exact head"], ["features", "D random frequencies"]]),
          el("figcaption", {}, ["Milliseconds against N, on logarithmic scales. ", this.timesNote])])],
      };
    }

    extraControls() {
      this.timeButton = el("button", { type: "button", class: "ae-best" }, ["Time both heads as N grows"]);
      this.timeButton.addEventListener("click", () => this.timeHeads());
      this.nowOutput = el("output", { class: "ae-cost-now" });
      return [el("div", { class: "ae-control ae-control-best" }, [this.timeButton]),
        el("p", { class: "ae-cost-now-line" }, [this.nowOutput])];
    }

    extraApi() {
      return {
        timeHeads: (opts) => { this.start(); return this.timeHeads(opts); },
        lastTimes: () => this.lastTimes || null,
      };
    }

    compute() {
      const { n, count } = this.state;
      const d = this.data;
      const sig = noisySine(n, d.sigma, d.periods, this.z);
      const q = centred(sig.positions);
      const omega = frequencies(d.draws, count, d.temperature);
      const [exact, exactMs] = runNow(exactHead(q, sig.noisy, d.temperature));
      const [approx, featureMs] = runNow(featureHead(q, sig.noisy, omega));
      let gap = 0;
      for (let i = 0; i < n; i++) gap += (approx.output[i] - exact.output[i]) ** 2;
      this.result = { ...sig, omega, exact: exact.output, approx, exactMs, featureMs, gap: Math.sqrt(gap / n) };
    }

    draw() {
      const colors = { ...this.colors(), features: getComputedStyle(this.root).getPropertyValue("--ae-features").trim() };
      const { positions, noisy, exact, approx, exactMs, featureMs, gap, n } = { ...this.result, n: this.state.n };
      drawCurves(this.canvasSignal, colors, positions, yLimit(1.2, noisy), {
        dots: [{ ys: noisy, color: colors.noisy }],
        lines: [{ ys: exact, color: colors.output, width: 2.4 }, { ys: this.clipped(approx.output, 3), color: colors.features, width: 1.6 }],
      });
      this.gapOutput.textContent = `RMS distance between the two heads: ${gap.toPrecision(2)}`;
      this.nowOutput.textContent = `This device, N = ${n}: exact head ${formatMs(exactMs)}, ` +
        `D = ${this.state.count} random frequencies ${formatMs(featureMs)}.`;
      const ns = this.lastTimes ? this.lastTimes.ns : this.data.timing_ns;
      const times = this.lastTimes || { exactMs: [], featureMs: [] };
      drawTimes(this.canvasTimes, colors, ns, [
        { ms: ns.map((_, k) => times.exactMs[k] || 0), color: colors.output },
        { ms: ns.map((_, k) => times.featureMs[k] || 0), color: colors.features },
      ]);
    }

    /** Values beyond +-limit drawn at the limit (a near-zero denominator's spikes). */
    clipped(ys, limit) {
      return ys.map((v) => Math.max(-limit, Math.min(limit, v)));
    }

    series() {
      const { positions, clean, noisy, exact, approx, omega } = this.result;
      return {
        positions: Array.from(positions), clean: Array.from(clean), noisy: Array.from(noisy),
        exact: Array.from(exact), features: Array.from(approx.output),
        denominators: Array.from(approx.denominators), frequencies: Array.from(omega),
      };
    }

    /** Both heads timed at each N, in slices; drawn as each time comes in. */
    timeHeads({ ns = this.data.timing_ns, count = this.state.count } = {}) {
      if (this.timingRun) return this.timingRun;
      const d = this.data;
      const cap = Math.max(...d.timing_ns), [lo, hi] = d.count_range;
      if (!ns.length || ns.some((n) => !Number.isInteger(n) || n < 2 || n > cap)) {
        throw new RangeError(`ns must be integers from 2 to ${cap}, got ${ns}`);
      }
      if (!Number.isInteger(count) || count < lo || count > hi) {
        throw new RangeError(`count must be an integer in [${lo}, ${hi}], got ${count}`);
      }
      const omega = frequencies(d.draws, count, d.temperature);
      const times = { ns: [...ns], count, exactMs: [], featureMs: [] };
      this.timeButton.disabled = true;
      this.timesNote.textContent = "Timing in this browser…";
      this.timingRun = (async () => {
        for (const n of ns) {
          const sig = noisySine(n, 0, d.periods, new Float64Array(n)); // the clean sine
          const q = centred(sig.positions);
          times.exactMs.push(await runSliced(exactHead(q, sig.noisy, d.temperature)));
          times.featureMs.push(await runSliced(featureHead(q, sig.noisy, omega)));
          this.lastTimes = times;
          this.draw();
        }
        const last = ns.length - 1;
        this.timesNote.textContent = `Measured in this browser, on this device, just now: at N = ${ns[last]}, ` +
          `the exact head took ${formatMs(times.exactMs[last])}, D = ${count} random frequencies ` +
          `${formatMs(times.featureMs[last])}.`;
        this.timeButton.disabled = false;
        this.timingRun = null;
        return times;
      })();
      return this.timingRun;
    }
  }

  registerKind("cost", CostExplorer);
})();
