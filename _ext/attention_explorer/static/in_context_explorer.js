/*
 * The in-context explorer of "Heads that learn while they read": a prompt of examples (p_j, s_j) that the
 * reader drags, and three learners' predictions for every query input p, computed in the reader's browser
 * with no live session (no Python).
 *
 * It is one kind of the book's explorers (data.layer === "in-context", written at build time by
 * selfattention.interactive.in_context_data.in_context_explorer_data): it uses the base class, the layout and the
 * sliders of attention_explorer.js, which the page loads first, through window.AttentionExplorerKit.
 *
 * The math, in the package's words (selfattention.in_context), each input written [p_j, 1]:
 *   softmax head  sum_j softmax_j(-(p - p_j)^2 / tau) s_j                  kernel_head
 *   one step      eta / N sum_j s_j (p_j p + 1)                           one_step_prediction
 *   least squares the line p phi_1 + phi_2 of least squared error            least_squares_prediction
 *                 (all inputs equal: the shortest phi, [p_1, 1] mean(s) / (p_1^2 + 1))
 * at each query input of data.queries.
 *
 * The examples: drag one (mouse, pen or touch: pointer events; only the examples' handles stop the page
 * from scrolling under a finger), click or tap the picture to add one there, or use the keyboard: each
 * example is a focusable element (role slider) named "Example k of N" whose value says its input and
 * label; the arrow keys move it (Left and Right its input, Up and Down its label; with Shift ten times
 * further), Delete or Backspace removes it. Buttons add an example (in the widest gap of the inputs),
 * remove the selected one and restore the starting prompt.
 *
 * JavaScript API, on the element (el.attentionExplorer), besides the shared one (redraw, timing, data):
 *   params         -> {tau, eta, inputs, labels}: a copy
 *   setParams({tau, eta, inputs, labels}) -> params; a RangeError naming the key for a value out of range
 *   series()       -> {inputs, labels, queries, softmax, oneStep, leastSquares}: plain arrays
 */
