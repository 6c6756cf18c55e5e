/*
 * Attention explorers: the book's engineered attention heads, live in the page.
 *
 * Plain JavaScript, no dependencies, nothing fetched: every element with the
 * attribute `data-attention-explorer` holds a <script type="application/json">
 * written at build time by selfattention.interactive.explorer_data (settings,
 * slider ranges, the unit noise draws z of the book's seed, and for the
 * smoothing explorer the leave-one-out candidate temperatures) and a static
 * fallback figure in a <noscript>; this script builds the canvases and the
 * sliders in its place at once, and computes and draws when the explorer
 * comes near the viewport (nothing to do on a page load that starts far
 * above it). Two kinds share the math, the sliders and the drawing below:
 *
 * - the smoothing explorer (data without "layer"): one head, its output and
 *   its attention matrix, and a "best tau" button;
 * - the derivative layer (data.layer === "derivative"): two heads at offsets
 *   +delta and -delta, their outputs, their two bands in one heat map, and the
 *   layer's output (head_+ - head_-) / (2 delta), an estimate of the slope;
 * - the induction circuit (data.layer === "induction", chapter 12): the
 *   hand-built previous-token head and induction head on letters the reader
 *   types, both layers' attention and the predicted next letters, a switch
 *   that knocks out the first head and a slider for both heads' margin
 *   (runCircuit() below; data from selfattention.interactive.circuit_data).
 *
 * The math, in the package's words (selfattention.noisy_sine, gaussian_head,
 * choose_temperature, multihead.derivative_layer):
 *   p_i   = i / (n - 1)                                positions
 *   y_i   = sin(2 pi f p_i) + sigma z_i                 the book's noisy sine
 *   w_ij  = exp(-(p_i + delta - p_j)^2 / tau) / sum_l exp(-(p_i + delta - p_l)^2 / tau)
 *   out_i = sum_j w_ij y_j
 * On the uniform grid the kernel depends on d = j - i only, so it is computed
 * once per difference (at most 2n - 1 exponentials, not n^2), shifted by the
 * largest score there is, as the package's max-subtracted softmax shifts
 * each row by its own (see band()).
 * "Best tau" is leave-one-out cross-validation with the diagonal masked, as
 * selfattention.choose_temperature: the candidate with the least mean
 * squared error of predicting each y_i from all the other samples; of the
 * candidates within a relative `tie_tolerance` of the least (scores that
 * differ only by rounding), the largest, as selfattention.kernel.pick_temperature.
 *
 * JavaScript API, on the element (tests and benchmarks use it):
 *   el.attentionExplorer.params            -> {sigma, tau, n} (and delta for the layer): a copy
 *   el.attentionExplorer.setParams({...})
 *        set any of them (a RangeError if outside the slider ranges),
 *        move the sliders, redraw at once; returns the new params
 *   el.attentionExplorer.pending           -> true while a change waits for its coalesced redraw
 *   el.attentionExplorer.series({weights = true} = {})
 *        smoothing: {positions, clean, noisy, output, weights}
 *        layer: {positions, clean, noisy, slope, output, heads: [{output, weights}, {output, weights}]}
 *        plain arrays, weights as n rows of n (omitted with {weights: false})
 *   el.attentionExplorer.chooseTemperature({apply = true} = {})   (smoothing only)
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
 *
 * The layout (stage() and keepPinned() below, window.AttentionExplorerLayout; described in the
 * module docstring of _ext/attention_explorer): the main picture on top, sticky below the page's
 * header, the controls and the other panels under it, so that a slider on screen has its picture in view.
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

  /**
   * Kernel entries below CUT times the least largest entry of a row are left out of a band. Every
   * row holds the key at d = 0 (or, masked, one at d = +-1), so that least largest entry is at least
   * the kernel's entry there; with at most n - 1 < 2^10 entries dropped, a row loses less than 2^-50
   * (1e-15) of its sum, far below the browser tests' tolerances. It spares the products of far keys
   * that would add nothing: most of them, at the temperatures a reader smooths with.
   */
  const CUT = 2 ** -60;

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
   * The band of the engineered head at offset `delta` on the grid of n points `step` apart:
   * the kernel exp(-u_d^2 / tau - shift), u_d = d step - delta, for each difference d = j - i,
   * with shift = -u_*^2 / tau, u_* the u of least size (over d != 0 with `skipSelf`: the
   * leave-one-out mask), so that the largest entry is 1, as the package's max-subtracted softmax
   * makes it; the entries too small to matter are cut off (d in [lo, hi], see CUT). A row whose
   * best key i + d_* lies off the grid (a head with an offset, near an end) has a smaller largest
   * entry, exp(-delta^2 / tau) at
   * least, which the sliders keep far above underflow (OFFSET_RANGE and LAYER_TEMPERATURE_RANGE of
   * selfattention.defaults): normalised by its row's sum, it gives the package's weights all the same.
   */
  function band(n, step, tau, delta, skipSelf) {
    const u = (d) => d * step - delta;
    const candidates = [];
    const d0 = Math.max(-(n - 1), Math.min(n - 1, Math.round(delta / step)));
    for (const d of [d0 - 1, d0, d0 + 1]) {
      if (d >= -(n - 1) && d <= n - 1 && !(skipSelf && d === 0)) candidates.push(d);
    }
    const top = Math.min(...candidates.map((d) => u(d) * u(d)));
    const best = candidates.filter((d) => u(d) * u(d) === top); // one difference, or two that tie
    const shift = -top / tau;
    const floor = CUT * (skipSelf ? 1 : Math.exp(-(delta * delta) / tau - shift)); // CUT x the entry at d = 0
    const kern = new Float64Array(2 * n - 1); // kern[d + n - 1]
    let lo = best[0], hi = best[best.length - 1];
    for (let d = best[0]; d <= n - 1; d++) {
      const v = Math.exp(-(u(d) * u(d)) / tau - shift);
      if (v < floor && d > best[best.length - 1]) break; // the rest are smaller still
      kern[d + n - 1] = v;
      hi = d;
    }
    for (let d = best[0] - 1; d >= -(n - 1); d--) {
      const v = Math.exp(-(u(d) * u(d)) / tau - shift);
      if (v < floor) break;
      kern[d + n - 1] = v;
      lo = d;
    }
    if (skipSelf) kern[n - 1] = 0;
    return { n, kern, lo, hi };
  }

  /** Row i's unnormalised weight of key j, from band(). */
  function rawWeight(b, i, j) {
    const d = j - i;
    return d >= b.lo && d <= b.hi ? b.kern[d + b.n - 1] : 0;
  }

  /** The head's output (n,) on the values y and its row sums (n,): w_ij = rawWeight(i, j) / rowSum_i. */
  function smooth(y, b) {
    const n = y.length;
    const output = new Float64Array(n);
    const rowSum = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let num = 0, den = 0;
      for (let j = Math.max(0, i + b.lo), end = Math.min(n - 1, i + b.hi); j <= end; j++) {
        const k = b.kern[j - i + n - 1];
        num += k * y[j]; den += k;
      }
      output[i] = num / den;
      rowSum[i] = den;
    }
    return { output, rowSum };
  }

  /** The weights as n rows of n, for the API. */
  function weightRows(b, rowSum) {
    const rows = [];
    for (let i = 0; i < b.n; i++) {
      const row = new Array(b.n);
      for (let j = 0; j < b.n; j++) row[j] = rawWeight(b, i, j) / rowSum[i];
      rows.push(row);
    }
    return rows;
  }

  /** Leave-one-out choice of tau among `candidates`: on ties within `tolerance`, the largest tau. */
  function chooseTemperature(y, step, candidates, tolerance) {
    const n = y.length;
    const scores = new Array(candidates.length);
    for (let c = 0; c < candidates.length; c++) {
      const { output } = smooth(y, band(n, step, candidates[c], 0, true));
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
    const step = limit > 8 ? 4 : limit > 4 ? 2 : limit > 2 ? 1 : 0.5;
    const ticks = [];
    for (let t = -Math.floor(limit / step) * step; t <= limit + 1e-9; t += step) ticks.push(t);
    return ticks;
  }

  // ---------------------------------------------------------------- the layout (reusable)

  /**
   * The explorers' layout, for every explorer of the book (see the module docstring of
   * _ext/attention_explorer for the CSS classes): the main picture stays in view while a slider moves.
   *
   *   stage({main, side}) -> <div class="ae-stage"><div class="ae-main">...main</div>
   *                                                  <div class="ae-side">...side</div></div>
   *     main: the picture(s) a slider changes (figures .ae-panel); side: the controls (.ae-controls),
   *     then any other panel. The main picture is sticky: it stays just below the page's sticky
   *     header while the side, below it, scrolls. At least 36rem wide (a desktop's column) the
   *     stylesheet sets the main panels side by side, and the controls beside the other panels.
   *   keepPinned(stage) keeps the stage's CSS variables current: --ae-sticky-top, the bottom of the
   *     theme's sticky header (0 without one), and --ae-main-height, the main picture's height, from
   *     which the stylesheet sets the controls' scroll-margin-top, so that a control the keyboard
   *     focuses is scrolled into view below the pinned picture, not under it.
   * Both are on window.AttentionExplorerLayout, for an explorer written in another script.
   */
  function stage({ main, side }) {
    return el("div", { class: "ae-stage" }, [
      el("div", { class: "ae-main" }, main),
      el("div", { class: "ae-side" }, side),
    ]);
  }

  /** The bottom of the page's sticky header when it is stuck (px), 0 if it has none. */
  function stickyHeaderBottom() {
    const header = document.querySelector(".bd-header-article");
    if (!header) return 0;
    const style = getComputedStyle(header);
    if (style.position !== "sticky" && style.position !== "fixed") return 0;
    return (parseFloat(style.top) || 0) + header.getBoundingClientRect().height;
  }

  function keepPinned(stageEl) {
    const main = stageEl.querySelector(".ae-main");
    const update = () => {
      stageEl.style.setProperty("--ae-sticky-top", `${Math.round(stickyHeaderBottom())}px`);
      stageEl.style.setProperty("--ae-main-height", `${Math.ceil(main.getBoundingClientRect().height)}px`);
    };
    // Measured when the browser lays the stage out (a ResizeObserver's first call), not now: far below
    // the view, its section is not rendered (content-visibility), and measuring would lay it out.
    const observer = new ResizeObserver(update);
    observer.observe(main);
    const header = document.querySelector(".bd-header-article");
    if (header) observer.observe(header);
    return update;
  }

  window.AttentionExplorerLayout = Object.freeze({ stage, keepPinned });

  // ---------------------------------------------------------------- drawing

  /**
   * A panel of curves against position on [0, 1]: axes, then `dots` ({ys, color}) and `lines`
   * ({ys, color, width, dash}) in that order; the y range is +-ymax.
   */
  function drawCurves(canvas, colors, positions, ymax, { dots = [], lines = [] }) {
    const ctx = canvas.getContext("2d");
    const n = positions.length;
    const dpr = window.devicePixelRatio || 1;
    const W = canvas.width, H = canvas.height;
    const pad = { l: 34 * dpr, r: 8 * dpr, t: 8 * dpr, b: 24 * dpr };
    const X = (p) => pad.l + p * (W - pad.l - pad.r);
    const Y = (v) => pad.t + ((ymax - v) / (2 * ymax)) * (H - pad.t - pad.b);
    ctx.clearRect(0, 0, W, H);
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
    const r = Math.max(1.2, Math.min(3, 300 / n)) * dpr;
    for (const { ys, color } of dots) {
      ctx.fillStyle = color; ctx.globalAlpha = 0.6;
      ctx.beginPath();
      for (let i = 0; i < n; i++) {
        const x = X(positions[i]), y = Y(ys[i]);
        ctx.moveTo(x + r, y); ctx.arc(x, y, r, 0, 2 * Math.PI);
      }
      ctx.fill(); ctx.globalAlpha = 1;
    }
    for (const { ys, color, width, dash } of lines) {
      ctx.strokeStyle = color; ctx.lineWidth = width * dpr; ctx.setLineDash(dash ? dash.map((v) => v * dpr) : []);
      ctx.beginPath();
      for (let i = 0; i < n; i++) (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(positions[i]), Y(ys[i]));
      ctx.stroke();
    }
    ctx.setLineDash([]);
  }

  /** The largest size of the values, times 1.05, at least `floor`: a symmetric y range. */
  function yLimit(floor, ...series) {
    let ymax = floor;
    for (const ys of series) for (let i = 0; i < ys.length; i++) ymax = Math.max(ymax, Math.abs(ys[i]));
    return ymax * 1.05;
  }

  /**
   * A heat map of n x n `weight(i, j)` on a square canvas, pixel -> nearest token, viridis
   * from 0 to `vmax` (when null, the largest value drawn); the image buffer is kept on
   * `holder.image` between redraws. Returns vmax.
   */
  function drawHeat(canvas, holder, n, weight, vmax) {
    const ctx = canvas.getContext("2d");
    const S = Math.min(canvas.width, canvas.height);
    if (!holder.image || holder.image.width !== S) {
      holder.image = ctx.createImageData(S, S);
      holder.values = new Float64Array(S * S);
    }
    const pixels = new Uint32Array(holder.image.data.buffer);
    const values = holder.values;
    const cell = new Int32Array(S); // pixel -> token, nearest
    for (let s = 0; s < S; s++) cell[s] = Math.min(n - 1, Math.floor(((s + 0.5) * n) / S));
    let top = 0;
    for (let r = 0; r < S; r++) {
      const i = cell[r], base = r * S;
      for (let c = 0; c < S; c++) { const v = weight(i, cell[c]); values[base + c] = v; if (v > top) top = v; }
    }
    const limit = vmax === null ? top : vmax;
    const scale = (LUT.length - 1) / limit;
    for (let k = 0; k < S * S; k++) pixels[k] = LUT[Math.min(LUT.length - 1, Math.round(values[k] * scale))];
    ctx.putImageData(holder.image, 0, 0);
    return limit;
  }

  function matrixCaption(vmaxOutput, words) {
    const scale = el("div", { class: "ae-scale", "aria-hidden": "true" }, [
      el("span", {}, ["0"]), el("span", { class: "ae-scale-bar", style: `background: linear-gradient(to right, ${VIRIDIS_STOPS.join(", ")})` }),
      vmaxOutput,
    ]);
    return el("figcaption", {}, [scale, ...words, "row i = query p", el("sub", {}, ["i"]),
      " (0 at the top), column j = key p", el("sub", {}, ["j"]), " (0 at the left)"]);
  }

  /** A legend of [key, text] entries; each key stays on the line of its text. */
  function legend(entries) {
    const items = entries.map(([key, text]) => el("span", { class: "ae-legend-item" }, [
      el("span", { class: `ae-key ae-key-${key}` }), text,
    ]));
    return el("figcaption", { class: "ae-legend" }, items.flatMap((item) => [item, " "]));
  }

  // ---------------------------------------------------------------- the explorers

  /**
   * What both explorers share: the state and its sliders, the coalesced redraws, the canvases'
   * sizes and colours, the layout (stage()). A subclass gives sliders() (the specs below), buildPanels()
   * (-> {main: [figures], more: [figures], after: [figures]}: the main picture, panels that go below or beside
   * the controls, and panels that no slider moves, which go after the stage, where the pinned picture has
   * let go and cannot cover them), compute(),
   * draw() and series().
   */
  class Explorer {
    constructor(root, data) {
      this.root = root;
      this.data = data;
      this.z = Float64Array.from(this.data.noise || []);  // the induction circuit has no noise
      this.specs = this.sliders();
      this.state = Object.fromEntries(this.specs.map((s) => [s.key, s.start]));
      this.timing = { computeMs: 0, drawMs: 0, latencyMs: 0 };
      this.pendingSince = null;
      this.frame = 0;
      this.started = false;
      this.holder = {};
      this.build();
      this.syncControls();
      whenNearView(root, () => this.start());
    }

    /** A log-scale temperature slider over `range`, 100 steps per decade. */
    tauSpec(range, start) {
      const [tLo, tHi] = range;
      const lo = Math.log10(tLo), hi = Math.log10(tHi), steps = Math.round((hi - lo) * 100);
      return {
        key: "tau", label: "Temperature τ (log scale)", range, start, min: 0, max: steps, step: 1,
        toValue: (v) => (v <= 0 ? tLo : v >= steps ? tHi : 10 ** (lo + ((hi - lo) * v) / steps)),
        toSlider: (tau) => Math.round(((Math.log10(tau) - lo) / (hi - lo)) * steps),
        text: formatTau, spoken: spokenTau,
      };
    }

    /** A linear slider: the value is the slider's. */
    linearSpec(key, label, range, start, step, text, integer) {
      return { key, label, range, start, min: range[0], max: range[1], step, integer,
        toValue: (v) => v, toSlider: (v) => v, text, spoken: text };
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
      const { main, more = [], after = [] } = this.buildPanels();
      this.inputs = {};
      this.outputs = {};
      const rows = this.specs.map((spec) => {
        const input = el("input", { type: "range", id: `${id}-${spec.key}`, min: String(spec.min), max: String(spec.max), step: String(spec.step) });
        // For the eye: a screen reader announces the slider's own aria-valuetext on each change, once.
        const output = el("output", { for: input.id, "aria-hidden": "true", class: "ae-value" });
        input.addEventListener("input", () => this.onSlider(spec.key));
        this.inputs[spec.key] = input;
        this.outputs[spec.key] = output;
        return el("div", { class: "ae-control" }, [el("label", { for: input.id }, [spec.label]), input, output]);
      });
      const controls = el("div", { class: "ae-controls" }, [...rows, ...this.extraControls()]);
      const staged = stage({ main, side: [controls, ...more] });
      this.panels = after.length ? el("div", { class: "ae-body" }, [staged, el("div", { class: "ae-after" }, after)]) : staged;
      const fallback = this.root.querySelector(".attention-explorer-fallback");
      if (fallback) fallback.remove();
      this.root.append(this.panels);
      this.root.classList.add("ae-live");
      keepPinned(staged);
    }

    extraControls() { return []; }

    // ---- state

    get params() { return { ...this.state }; }

    setParams(params) {
      const p = { ...this.state, ...params };
      for (const { key, range: [lo, hi], integer } of this.specs) {
        const value = p[key];
        if (typeof value !== "number" || !Number.isFinite(value) || value < lo || value > hi || (integer && !Number.isInteger(value))) {
          throw new RangeError(`${key} must be a number in [${lo}, ${hi}], got ${value}`);
        }
      }
      this.state = Object.fromEntries(this.specs.map(({ key }) => [key, p[key]]));
      this.syncControls();
      this.redraw();
      return this.params;
    }

    onSlider(key) {
      const spec = this.specs.find((s) => s.key === key);
      this.state[key] = spec.toValue(Number(this.inputs[key].value));
      this.onChange();
      this.syncReadouts();
      this.schedule();
    }

    onChange() {}

    syncControls() {
      for (const spec of this.specs) this.inputs[spec.key].value = String(spec.toSlider(this.state[spec.key]));
      this.syncReadouts();
    }

    syncReadouts() {
      for (const spec of this.specs) {
        this.outputs[spec.key].textContent = spec.text(this.state[spec.key]);
        this.inputs[spec.key].setAttribute("aria-valuetext", spec.spoken(this.state[spec.key]));
      }
    }

    // ---- computing and drawing

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
      for (const canvas of this.panels.querySelectorAll("canvas")) {
        const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
        const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
        if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
      }
    }

    colors() {
      const style = getComputedStyle(this.root);
      const get = (name) => style.getPropertyValue(name).trim();
      return {
        fg: get("--ae-fg"), grid: get("--ae-grid"), clean: get("--ae-clean"), noisy: get("--ae-noisy"),
        output: get("--ae-output"), ahead: get("--ae-ahead"), behind: get("--ae-behind"), font: style.fontFamily,
      };
    }

    signalCanvas(label) {
      return el("canvas", { class: "ae-canvas-signal", role: "img", "aria-label": label });
    }

    matrixCanvas(label) {
      return el("canvas", { class: "ae-canvas-matrix", role: "img", "aria-label": label });
    }
  }

  /** The smoothing explorer: one head at offset 0. */
  class SmoothingExplorer extends Explorer {
    sliders() {
      const d = this.data;
      return [
        this.linearSpec("sigma", "Noise σ", d.sigma_range, this.data.sigma, 0.01, (v) => v.toFixed(2), false),
        this.tauSpec(d.temperature_range, this.data.temperature),
        this.linearSpec("n", "Samples N", d.n_range, this.data.n, 1, String, true),
      ];
    }

    buildPanels() {
      this.canvasSignal = this.signalCanvas(
        "Signal panel: the ground-truth sine (dashed), the noisy observations (dots) and the attention output (solid line), against position from 0 to 1.");
      this.canvasMatrix = this.matrixCanvas(
        "Attention matrix heat map: row i, from top to bottom, shows how much token i attends to every token j, from left to right; brighter is more weight.");
      this.vmaxOutput = el("span", { class: "ae-scale-max" });
      return {
        main: [el("figure", { class: "ae-panel ae-panel-signal" }, [this.canvasSignal,
          legend([["clean", "ground truth"], ["noisy", "noisy input"], ["output", "attention output"]])])],
        more: [el("figure", { class: "ae-panel ae-panel-matrix" }, [this.canvasMatrix,
          matrixCaption(this.vmaxOutput, ["Attention weights: "])])],
      };
    }

    extraControls() {
      this.bestButton = el("button", { type: "button", class: "ae-best" }, ["Best τ (leave-one-out)"]);
      this.bestOutput = el("output", { "aria-live": "polite", class: "ae-best-value" });
      this.bestButton.addEventListener("click", () => this.chooseTemperature());
      return [el("div", { class: "ae-control ae-control-best" }, [this.bestButton, this.bestOutput])];
    }

    onChange() { this.bestOutput.textContent = ""; }

    compute() {
      const { sigma, tau, n } = this.state;
      const sig = noisySine(n, sigma, this.data.periods, this.z);
      const b = band(n, sig.step, tau, 0, false);
      const { output, rowSum } = smooth(sig.noisy, b);
      this.result = { ...sig, band: b, output, rowSum, n };
    }

    draw() {
      const colors = this.colors();
      const { positions, clean, noisy, output, band: b, rowSum, n } = this.result;
      drawCurves(this.canvasSignal, colors, positions, yLimit(1.2, noisy), {
        dots: [{ ys: noisy, color: colors.noisy }],
        lines: [{ ys: clean, color: colors.clean, width: 1.4, dash: [5, 4] }, { ys: output, color: colors.output, width: 2.2 }],
      });
      // colour scale 0 .. the largest weight, the diagonal of the row with the least mass
      let vmax = 0;
      for (let i = 0; i < n; i++) vmax = Math.max(vmax, b.kern[n - 1] / rowSum[i]);
      this.vmaxOutput.textContent = vmax.toPrecision(2);
      drawHeat(this.canvasMatrix, this.holder, n, (i, j) => rawWeight(b, i, j) / rowSum[i], vmax);
    }

    series({ weights = true } = {}) {
      const { positions, clean, noisy, output, band: b, rowSum } = this.result;
      const out = {
        positions: Array.from(positions), clean: Array.from(clean),
        noisy: Array.from(noisy), output: Array.from(output),
      };
      if (weights) out.weights = weightRows(b, rowSum);
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

    /** The best-tau result: shown as written, announced (live region) in words. */
    showBest(tau) {
      this.bestOutput.replaceChildren(
        el("span", { "aria-hidden": "true" }, [`τ = ${formatTau(tau)} (least leave-one-out error)`]),
        el("span", { class: "ae-visually-hidden" }, [`Best temperature: tau = ${spokenTau(tau)}, the least leave-one-out error`]),
      );
    }
  }

  /** The derivative layer: heads at offsets +delta and -delta, W_O = [1, -1] / (2 delta). */
  class DerivativeExplorer extends Explorer {
    sliders() {
      const d = this.data;
      return [
        this.linearSpec("delta", "Offset δ", d.offset_range, this.data.offset, this.data.offset_step, (v) => v.toFixed(3), false),
        this.tauSpec(d.temperature_range, this.data.temperature),
        this.linearSpec("sigma", "Noise σ", d.sigma_range, this.data.sigma, 0.01, (v) => v.toFixed(2), false),
        this.linearSpec("n", "Samples N", d.n_range, this.data.n, 1, String, true),
      ];
    }

    buildPanels() {
      this.canvasSignal = this.signalCanvas(
        "Signal panel: the ground-truth sine (dashed), the noisy observations (dots), and the outputs of the head that looks ahead and of the head that looks behind (solid lines), against position from 0 to 1.");
      this.canvasMatrix = this.matrixCanvas(
        "Heat map of the two heads' weights, averaged: row i, from top to bottom, is token i's query; the band right of the diagonal is the head that looks ahead, the band left of it the head that looks behind; brighter is more weight.");
      this.canvasSlope = this.signalCanvas(
        "Slope panel: the true slope of the sine (dashed) and the layer's estimate of it (solid line), against position from 0 to 1.");
      this.canvasSlope.classList.add("ae-canvas-slope");
      this.vmaxOutput = el("span", { class: "ae-scale-max" });
      return {
        main: [
          el("figure", { class: "ae-panel ae-panel-signal" }, [this.canvasSignal,
            legend([["clean", "ground truth"], ["noisy", "noisy input"], ["ahead", "head at +δ"], ["behind", "head at −δ"]])]),
          el("figure", { class: "ae-panel ae-panel-slope" }, [this.canvasSlope,
            legend([["clean", "true slope f′(p)"], ["output", "two heads: (head at +δ − head at −δ) / 2δ"]])]),
        ],
        more: [el("figure", { class: "ae-panel ae-panel-matrix" }, [this.canvasMatrix,
          matrixCaption(this.vmaxOutput, ["The two heads' weights, averaged: "])])],
      };
    }

    compute() {
      const { sigma, tau, delta, n } = this.state;
      const sig = noisySine(n, sigma, this.data.periods, this.z);
      const heads = [delta, -delta].map((offset) => {
        const b = band(n, sig.step, tau, offset, false);
        return { band: b, ...smooth(sig.noisy, b) };
      });
      const output = new Float64Array(n);
      const slope = new Float64Array(n);
      const omega = 2 * Math.PI * this.data.periods;
      const w = 1 / (2 * delta); // W_O = [w, -w]
      for (let i = 0; i < n; i++) {
        output[i] = heads[0].output[i] * w + heads[1].output[i] * -w; // Concat(heads) W_O
        slope[i] = omega * Math.cos(omega * sig.positions[i]);
      }
      this.result = { ...sig, heads, output, slope, n };
    }

    draw() {
      const colors = this.colors();
      const { positions, clean, noisy, heads, output, slope, n } = this.result;
      drawCurves(this.canvasSignal, colors, positions, yLimit(1.2, noisy), {
        dots: [{ ys: noisy, color: colors.noisy }],
        lines: [{ ys: clean, color: colors.clean, width: 1.4, dash: [5, 4] },
          { ys: heads[0].output, color: colors.ahead, width: 2 }, { ys: heads[1].output, color: colors.behind, width: 2 }],
      });
      drawCurves(this.canvasSlope, colors, positions, yLimit(7, slope, output), {
        lines: [{ ys: slope, color: colors.clean, width: 1.4, dash: [5, 4] }, { ys: output, color: colors.output, width: 2.2 }],
      });
      const [a, b] = heads;
      const weight = (i, j) => (rawWeight(a.band, i, j) / a.rowSum[i] + rawWeight(b.band, i, j) / b.rowSum[i]) / 2;
      this.vmaxOutput.textContent = drawHeat(this.canvasMatrix, this.holder, n, weight, null).toPrecision(2);
    }

    series({ weights = true } = {}) {
      const { positions, clean, noisy, heads, output, slope } = this.result;
      return {
        positions: Array.from(positions), clean: Array.from(clean), noisy: Array.from(noisy),
        slope: Array.from(slope), output: Array.from(output),
        heads: heads.map((h) => ({ output: Array.from(h.output), ...(weights ? { weights: weightRows(h.band, h.rowSum) } : {}) })),
      };
    }
  }

  /**
   * The hand-built induction circuit (selfattention.induction, via circuit_data.circuit_run) on token
   * ids 0..V-1: N = n + 1 rows, row 0 the start marker (no symbol), positions p_i = i / (N - 1) centred
   * on the middle of their range (numpy's linspace, the last exactly 1). Both heads are causal.
   *   layer 1: q_i = [sqrt2 (p_i + delta), -2 delta p_i - p_i^2 - delta^2, 1], k_j = [sqrt2 p_j, 1, -p_j^2]
   *            (gaussian_head_weights), scores q_i . k_j / tau1, delta = -1/(N-1), tau1 = delta^2 / margin;
   *            its output sum_j a_ij o_j is written in the stream's "previous" subspace (unless knocked out)
   *   layer 2: scores o_i . previous_j / tau2, tau2 = 1 / margin; its output sum_j a_ij o_j is the
   *            prediction: row i's scores of the symbol after it, predicted = the first largest.
   * Returns {weights: [A1, A2] (Float64Array N*N each, row-major), scores (Float64Array N*V), predicted}.
   */
  function runCircuit(ids, margin, knocked, V) {
    const N = ids.length + 1, step = 1 / (N - 1), r2 = Math.SQRT2;
    const raw = new Float64Array(N);
    for (let i = 0; i < N; i++) raw[i] = i * step;
    raw[N - 1] = 1;
    const mid = raw[0] / 2 + raw[N - 1] / 2;
    const p = raw.map((x) => x - mid);
    const sym = (j) => (j === 0 ? -1 : ids[j - 1]);  // the symbol of row j; -1: the start marker
    const delta = -step, tau1 = (step * step) / margin, tau2 = 1 / margin;
    const q = [], k = [];
    for (let i = 0; i < N; i++) {
      q.push([p[i] * r2 + r2 * delta, p[i] * (-2 * delta) + p[i] * p[i] * -1 + -(delta * delta), 1]);
      k.push([p[i] * r2, 1, -(p[i] * p[i])]);
    }
    const A1 = causalSoftmax(N, (i, j) => (q[i][0] * k[j][0] + q[i][1] * k[j][1] + q[i][2] * k[j][2]) / tau1);
    const previous = averageSymbols(A1, N, V, sym);  // N * V
    if (knocked) previous.fill(0);
    const A2 = causalSoftmax(N, (i, j) => (sym(i) < 0 ? 0 : previous[j * V + sym(i)]) / tau2);
    const scores = averageSymbols(A2, N, V, sym);
    const predicted = new Int32Array(N);
    for (let i = 0; i < N; i++) {
      let best = 0;
      for (let v = 1; v < V; v++) if (scores[i * V + v] > scores[i * V + best]) best = v;
      predicted[i] = best;
    }
    return { weights: [A1, A2], scores, predicted, N };
  }

  /** Row-wise softmax of score(i, j) over the keys j <= i (the causal mask), shifted by each row's largest. */
  function causalSoftmax(N, score) {
    const A = new Float64Array(N * N);
    for (let i = 0; i < N; i++) {
      let top = -Infinity;
      for (let j = 0; j <= i; j++) { const s = score(i, j); A[i * N + j] = s; if (s > top) top = s; }
      let total = 0;
      for (let j = 0; j <= i; j++) { const e = Math.exp(A[i * N + j] - top); A[i * N + j] = e; total += e; }
      for (let j = 0; j <= i; j++) A[i * N + j] /= total;
    }
    return A;
  }

  /** sum_j a_ij o_j: for each row, the weight its keys of each symbol get (the start marker has none). */
  function averageSymbols(A, N, V, sym) {
    const out = new Float64Array(N * V);
    for (let i = 0; i < N; i++) {
      for (let j = 1; j <= i; j++) out[i * V + sym(j)] += A[i * N + j];
    }
    return out;
  }

  /** The induction circuit: two layers' attention on the reader's letters, the knock-out, the margin. */
  class InductionExplorer extends Explorer {
    sliders() {
      const d = this.data;
      return [this.linearSpec("margin", "Sharpness: margin of both heads", d.margin_range, this.data.margin,
        this.data.margin_step,
        (v) => v.toFixed(1), false)];
    }

    buildPanels() {
      this.text = this.data.text;
      this.knocked = false;
      this.canvases = ["first", "second"].map((which) => this.matrixCanvas(
        `Heat map of the ${which} layer's attention: row i, from top to bottom, is the query of the i-th letter ` +
        "(the start marker first), column j the key; brighter is more weight. Point at a cell to read it."));
      this.holders = [{}, {}];
      this.axes = this.canvases.map(() => ({ top: el("div", { class: "ae-axis-top", "aria-hidden": "true" }),
        left: el("div", { class: "ae-axis-left", "aria-hidden": "true" }) }));
      this.titles = ["layer 1: previous token", "layer 2: induction"].map((t) => el("span", {}, [t]));
      this.layerPanels = this.canvases.map((canvas, k) => el("div", { class: "ae-circuit-layer" }, [
        el("div", { class: "ae-circuit-title" }, [this.titles[k]]),
        el("div", { class: "ae-heat" }, [
          el("div", { class: "ae-axis-name ae-axis-name-top", "aria-hidden": "true" }, ["key (column) →"]),
          el("div", { class: "ae-axis-name ae-axis-name-left", "aria-hidden": "true" }, ["query (row) →"]),
          this.axes[k].top, this.axes[k].left, canvas])]));
      this.readout = el("output", { class: "ae-circuit-readout", "aria-live": "polite" },
        ["Point at (or tap) a cell to read its weight."]);
      this.canvases.forEach((canvas, k) => {
        const read = (event) => this.readCell(k, event);
        canvas.addEventListener("pointermove", read);
        canvas.addEventListener("pointerdown", read);
      });
      this.sequenceGrid = el("div", { class: "ae-circuit-sequence" });
      const scale = el("div", { class: "ae-scale", "aria-hidden": "true" }, [el("span", {}, ["weight 0"]),
        el("span", { class: "ae-scale-bar", style: `background: linear-gradient(to right, ${VIRIDIS_STOPS.join(", ")})` }),
        el("span", {}, ["1"])]);
      this.staleNote = el("p", { class: "ae-stale-note", hidden: "" });
      this.spoken = el("output", { class: "ae-visually-hidden", "aria-live": "polite" });
      return {
        main: [el("figure", { class: "ae-panel ae-panel-circuit" }, [
          el("div", { class: "ae-circuit-pair" }, this.layerPanels), scale, this.readout,
          el("figcaption", {}, [this.sequenceGrid, this.staleNote, this.spoken])])],
      };
    }

    /** "layer 1: row 7 (b) → key 6 (a): 0.99" for the cell under the pointer of layer k's heat map. */
    readCell(k, event) {
      if (!this.result) return;
      const { N, weights } = this.result;
      const box = this.canvases[k].getBoundingClientRect();
      const i = Math.floor(((event.clientY - box.top) / box.height) * N);
      const j = Math.floor(((event.clientX - box.left) / box.width) * N);
      if (i < 0 || j < 0 || i >= N || j >= N) return;
      const rows = this.data.start + this.result.text;
      const w = weights[k][i * N + j];
      const note = k === 0 && this.knocked ? " (knocked out: not used)" : "";
      this.readout.textContent = `Layer ${k + 1}: row ${i} (${rows[i]}) → key ${j} (${rows[j]}): ` +
        `${w < 0.005 && w > 0 ? "< 0.01" : w.toFixed(2)}${note}`;
    }

    extraControls() {
      const id = this.root.id;
      this.textInput = el("input", { type: "text", id: `${id}-text`, value: this.data.text, autocomplete: "off",
        autocapitalize: "none", spellcheck: "false", maxlength: String(this.data.max_tokens) });
      this.textError = el("output", { class: "ae-circuit-error", "aria-live": "polite", for: this.textInput.id });
      this.textInput.addEventListener("input", () => this.onText());
      this.knockInput = el("input", { type: "checkbox", id: `${id}-knock` });
      this.knockInput.addEventListener("change", () => { this.knocked = this.knockInput.checked; this.schedule(); });
      return [
        el("div", { class: "ae-control ae-control-text" }, [
          el("label", { for: this.textInput.id }, [`Sequence (1 to ${this.data.max_tokens} letters a to z)`]),
          this.textInput, this.textError]),
        el("div", { class: "ae-control-switch" }, [this.knockInput,
          el("label", { for: this.knockInput.id }, ["Knock out layer 1 (its output left out of the stream)"])]),
      ];
    }

    /** The typed letters, lower-cased; anything else is refused by name and the picture keeps the last sequence. */
    onText() {
      const text = this.textInput.value.toLowerCase();
      const problem = this.textProblem(text);
      this.textError.textContent = problem || "";
      this.markStale(problem);
      if (problem) return;
      this.text = text;
      this.schedule();
    }

    /** Dims the picture while the field holds text it cannot show, and says what it shows instead. */
    markStale(problem) {
      this.panels.querySelector(".ae-main").classList.toggle("ae-stale", Boolean(problem));
      this.staleNote.hidden = !problem;
      this.staleNote.textContent = problem ? `Dimmed: the picture still shows the last valid sequence, "${this.text}".` : "";
    }

    textProblem(text) {
      if (typeof text !== "string" || text.length === 0) return "Type at least one letter.";
      if (text.length > this.data.max_tokens) return `At most ${this.data.max_tokens} letters.`;
      const bad = [...new Set([...text].filter((c) => !this.data.letters.includes(c)))];
      return bad.length ? `Only the letters a to z, not ${bad.map((c) => JSON.stringify(c)).join(", ")}.` : null;
    }

    get params() { return { ...this.state, text: this.text, knocked: this.knocked }; }

    setParams(params) {
      const { text = this.text, knocked = this.knocked, ...rest } = params;
      const problem = this.textProblem(text);
      if (problem) throw new RangeError(`text: ${problem} Got ${JSON.stringify(text)}`);
      if (typeof knocked !== "boolean") throw new RangeError(`knocked must be true or false, got ${knocked}`);
      this.text = text;
      this.knocked = knocked;
      this.textInput.value = text;
      this.textError.textContent = "";
      this.markStale(null);
      this.knockInput.checked = knocked;
      return super.setParams(rest);
    }

    compute() {
      const letters = this.data.letters;
      const ids = Int32Array.from(this.text, (c) => letters.indexOf(c));
      this.result = { ...runCircuit(ids, this.state.margin, this.knocked, letters.length), text: this.text };
    }

    draw() {
      const { weights, N, predicted, text } = this.result;
      weights.forEach((A, k) => drawHeat(this.canvases[k], this.holders[k], N, (i, j) => A[i * N + j], 1));
      const rows = [...(this.data.start + text)];
      this.axes.forEach(({ top, left }, k) => {
        // Letters on the axes while a cell is wide enough to hold one legibly; else the readout names it.
        const fits = this.canvases[k].clientWidth / N >= 9;
        for (const axis of [top, left]) {
          axis.replaceChildren(...(fits ? rows.map((c) => el("span", {}, [c])) : []));
          axis.style.setProperty("--ae-cells", String(N));
        }
      });
      const discarded = this.knocked;
      this.layerPanels[0].classList.toggle("ae-discarded", discarded);
      this.titles[0].textContent = discarded ? "layer 1: knocked out (output discarded)" : "layer 1: previous token";
      const letters = this.data.letters;
      const cells = (label, chars) => [el("span", { class: "ae-seq-label" }, [label]),
        el("output", { class: `ae-seq-letters ae-circuit-${label === "Rows" ? "rows" : "predicted"}` },
          chars.map((c) => el("span", {}, [c])))];
      const next = Array.from(predicted, (v) => letters[v]);
      this.sequenceGrid.replaceChildren(...cells("Rows", rows), ...cells("Next", next));
      const said = `Predicted next letters: ${next.join(" ")}.`;
      if (this.spoken.textContent !== said) this.spoken.textContent = said;
    }

    series({ weights = true } = {}) {
      const { weights: mats, scores, predicted, N, text } = this.result;
      const V = this.data.letters.length;
      const rows = (M, width) => Array.from({ length: N }, (_, i) => Array.from(M.subarray(i * width, (i + 1) * width)));
      return {
        text, predicted: Array.from(predicted), scores: rows(scores, V),
        ...(weights ? { weights: mats.map((A) => rows(A, N)) } : {}),
      };
    }
  }

  function api(explorer) {
    const methods = {
      ...(explorer.extraApi ? explorer.extraApi() : {}),
      get params() { return explorer.params; },
      get timing() { return { ...explorer.timing }; },
      get pending() { return explorer.pendingSince !== null; },
      get data() { return explorer.data; },
      setParams: (p) => explorer.setParams(p),
      series: (opts) => { explorer.start(); return explorer.series(opts); },
      redraw: () => explorer.redraw(),
    };
    if (explorer.chooseTemperature) {
      methods.chooseTemperature = (opts) => { explorer.start(); return explorer.chooseTemperature(opts); };
    }
    return Object.freeze(methods);
  }

  const KINDS = { derivative: DerivativeExplorer, induction: InductionExplorer };

  function start() {
    for (const root of document.querySelectorAll("[data-attention-explorer]")) {
      if (root.attentionExplorer) continue;
      const data = JSON.parse(root.querySelector("script.attention-explorer-data").textContent);
      const Kind = data.layer === undefined ? SmoothingExplorer : KINDS[data.layer];  // data.layer: the kind
      if (Kind) root.attentionExplorer = api(new Kind(root, data));  // else its script registers it, then starts
    }
  }

  /**
   * An explorer in a script of its own (the extension loads it after this one) registers its class
   * under its layer's name; the explorers of that kind start then (or when the page is parsed).
   */
  function registerKind(layer, Kind) {
    KINDS[layer] = Kind;
    if (document.readyState !== "loading") start();
  }

  /**
   * What an explorer written in another script shares with these (the cost explorer,
   * cost_explorer.js): the base class and its layout, the helpers that build and draw, the book's
   * noisy sine, and registerKind(). A subclass may add methods to its element's API with extraApi().
   */
  window.AttentionExplorerKit = Object.freeze({
    Explorer, el, drawCurves, yLimit, legend, noisySine, whenNearView, registerKind,
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
