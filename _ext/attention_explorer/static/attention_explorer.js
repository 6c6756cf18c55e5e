/*
 * Attention explorer: the book's engineered attention head, live in the page.
 *
 * Plain JavaScript, no dependencies, nothing fetched: every element with the
 * attribute `data-attention-explorer` holds a <script type="application/json">
 * written at build time by selfattention.explorer.explorer_data() (settings,
 * slider ranges, the unit noise draws z of the book's seed, the leave-one-out
 * candidate temperatures) and a static fallback figure in a <noscript>; this
 * script builds the two canvases and the sliders in its place at once, and
 * computes and draws when the explorer comes near the viewport (nothing to
 * do on a page load that starts far above it).
 *
 * The math, in the package's words (selfattention.noisy_sine, gaussian_head,
 * choose_temperature):
 *   p_i   = i / (n - 1)                                positions
 *   y_i   = sin(2 pi f p_i) + sigma z_i                 the book's noisy sine
 *   w_ij  = exp(-(p_i - p_j)^2 / tau) / sum_k exp(-(p_i - p_k)^2 / tau)
 *   out_i = sum_j w_ij y_j
 * On the uniform grid the kernel depends on |i - j| only, so it is computed
 * once per distance (n exponentials, not n^2); the largest score of a row is
 * its diagonal, 0, so this is the max-subtracted softmax.
 * "Best tau" is leave-one-out cross-validation with the diagonal masked, as
 * selfattention.choose_temperature: the candidate with the least mean
 * squared error of predicting each y_i from all the other samples; of the
 * candidates within a relative `tie_tolerance` of the least (scores that
 * differ only by rounding), the largest, as selfattention.kernel.pick_temperature.
 *
 * JavaScript API, on the element (tests and benchmarks use it):
 *   el.attentionExplorer.params            -> {sigma, tau, n}  (a copy)
 *   el.attentionExplorer.setParams({sigma, tau, n})
 *        set any of the three (a RangeError if outside the slider ranges),
 *        move the sliders, redraw at once; returns the new params
 *   el.attentionExplorer.series({weights = true} = {})
 *        -> {positions, clean, noisy, output, weights}: plain arrays,
 *           weights as n rows of n (omitted with {weights: false})
 *   el.attentionExplorer.chooseTemperature({apply = true} = {})
 *        -> {tau, index, scores}: the leave-one-out choice for the current
 *           sigma and n; applies it (as the "best tau" button does) unless
 *           apply is false
 *   el.attentionExplorer.redraw()          compute and draw now; returns ms
 *   el.attentionExplorer.timing            -> {computeMs, drawMs, latencyMs}
 *        of the last redraw; latencyMs runs from the first slider event it
 *        answered to the end of the redraw
 *   el.attentionExplorer.data              the embedded build-time data
 * After each redraw the element fires "attention-explorer:redraw".
 * Slider events are coalesced into one redraw per animation frame.
 */