(function () {
  "use strict";

  const kit = window.AttentionExplorerKit;
  if (!kit) return;
  const { Explorer, el, legend, registerKind } = kit;

  /** How far one arrow key moves an example: its input, its label (Shift: ten times as far). */
  const INPUT_KEY_STEP = 0.01, LABEL_KEY_STEP = 0.05;

  // ---------------------------------------------------------------- the math

  /** The softmax head at query q: max-subtracted weights exp(-(q - p_j)^2 / tau), normalised. */
  function softmaxHead(p, y, q, tau, scores) {
    let top = -Infinity;
    for (let j = 0; j < p.length; j++) {
      const u = q - p[j];
      const s = -(u * u) / tau;
      scores[j] = s;
      if (s > top) top = s;
    }
    let num = 0, den = 0;
    for (let j = 0; j < p.length; j++) {
      const w = Math.exp(scores[j] - top);
      num += w * y[j]; den += w;
    }
    return num / den;
  }

  /** One step of gradient descent from 0: eta times the mean of s_j ([p_j, 1] . [q, 1]). */
  function oneStep(p, y, q, eta) {
    let sum = 0;
    for (let j = 0; j < p.length; j++) sum += y[j] * (p[j] * q + 1);
    return eta * (sum / p.length);
  }

  /** Least squares' line {slope, intercept} through the examples (the shortest weights if all inputs are equal). */
  function leastSquaresLine(p, y) {
    const N = p.length;
    let pm = 0, ym = 0;
    for (let j = 0; j < N; j++) { pm += p[j]; ym += y[j]; }
    pm /= N; ym /= N;
    if (p.every((v) => v === p[0])) {  // rank 1: phi = [p_1, 1] mean(s) / (p_1^2 + 1)
      const c = ym / (p[0] * p[0] + 1);
      return { slope: c * p[0], intercept: c };
    }
    let sxx = 0, sxy = 0;
    for (let j = 0; j < N; j++) { const d = p[j] - pm; sxx += d * d; sxy += d * (y[j] - ym); }
    const slope = sxy / sxx;
    return { slope, intercept: ym - slope * pm };
  }

  // ---------------------------------------------------------------- the explorer

  class InContextExplorer extends Explorer {
    sliders() {
      const d = this.data;
      return [
        this.tauSpec(d.temperature_range, d.temperature),
        this.linearSpec("eta", "Step size η", d.eta_range, d.eta, d.eta_step, (v) => v.toFixed(2), false),
      ];
    }

    buildPanels() {
      this.exInputs = [...this.data.inputs];
      this.exLabels = [...this.data.labels];
      this.selected = -1;
      this.canvasSignal = this.signalCanvas(
        "Prompt panel: the examples (dots), and against the query input p from 0 to 1, the softmax head's " +
        "prediction (solid curve), one step of gradient descent (solid line) and least squares (dashed line).");
      this.canvasSignal.classList.add("ae-ic-canvas");
      this.canvasSignal.addEventListener("click", (event) => this.addAt(event));
      this.handles = el("div", { class: "ae-ic-handles", role: "group", "aria-label": "The prompt's examples" });
      this.hint = el("p", { class: "ae-ic-hint", id: `${this.root.id}-hint` }, [
        "Drag an example, or tap the picture to add one. Keyboard: Tab to an example; the arrows move it ",
        "(Shift: further), Delete removes it."]);
      this.countOutput = el("output", { class: "ae-ic-count", "aria-live": "polite" });
      return {
        main: [el("figure", { class: "ae-panel ae-panel-signal ae-panel-in-context" }, [
          el("div", { class: "ae-ic-plot" }, [this.canvasSignal, this.handles]),
          legend([["examples", "examples"], ["output", "softmax head"], ["step", "one step"],
            ["clean", "least squares"]]),
          el("figcaption", {}, [this.hint])])],
      };
    }

    extraControls() {
      const button = (text, action) => {
        const b = el("button", { type: "button", class: "ae-best" }, [text]);
        b.addEventListener("click", action);
        return b;
      };
      this.addButton = button("Add an example", () => this.addInGap());
      this.removeButton = button("Remove the selected example", () => this.removeSelected());
      this.resetButton = button("Restore the starting prompt", () => this.setParams({
        inputs: this.data.inputs, labels: this.data.labels }));
      return [el("div", { class: "ae-control ae-control-best ae-ic-buttons" },
        [this.addButton, this.removeButton, this.resetButton, this.countOutput])];
    }

    // ---- state

    get params() { return { ...this.state, inputs: [...this.exInputs], labels: [...this.exLabels] }; }

    setParams(params) {
      const { inputs = this.exInputs, labels = this.exLabels, ...rest } = params;
      this.checkExamples(inputs, labels);
      this.exInputs = [...inputs];
      this.exLabels = [...labels];
      if (this.selected >= this.exInputs.length) this.selected = -1;
      this.syncHandles();
      return super.setParams(rest);
    }

    checkExamples(inputs, labels) {
      const d = this.data;
      const within = (xs, [lo, hi]) => Array.isArray(xs) && xs.every((v) => typeof v === "number" && v >= lo && v <= hi);
      if (!within(inputs, d.input_range)) throw new RangeError(`inputs must be numbers in [${d.input_range}], got ${inputs}`);
      if (!within(labels, d.label_range)) throw new RangeError(`labels must be numbers in [${d.label_range}], got ${labels}`);
      if (inputs.length < d.min_examples || inputs.length > d.max_examples) {
        throw new RangeError(`inputs must hold ${d.min_examples} to ${d.max_examples} examples, got ${inputs.length}`);
      }
      if (labels.length !== inputs.length) {
        throw new RangeError(`labels must be as many as the inputs (${inputs.length}), got ${labels.length}`);
      }
    }

    /** Example k moved to (input, label), each clamped to its range; redrawn on the next frame. */
    moveTo(k, input, label) {
      const [pLo, pHi] = this.data.input_range, [yLo, yHi] = this.data.label_range;
      this.exInputs[k] = Math.min(pHi, Math.max(pLo, input));
      this.exLabels[k] = Math.min(yHi, Math.max(yLo, label));
      this.syncHandle(k);
      this.schedule();
    }

    add(input, label) {
      if (this.exInputs.length >= this.data.max_examples) return -1;
      this.exInputs.push(input);
      this.exLabels.push(label);
      this.syncHandles();
      this.moveTo(this.exInputs.length - 1, input, label);
      this.select(this.exInputs.length - 1);
      return this.exInputs.length - 1;
    }

    /** A new example where the reader clicked or tapped the picture (not on an example). */
    addAt(event) {
      const { p, y } = this.fromClient(event.clientX, event.clientY);
      if (p < this.data.input_range[0] || p > this.data.input_range[1]) return;
      this.add(p, Math.min(this.data.label_range[1], Math.max(this.data.label_range[0], y)));
    }

    /** A new example, label 0, in the middle of the widest gap between the inputs (and the ends of their range). */
    addInGap() {
      const [lo, hi] = this.data.input_range;
      const sorted = [lo, ...[...this.exInputs].sort((a, b) => a - b), hi];
      let best = 0;
      for (let k = 1; k < sorted.length - 1; k++) if (sorted[k + 1] - sorted[k] > sorted[best + 1] - sorted[best]) best = k;
      const k = this.add(sorted[best] / 2 + sorted[best + 1] / 2, 0);
      if (k >= 0) this.handles.children[k].focus();
    }

    /** Example k removed; if the keyboard was on an example, it goes to the one now at k (or the last). */
    remove(k) {
      if (this.exInputs.length <= this.data.min_examples || k < 0 || k >= this.exInputs.length) return;
      const focused = this.handles.contains(document.activeElement);
      this.exInputs.splice(k, 1);
      this.exLabels.splice(k, 1);
      this.selected = -1;
      this.syncHandles();
      this.schedule();
      if (focused) this.handles.children[Math.min(k, this.exInputs.length - 1)].focus();
    }

    removeSelected() { this.remove(this.selected); }

    select(k) {
      this.selected = k;
      [...this.handles.children].forEach((h, i) => h.classList.toggle("ae-ic-selected", i === k));
      this.syncButtons();
      if (this.started) this.schedule();  // the selected example is drawn larger
    }

    syncButtons() {
      const N = this.exInputs.length;
      this.addButton.disabled = N >= this.data.max_examples;
      this.removeButton.disabled = this.selected < 0 || N <= this.data.min_examples;
      this.countOutput.textContent = `N = ${N} example${N === 1 ? "" : "s"}`;
    }

    // ---- the examples' handles: pointer and keyboard

    /** One focusable handle per example, in the order of the examples. */
    syncHandles() {
      while (this.handles.children.length > this.exInputs.length) this.handles.lastChild.remove();
      while (this.handles.children.length < this.exInputs.length) this.handles.append(this.newHandle());
      for (let k = 0; k < this.exInputs.length; k++) this.syncHandle(k);
      this.select(this.selected);
    }

    newHandle() {
      const [yLo, yHi] = this.data.label_range;
      const h = el("div", { class: "ae-ic-point", role: "slider", tabindex: "0", "aria-valuemin": String(yLo),
        "aria-valuemax": String(yHi), "aria-describedby": this.hint.id });
      const index = () => [...this.handles.children].indexOf(h);
      h.addEventListener("focus", () => this.select(index()));
      h.addEventListener("keydown", (event) => this.onKey(index(), event));
      h.addEventListener("pointerdown", (event) => {
        event.preventDefault();
        h.setPointerCapture(event.pointerId);
        h.focus({ preventScroll: true });
        this.dragging = event.pointerId;
      });
      h.addEventListener("pointermove", (event) => {
        if (this.dragging !== event.pointerId) return;
        const { p, y } = this.fromClient(event.clientX, event.clientY);
        this.moveTo(index(), p, y);
      });
      const stop = () => { this.dragging = null; };
      h.addEventListener("pointerup", stop);
      h.addEventListener("pointercancel", stop);
      h.addEventListener("click", (event) => event.stopPropagation());
      return h;
    }

    syncHandle(k) {
      const h = this.handles.children[k];
      if (!h) return;
      const N = this.exInputs.length;
      const p = this.exInputs[k], y = this.exLabels[k];
      h.setAttribute("aria-label", `Example ${k + 1} of ${N}`);
      h.setAttribute("aria-valuenow", String(y));
      h.setAttribute("aria-valuetext", `input p = ${p.toFixed(2)}, label s = ${y.toFixed(2)}`);
      const { x, yPx } = this.toCss(p, y);
      h.style.left = `${x}px`;
      h.style.top = `${yPx}px`;
    }

    onKey(k, event) {
      const far = event.shiftKey ? 10 : 1;
      const moves = { ArrowLeft: [-INPUT_KEY_STEP, 0], ArrowRight: [INPUT_KEY_STEP, 0],
        ArrowDown: [0, -LABEL_KEY_STEP], ArrowUp: [0, LABEL_KEY_STEP] };
      if (event.key in moves) {
        const [dp, dy] = moves[event.key];
        this.moveTo(k, this.exInputs[k] + far * dp, this.exLabels[k] + far * dy);
      } else if (event.key === "Delete" || event.key === "Backspace") {
        this.remove(k);
      } else {
        return;
      }
      event.preventDefault();
    }

    // ---- geometry: the plot's area in CSS pixels (the canvas draws at devicePixelRatio times that)

    box() {
      const W = this.canvasSignal.clientWidth, H = this.canvasSignal.clientHeight;
      const pad = { l: 34, r: 10, t: 10, b: 24 };
      const [yLo, yHi] = this.data.label_range, margin = (yHi - yLo) * 0.05;
      return { W, H, pad, yLo: yLo - margin, yHi: yHi + margin };
    }

    toCss(p, y) {
      const { W, H, pad, yLo, yHi } = this.box();
      return { x: pad.l + p * (W - pad.l - pad.r), yPx: pad.t + ((yHi - y) / (yHi - yLo)) * (H - pad.t - pad.b) };
    }

    fromClient(clientX, clientY) {
      const r = this.canvasSignal.getBoundingClientRect();
      const { W, H, pad, yLo, yHi } = this.box();
      const p = (clientX - r.left - pad.l) / (W - pad.l - pad.r);
      const y = yHi - ((clientY - r.top - pad.t) / (H - pad.t - pad.b)) * (yHi - yLo);
      return { p, y };
    }

    // ---- computing and drawing

    compute() {
      const { tau, eta } = this.state;
      const p = this.exInputs, y = this.exLabels, queries = this.data.queries;
      const G = queries.length;
      const softmax = new Float64Array(G), step = new Float64Array(G), least = new Float64Array(G);
      const scores = new Float64Array(p.length);
      const line = leastSquaresLine(p, y);
      for (let g = 0; g < G; g++) {
        const q = queries[g];
        softmax[g] = softmaxHead(p, y, q, tau, scores);
        step[g] = oneStep(p, y, q, eta);
        least[g] = line.slope * q + line.intercept;
      }
      this.result = { softmax, step, least };
    }

    draw() {
      const colors = this.colors();
      const style = getComputedStyle(this.root);
      const muted = style.getPropertyValue("--ae-muted").trim(), background = style.getPropertyValue("--ae-panel-bg").trim();
      const canvas = this.canvasSignal, ctx = canvas.getContext("2d");
      const dpr = canvas.width / Math.max(1, canvas.clientWidth);
      const { W, H, pad, yLo, yHi } = this.box();
      const X = (p) => this.toCss(p, 0).x, Y = (v) => this.toCss(0, v).yPx;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, H);
      ctx.font = `11px ${colors.font}`;
      ctx.fillStyle = colors.fg; ctx.strokeStyle = colors.grid; ctx.lineWidth = 1; ctx.setLineDash([]);
      ctx.beginPath();
      ctx.textAlign = "right"; ctx.textBaseline = "middle";
      for (let t = Math.ceil(yLo); t <= yHi; t++) {
        ctx.moveTo(pad.l, Y(t)); ctx.lineTo(W - pad.r, Y(t));
        ctx.fillText(t < 0 ? `−${-t}` : String(t), pad.l - 4, Y(t));
      }
      ctx.textAlign = "center"; ctx.textBaseline = "top";
      for (const t of [0, 0.25, 0.5, 0.75, 1]) {
        ctx.moveTo(X(t), pad.t); ctx.lineTo(X(t), H - pad.b);
        ctx.fillText(String(t), X(t), H - pad.b + 4);
      }
      ctx.stroke();
      ctx.save();
      ctx.beginPath(); ctx.rect(pad.l, pad.t, W - pad.l - pad.r, H - pad.t - pad.b); ctx.clip();
      const queries = this.data.queries;
      const curve = (ys, color, width, dash) => {
        ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dash);
        ctx.beginPath();
        for (let g = 0; g < queries.length; g++) (g ? ctx.lineTo : ctx.moveTo).call(ctx, X(queries[g]), Y(ys[g]));
        ctx.stroke();
      };
      const { softmax, step, least } = this.result;
      curve(least, colors.clean, 1.6, [6, 4]);
      curve(step, colors.noisy, 2, []);
      curve(softmax, colors.output, 2.4, []);
      ctx.restore();
      ctx.setLineDash([]);
      for (let k = 0; k < this.exInputs.length; k++) {
        ctx.beginPath();
        ctx.arc(X(this.exInputs[k]), Y(this.exLabels[k]), k === this.selected ? 6 : 4.5, 0, 2 * Math.PI);
        ctx.fillStyle = muted; ctx.fill();
        ctx.lineWidth = k === this.selected ? 2.5 : 1.2;
        ctx.strokeStyle = k === this.selected ? colors.fg : background;
        ctx.stroke();
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      for (let k = 0; k < this.exInputs.length; k++) this.syncHandle(k);
      this.syncButtons();
    }

    series() {
      const { softmax, step, least } = this.result;
      return {
        inputs: [...this.exInputs], labels: [...this.exLabels], queries: [...this.data.queries],
        softmax: Array.from(softmax), oneStep: Array.from(step), leastSquares: Array.from(least),
      };
    }

    syncControls() {
      super.syncControls();
      if (this.handles) this.syncHandles();
    }
  }

  registerKind("in-context", InContextExplorer);
})();