(function () {
  "use strict";

  // matplotlib's viridis at 17 stops, the colour map of the book's figures.
  const VIRIDIS_STOPS = [
    "#440154", "#48186a", "#472d7b", "#424086", "#3b528b", "#33638d", "#2c728e", "#26828e",
    "#21918c", "#1fa088", "#28ae80", "#3fbc73", "#5ec962", "#84d44b", "#addc30", "#d8e219", "#fde725",
  ];
  const LUT = buildLut(VIRIDIS_STOPS, 256); // Uint32Array of RGBA, little-endian

  function buildLut(stops, size) {
    const rgb = stops.map((h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));
    const lut = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      const x = (i / (size - 1)) * (rgb.length - 1);
      const k = Math.min(Math.floor(x), rgb.length - 2);
      const f = x - k;
      const c = [0, 1, 2].map((m) => Math.round(rgb[k][m] + f * (rgb[k + 1][m] - rgb[k][m])));
      lut[i] = (255 << 24) | (c[2] << 16) | (c[1] << 8) | c[0];
    }
    return lut;
  }

  // ---------------------------------------------------------------- the math

  /** The book's noisy sine: positions, clean and noisy, shape (n,). */
  function noisySine(n, sigma, periods, z) {
    const positions = new Float64Array(n);
    const clean = new Float64Array(n);
    const noisy = new Float64Array(n);
    const step = 1 / (n - 1); // numpy.linspace(0, 1, n): i * step, last = 1
    for (let i = 0; i < n; i++) {
      const p = i === n - 1 ? 1 : i * step;
      positions[i] = p;
      clean[i] = Math.sin(2 * Math.PI * periods * p);
      noisy[i] = clean[i] + sigma * z[i];
    }
    return { positions, clean, noisy, step };
  }

  /**
   * exp((s_d - s_shift) / 1) for the Gaussian score s_d = -(d step)^2 / tau
   * at each distance d = |i - j| in [0, n); trailing zeros are cut off.
   */
  function kernelByDistance(n, step, tau, shiftDistance) {
    const shift = -((shiftDistance * step) ** 2) / tau;
    const kern = new Float64Array(n);
    let reach = n;
    for (let d = 0; d < n; d++) {
      const dist = d * step;
      kern[d] = Math.exp(-(dist * dist) / tau - shift);
      if (kern[d] === 0 && d > shiftDistance) { reach = d; break; } // the rest underflow too
    }
    return { kern, reach };
  }

  /**
   * The engineered head: output (n,) and the row sums of the kernel (n,),
   * w_ij = kern[|i-j|] / rowSum_i. With `skipSelf` the diagonal is masked
   * (leave-one-out), and `kern` must be shifted to its nearest neighbour.
   */
  function smooth(y, kern, reach, skipSelf) {
    const n = y.length;
    const output = new Float64Array(n);
    const rowSum = new Float64Array(n);
    const first = skipSelf ? 1 : 0;
    for (let i = 0; i < n; i++) {
      let num = 0, den = 0;
      const lo = Math.max(0, i - reach + 1), hi = Math.min(n, i + reach);
      for (let j = lo; j <= i - first; j++) { const k = kern[i - j]; num += k * y[j]; den += k; }
      for (let j = i + 1; j < hi; j++) { const k = kern[j - i]; num += k * y[j]; den += k; }
      output[i] = num / den;
      rowSum[i] = den;
    }
    return { output, rowSum };
  }

  /** Leave-one-out choice of tau among `candidates`: on ties within `tolerance`, the largest tau. */
  function chooseTemperature(y, step, candidates, tolerance) {
    const n = y.length;
    const scores = new Array(candidates.length);
    for (let c = 0; c < candidates.length; c++) {
      const { kern, reach } = kernelByDistance(n, step, candidates[c], 1);
      const { output } = smooth(y, kern, reach, true);
      let sum = 0;
      for (let i = 0; i < n; i++) { const r = y[i] - output[i]; sum += r * r; }
      scores[c] = sum / n;
    }
    const least = Math.min(...scores);
    let best = -1;
    for (let c = 0; c < candidates.length; c++) {
      const tied = scores[c] <= least * (1 + tolerance);
      if (tied && (best < 0 || candidates[c] > candidates[best])) best = c;
    }
    return { tau: candidates[best], index: best, scores };
  }

  // ---------------------------------------------------------------- helpers

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const child of children || []) node.append(child);
    return node;
  }

  function formatTau(tau) {
    return tau < 1e-3 ? tau.toExponential(2) : String(Number(tau.toPrecision(3)));
  }

  /** tau for the ear: "1.00 times 10 to the power of minus 8", not "1.00e-8". */
  function spokenTau(tau) {
    if (tau >= 1e-3) return formatTau(tau);
    const [mantissa, exponent] = tau.toExponential(2).split("e");
    const power = Number(exponent);
    return `${mantissa} times 10 to the power of ${power < 0 ? "minus " : ""}${Math.abs(power)}`;
  }

  /** Call `callback` once, when `element` is within a viewport's height of being visible. */
  function whenNearView(element, callback) {
    if (!("IntersectionObserver" in window)) return callback();
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) { observer.disconnect(); callback(); }
    }, { rootMargin: "100% 0px" });
    observer.observe(element);
  }

  function niceTicks(limit) {
    const step = limit > 4 ? 2 : limit > 2 ? 1 : 0.5;
    const ticks = [];
    for (let t = -Math.floor(limit / step) * step; t <= limit + 1e-9; t += step) ticks.push(t);
    return ticks;
  }

  // ---------------------------------------------------------------- the explorer

  class Explorer {
    constructor(root) {
      this.root = root;
      this.data = JSON.parse(root.querySelector("script.attention-explorer-data").textContent);
      this.z = Float64Array.from(this.data.noise);
      this.state = { sigma: this.data.sigma, tau: this.data.temperature, n: this.data.n };
      const [lo, hi] = this.data.temperature_range;
      this.logTau = { lo: Math.log10(lo), hi: Math.log10(hi), steps: Math.round((Math.log10(hi) - Math.log10(lo)) * 100) };
      this.timing = { computeMs: 0, drawMs: 0, latencyMs: 0 };
      this.pendingSince = null;
      this.frame = 0;
      this.started = false;
      this.build();
      this.syncControls();
      whenNearView(root, () => this.start());
    }

    /** The first computation and drawing (the layout is final from build() on: nothing moves). */
    start() {
      if (this.started) return;
      this.started = true;
      this.compute();
      this.resize();
      this.draw();
      new ResizeObserver(() => { this.resize(); this.schedule(); }).observe(this.panels);
      new MutationObserver(() => this.schedule()).observe(document.documentElement, {
        attributes: true, attributeFilter: ["data-theme", "class"],
      });
    }

    build() {
      const id = this.root.id;
      this.canvasSignal = el("canvas", {
        class: "ae-canvas-signal", role: "img",
        "aria-label": "Signal panel: the ground-truth sine (dashed), the noisy observations (dots) and the attention output (solid line), against position from 0 to 1.",
      });
      this.canvasMatrix = el("canvas", {
        class: "ae-canvas-matrix", role: "img",
        "aria-label": "Attention matrix heat map: row i, from top to bottom, shows how much token i attends to every token j, from left to right; brighter is more weight.",
      });
      const legend = el("figcaption", { class: "ae-legend" }, [
        el("span", { class: "ae-key ae-key-clean" }), "ground truth ",
        el("span", { class: "ae-key ae-key-noisy" }), "noisy input ",
        el("span", { class: "ae-key ae-key-output" }), "attention output",
      ]);
      this.vmaxOutput = el("span", { class: "ae-scale-max" });
      const scale = el("div", { class: "ae-scale", "aria-hidden": "true" }, [
        el("span", {}, ["0"]), el("span", { class: "ae-scale-bar", style: `background: linear-gradient(to right, ${VIRIDIS_STOPS.join(", ")})` }),
        this.vmaxOutput,
      ]);
      const matrixCaption = el("figcaption", {}, [scale, "Attention weights: row i = query p", el("sub", {}, ["i"]),
        " (0 at the top), column j = key p", el("sub", {}, ["j"]), " (0 at the left)"]);
      this.panels = el("div", { class: "ae-panels" }, [
        el("figure", { class: "ae-panel ae-panel-signal" }, [this.canvasSignal, legend]),
        el("figure", { class: "ae-panel ae-panel-matrix" }, [this.canvasMatrix, matrixCaption]),
      ]);
      const d = this.data;
      this.inputs = {
        sigma: el("input", { type: "range", id: `${id}-sigma`, min: d.sigma_range[0], max: d.sigma_range[1], step: "0.01" }),
        tau: el("input", { type: "range", id: `${id}-tau`, min: "0", max: String(this.logTau.steps), step: "1" }),
        n: el("input", { type: "range", id: `${id}-n`, min: d.n_range[0], max: d.n_range[1], step: "1" }),
      };
      this.outputs = {};
      const labels = { sigma: "Noise σ", tau: "Temperature τ (log scale)", n: "Samples N" };
      const rows = ["sigma", "tau", "n"].map((key) => {
        // For the eye: a screen reader announces the slider's own aria-valuetext on each change, once.
        this.outputs[key] = el("output", { for: this.inputs[key].id, "aria-hidden": "true", class: "ae-value" });
        this.inputs[key].addEventListener("input", () => this.onSlider(key));
        return el("div", { class: "ae-control" }, [
          el("label", { for: this.inputs[key].id }, [labels[key]]), this.inputs[key], this.outputs[key],
        ]);
      });
      this.bestButton = el("button", { type: "button", class: "ae-best" }, ["Best τ (leave-one-out)"]);
      this.bestOutput = el("output", { "aria-live": "polite", class: "ae-best-value" });
      this.bestButton.addEventListener("click", () => this.chooseTemperature());
      const controls = el("div", { class: "ae-controls" }, [
        ...rows, el("div", { class: "ae-control ae-control-best" }, [this.bestButton, this.bestOutput]),
      ]);
      const fallback = this.root.querySelector(".attention-explorer-fallback");
      if (fallback) fallback.remove();
      this.root.append(this.panels, controls);
      this.root.classList.add("ae-live");
    }

    // ---- state

    get params() { return { ...this.state }; }

    setParams(params) {
      const p = { ...this.state, ...params };
      const d = this.data;
      const check = (name, value, [lo, hi], integer) => {
        if (typeof value !== "number" || !Number.isFinite(value) || value < lo || value > hi || (integer && !Number.isInteger(value))) {
          throw new RangeError(`${name} must be a number in [${lo}, ${hi}], got ${value}`);
        }
      };
      check("sigma", p.sigma, d.sigma_range, false);
      check("tau", p.tau, d.temperature_range, false);
      check("n", p.n, d.n_range, true);
      this.state = { sigma: p.sigma, tau: p.tau, n: p.n };
      this.syncControls();
      this.redraw();
      return this.params;
    }

    sliderToTau(v) {
      const { lo, hi, steps } = this.logTau;
      const [tLo, tHi] = this.data.temperature_range;
      return v <= 0 ? tLo : v >= steps ? tHi : 10 ** (lo + ((hi - lo) * v) / steps);
    }

    tauToSlider(tau) {
      const { lo, hi, steps } = this.logTau;
      return Math.round(((Math.log10(tau) - lo) / (hi - lo)) * steps);
    }

    onSlider(key) {
      const value = Number(this.inputs[key].value);
      this.state[key] = key === "tau" ? this.sliderToTau(value) : value;
      this.bestOutput.textContent = "";
      this.syncReadouts();
      this.schedule();
    }

    syncControls() {
      this.inputs.sigma.value = String(this.state.sigma);
      this.inputs.tau.value = String(this.tauToSlider(this.state.tau));
      this.inputs.n.value = String(this.state.n);
      this.syncReadouts();
    }

    syncReadouts() {
      const text = { sigma: this.state.sigma.toFixed(2), tau: formatTau(this.state.tau), n: String(this.state.n) };
      const spoken = { ...text, tau: spokenTau(this.state.tau) };
      for (const key of ["sigma", "tau", "n"]) {
        this.outputs[key].textContent = text[key];
        this.inputs[key].setAttribute("aria-valuetext", spoken[key]);
      }
    }

    // ---- computing and drawing

    compute() {
      const { sigma, tau, n } = this.state;
      const sig = noisySine(n, sigma, this.data.periods, this.z);
      const { kern, reach } = kernelByDistance(n, sig.step, tau, 0);
      const { output, rowSum } = smooth(sig.noisy, kern, reach, false);
      this.result = { ...sig, kern, reach, output, rowSum, n };
    }

    schedule() {
      if (this.pendingSince === null) this.pendingSince = performance.now();
      if (this.frame) return;
      this.frame = requestAnimationFrame(() => { this.frame = 0; this.redraw(); });
    }

    redraw() {
      if (this.frame) { cancelAnimationFrame(this.frame); this.frame = 0; }
      this.start();
      const t0 = performance.now();
      this.compute();
      const t1 = performance.now();
      this.draw();
      const t2 = performance.now();
      const since = this.pendingSince === null ? t0 : this.pendingSince;
      this.pendingSince = null;
      this.timing = { computeMs: t1 - t0, drawMs: t2 - t1, latencyMs: t2 - since };
      this.root.dispatchEvent(new CustomEvent("attention-explorer:redraw", { detail: { ...this.timing } }));
      return t2 - t0;
    }

    resize() {
      const dpr = window.devicePixelRatio || 1;
      for (const canvas of [this.canvasSignal, this.canvasMatrix]) {
        const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
        const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
        if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
      }
    }

    colors() {
      const style = getComputedStyle(this.root);
      const get = (name) => style.getPropertyValue(name).trim();
      return {
        fg: get("--ae-fg"), grid: get("--ae-grid"), clean: get("--ae-clean"),
        noisy: get("--ae-noisy"), output: get("--ae-output"), font: style.fontFamily,
      };
    }

    draw() {
      const colors = this.colors();
      this.drawSignal(colors);
      this.drawMatrix();
    }

    drawSignal(colors) {
      const canvas = this.canvasSignal;
      const ctx = canvas.getContext("2d");
      const { positions, clean, noisy, output, n } = this.result;
      const dpr = window.devicePixelRatio || 1;
      const W = canvas.width, H = canvas.height;
      const pad = { l: 34 * dpr, r: 8 * dpr, t: 8 * dpr, b: 24 * dpr };
      let ymax = 1.2;
      for (let i = 0; i < n; i++) ymax = Math.max(ymax, Math.abs(noisy[i]));
      ymax *= 1.05;
      const X = (p) => pad.l + p * (W - pad.l - pad.r);
      const Y = (v) => pad.t + ((ymax - v) / (2 * ymax)) * (H - pad.t - pad.b);
      ctx.clearRect(0, 0, W, H);
      // axes, ticks, labels
      ctx.font = `${11 * dpr}px ${colors.font}`;
      ctx.fillStyle = colors.fg;
      ctx.strokeStyle = colors.grid;
      ctx.lineWidth = dpr;
      ctx.setLineDash([]);
      ctx.beginPath();
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      for (const t of niceTicks(ymax)) {
        ctx.moveTo(pad.l, Y(t)); ctx.lineTo(W - pad.r, Y(t));
        ctx.fillText(String(t), pad.l - 4 * dpr, Y(t));
      }
      ctx.textAlign = "center"; ctx.textBaseline = "top";
      for (const t of [0, 0.25, 0.5, 0.75, 1]) {
        ctx.moveTo(X(t), pad.t); ctx.lineTo(X(t), H - pad.b);
        ctx.fillText(String(t), X(t), H - pad.b + 4 * dpr);
      }
      ctx.stroke();
      // ground truth, dashed
      ctx.strokeStyle = colors.clean; ctx.lineWidth = 1.4 * dpr; ctx.setLineDash([5 * dpr, 4 * dpr]);
      ctx.beginPath();
      for (let i = 0; i < n; i++) (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(positions[i]), Y(clean[i]));
      ctx.stroke(); ctx.setLineDash([]);
      // noisy observations, dots
      const r = Math.max(1.2, Math.min(3, 300 / n)) * dpr;
      ctx.fillStyle = colors.noisy; ctx.globalAlpha = 0.6;
      ctx.beginPath();
      for (let i = 0; i < n; i++) {
        const x = X(positions[i]), y = Y(noisy[i]);
        ctx.moveTo(x + r, y); ctx.arc(x, y, r, 0, 2 * Math.PI);
      }
      ctx.fill(); ctx.globalAlpha = 1;
      // attention output, solid
      ctx.strokeStyle = colors.output; ctx.lineWidth = 2.2 * dpr;
      ctx.beginPath();
      for (let i = 0; i < n; i++) (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(positions[i]), Y(output[i]));
      ctx.stroke();
    }

    drawMatrix() {
      const canvas = this.canvasMatrix;
      const ctx = canvas.getContext("2d");
      const { kern, reach, rowSum, n } = this.result;
      const S = Math.min(canvas.width, canvas.height);
      if (!this.image || this.image.width !== S) this.image = ctx.createImageData(S, S);
      const pixels = new Uint32Array(this.image.data.buffer);
      // colour scale 0 .. the largest weight, the diagonal of the row with the least mass
      let vmax = 0;
      for (let i = 0; i < n; i++) vmax = Math.max(vmax, kern[0] / rowSum[i]);
      this.vmaxOutput.textContent = vmax.toPrecision(2);
      const cell = new Int32Array(S); // pixel -> token, nearest
      for (let s = 0; s < S; s++) cell[s] = Math.min(n - 1, Math.floor(((s + 0.5) * n) / S));
      const top = LUT.length - 1;
      for (let r = 0; r < S; r++) {
        const i = cell[r];
        const scale = top / (rowSum[i] * vmax);
        const base = r * S;
        for (let c = 0; c < S; c++) {
          const d = Math.abs(cell[c] - i);
          pixels[base + c] = LUT[d < reach ? Math.round(kern[d] * scale) : 0];
        }
      }
      ctx.putImageData(this.image, 0, 0);
    }

    // ---- the API

    series({ weights = true } = {}) {
      const { positions, clean, noisy, output, kern, reach, rowSum, n } = this.result;
      const out = {
        positions: Array.from(positions), clean: Array.from(clean),
        noisy: Array.from(noisy), output: Array.from(output),
      };
      if (weights) {
        out.weights = [];
        for (let i = 0; i < n; i++) {
          const row = new Array(n);
          for (let j = 0; j < n; j++) {
            const d = Math.abs(i - j);
            row[j] = d < reach ? kern[d] / rowSum[i] : 0;
          }
          out.weights.push(row);
        }
      }
      return out;
    }

    chooseTemperature({ apply = true } = {}) {
      const { noisy, step } = this.result;
      const choice = chooseTemperature(noisy, step, this.data.candidates, this.data.tie_tolerance);
      if (apply) {
        this.setParams({ tau: choice.tau });
        this.showBest(choice.tau);
      }
      return choice;
    }
  }

  /** The best-tau result: shown as written, announced (live region) in words. */
  Explorer.prototype.showBest = function (tau) {
    this.bestOutput.replaceChildren(
      el("span", { "aria-hidden": "true" }, [`τ = ${formatTau(tau)} (least leave-one-out error)`]),
      el("span", { class: "ae-visually-hidden" }, [`Best temperature: tau = ${spokenTau(tau)}, the least leave-one-out error`]),
    );
  };

  function api(explorer) {
    return Object.freeze({
      get params() { return explorer.params; },
      get timing() { return { ...explorer.timing }; },
      get data() { return explorer.data; },
      setParams: (p) => explorer.setParams(p),
      series: (opts) => { explorer.start(); return explorer.series(opts); },
      chooseTemperature: (opts) => { explorer.start(); return explorer.chooseTemperature(opts); },
      redraw: () => explorer.redraw(),
    });
  }

  function start() {
    for (const root of document.querySelectorAll("[data-attention-explorer]")) {
      if (!root.attentionExplorer) root.attentionExplorer = api(new Explorer(root));
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
