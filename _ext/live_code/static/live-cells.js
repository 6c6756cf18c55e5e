/*
 * Live cells: what a chapter's code cells do once Live Code has connected a live session.
 * live-code.js loads this file (and live-cells.css) only then: a page that is only read fetches neither.
 *
 * - When the session connects (and after each restart) the kernel first runs live_preamble.py
 *   (myst_nb's glue shows its value: a figure is drawn, a number printed), then the chapter's
 *   set-up: its folded first cells ("Show the imports") and any cell tagged thebe-init.
 * - Running a cell first runs, in order, every code cell above it that has not run: all the code
 *   cells above it, a rule that needs no analysis of what a cell uses. The cells the page leaves out
 *   (tagged remove-cell: the glue bookkeeping; their sources are in the page's configuration) run
 *   right after the shown cell before them, and what they print, the numbers the text quotes,
 *   appears under that cell.
 * - Each cell shows its state in words: not run, waiting (for the cells above), running (with the
 *   seconds so far), ran (in how long), edited since it ran (it runs again before the cells below
 *   it), failed (the error's last line, shown first). A NameError
 *   for a name that a cell above defines says so, with a button that runs the cells above again.
 * - One toolbar on the page: Run all, and Restart, which asks first, then resets every cell's
 *   state and the status line.
 *
 * window.liveCells.start({notebook, session, config, setStatus, connected, preambleUrl}) starts it.
 */
(function () {
  "use strict";

  const STATE_TEXT = { "not-run": "not run", waiting: "waiting for the cells above", running: "running…",
    ran: "ran", edited: "edited since it ran", failed: "failed" };
  const SHOW_SECONDS_AFTER = 1000; // ms: a quick cell shows no clock

  let book = null; // {cells, session, setStatus, connected, preamble, toolbar, progress, epoch}
  let queue = Promise.resolve(); // the runs, one after another

  /* ---- cells ---- */

  function label(cell) {
    return cell.setUp ? `Cell ${cell.index + 1} (set-up)` : `Cell ${cell.index + 1}`;
  }

  function seconds(ms) {
    return ms < 10000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
  }

  function setState(cell, state, detail) {
    cell.state = state;
    cell.el.dataset.liveState = state;
    cell.el.setAttribute("aria-busy", String(state === "running" || state === "waiting"));
    cell.stateEl.textContent = `${label(cell)}: ${STATE_TEXT[state]}${detail ? ` ${detail}` : ""}`;
  }

  function announce(text) {
    book.progress.textContent = text;
  }

  function makeButton(text, className, onClick) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = className;
    button.textContent = text;
    button.addEventListener("click", onClick);
    return button;
  }

  /** The page's live cells, in order: thebe's cells, each with its box in the page. */
  function findCells(notebook, config) {
    const cells = notebook.cells.map(function (thebeCell, index) {
      const box = document.querySelector(`[data-thebe-id="${thebeCell.id}"]`);
      const el = box.closest("div.cell") || box;
      return { index, thebe: thebeCell, box, el, output: el.querySelector("[data-output]"), quiet: [], notes: [],
        folded: el.classList.contains("tag_hide-input"), state: "not-run" };
    });
    cells.forEach(function (cell) {
      cell.setUp = cell.folded && cells.slice(0, cell.index).every((c) => c.folded);
      cell.init = cell.el.classList.contains("tag_thebe-init");
    });
    // The left-out cells, after the shown cell they follow (only if the page's cells are the ones counted).
    const quiet = config.quietCells || [];
    if (config.shownCells === cells.length) {
      quiet.forEach((q) => (q.after >= 0 ? cells[q.after].quiet : (cells.leading = cells.leading || [])).push(q.source));
    }
    return cells;
  }

  function addControls(cell) {
    const bar = document.createElement("div");
    bar.className = "live-cell-bar";
    cell.runButton = makeButton("Run", "live-cell-run thebe-run-button", () => run(cell.index));
    cell.runButton.setAttribute("aria-label", `Run ${label(cell).toLowerCase()}` +
      (cell.index ? " and the cells above it that have not run" : ""));
    cell.stateEl = document.createElement("span");
    cell.stateEl.className = "live-cell-state";
    bar.append(cell.runButton, cell.stateEl);
    // After the input (or its fold), before the output: visible even when the input is folded.
    const fold = cell.folded && cell.box.closest("details");
    const anchor = fold && cell.el.contains(fold) ? fold : cell.box;
    anchor.insertAdjacentElement("afterend", bar);
    cell.bar = bar;
    const editor = cell.box.querySelector(".CodeMirror");
    if (editor && editor.CodeMirror) {
      const cm = editor.CodeMirror;
      cm.setOption("extraKeys", Object.assign({}, cm.getOption("extraKeys"), { "Shift-Enter": () => run(cell.index) }));
      // A cell edited since it ran has not run what it now holds: the cells below it run it again first.
      cm.on("change", function () {
        const same = cm.getValue() === cell.ranSource;
        if (cell.state === "ran" && !same) setState(cell, "edited");
        else if (cell.state === "edited" && same) setState(cell, "ran", cell.ranDetail);
      });
      cell.cm = cm;
    }
    setState(cell, "not-run");
  }

  /* ---- what a cell shows besides thebe's output ---- */

  function clearNotes(cell) {
    cell.notes.forEach((note) => note.remove());
    cell.notes = [];
  }

  /** The index of the last of ``sources`` that defines ``name`` (assigns, imports, defines it), or -1. */
  function definingSource(sources, name) {
    const word = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const patterns = [
      new RegExp(`^[\\w\\s,*]*(?<![.\\w])${word}\\b[\\w\\s,*]*=(?!=)`), // x = ..., a, x = ... (not f(x=1))
      new RegExp(`^(?:from\\s+\\S+\\s+)?import\\b.*(?<![.\\w])${word}\\b(?!\\s*\\.)`), // import x, from m import a as x
      new RegExp(`^(?:async\\s+)?(?:def|class)\\s+${word}\\b`),
      new RegExp(`^for\\s+[\\w\\s,()*]*(?<![.\\w])${word}\\b[\\w\\s,()*]*\\bin\\b`), // for a, x in ...
      new RegExp(`^with\\b.*\\bas\\s+\\(?[\\w\\s,]*(?<![.\\w])${word}\\b`), // with ... as x
    ];
    const named = new RegExp(`(?<![.\\w])${word}\\b`);
    for (let j = sources.length - 1; j >= 0; j--) {
      let depth = 0, importing = false; // inside "from m import (" ... ")"
      for (const raw of sources[j].split("\n")) {
        const line = raw.replace(/#.*$/, "");
        if (depth === 0 && patterns.some((p) => p.test(line.trim()))) return j;
        if (importing && named.test(line)) return j;
        if (depth === 0) importing = /^from\s+\S+\s+import\s*\(/.test(line.trim());
        depth = Math.max(0, depth + (line.match(/[([{]/g) || []).length - (line.match(/[)\]}]/g) || []).length);
        if (depth === 0) importing = false;
      }
    }
    return -1;
  }

  /** The cell above ``cell`` whose source defines ``name``, or null. */
  function definedAbove(cell, name) {
    const found = definingSource(book.cells.slice(0, cell.index).map((c) => c.thebe.source), name);
    return found < 0 ? null : book.cells[found];
  }

  /** The error's last line first, readable on a phone; for a NameError a cell above resolves, the way out. */
  function showError(cell, error) {
    const box = document.createElement("div");
    box.className = "live-cell-error";
    box.setAttribute("role", "alert");
    const line = document.createElement("p");
    line.className = "live-cell-error-line";
    const kind = document.createElement("strong");
    kind.textContent = error.ename;
    line.append(kind, `: ${error.evalue}`);
    box.append(line);
    const missing = error.ename === "NameError" && /name '([^']+)' is not defined/.exec(error.evalue);
    const source = missing && definedAbove(cell, missing[1]);
    if (source) {
      const hint = document.createElement("p");
      hint.className = "live-cell-error-hint";
      const where = source.setUp ? `${label(source).toLowerCase()}, folded under its “Show” toggle` :
        label(source).toLowerCase();
      hint.textContent = `${missing[1]} is defined by a cell above this one (${where}), which has not run ` +
        "in this session since it changed or since the session lost it. Run the cells above, then this one:";
      const again = makeButton("Run the cells above", "live-cell-rerun", () => run(cell.index, { again: true }));
      box.append(hint, again);
    } else if (error.traceback && error.traceback.length) {
      const more = document.createElement("p");
      more.className = "live-cell-error-hint";
      more.textContent = "The full traceback is below.";
      box.append(more);
    }
    cell.bar.insertAdjacentElement("afterend", box);
    cell.notes.push(box);
  }

  /** Run one piece of code the page does not show; what it prints and draws, as nodes. */
  async function runQuietly(code) {
    const shown = [];
    let error = null;
    const future = book.session.kernel.requestExecute({ code, store_history: false });
    future.onIOPub = function (msg) {
      const type = msg.header.msg_type, content = msg.content;
      if (type === "stream") {
        const pre = document.createElement("pre");
        pre.textContent = content.text.replace(/\n$/, "");
        shown.push(pre);
      } else if ((type === "display_data" || type === "execute_result") && content.data) {
        if (content.data["image/png"]) {
          const img = document.createElement("img");
          img.src = `data:image/png;base64,${content.data["image/png"]}`;
          img.alt = "A figure the text uses, drawn from this cell's results";
          shown.push(img);
        } else if (content.data["text/plain"]) {
          const pre = document.createElement("pre");
          pre.textContent = content.data["text/plain"];
          shown.push(pre);
        }
      } else if (type === "error") {
        error = { ename: content.ename, evalue: content.evalue };
      }
    };
    await future.done.catch(() => null); // an error reply rejects nothing; a restart cancels the future
    return { shown, error };
  }

  async function runQuietCells(cell) {
    if (!cell.quiet.length) return;
    const box = document.createElement("div");
    box.className = "live-cell-quoted";
    const title = document.createElement("p");
    title.className = "live-cell-quoted-title";
    title.textContent = "What the text quotes from this cell, computed live:";
    box.append(title);
    for (const code of cell.quiet) {
      const { shown, error } = await runQuietly(code);
      box.append(...shown);
      if (error) {
        const note = document.createElement("p");
        note.textContent = `(The text's numbers could not be computed from this cell's results: ` +
          `${error.ename}: ${error.evalue})`;
        box.append(note);
        break;
      }
    }
    if (box.childElementCount > 1) {
      cell.output.insertAdjacentElement("afterend", box);
      cell.notes.push(box);
    }
  }

  /* ---- running ---- */

  /** Alt text for a figure the cell draws: that of the page's figure of the same name, if any. */
  function describeImages(cell) {
    const next = cell.el.nextElementSibling;
    const figure = next && (next.matches("figure") ? next : next.querySelector("figure")) &&
      (next.matches("figure") ? next : next.querySelector("figure")).querySelector("img[alt]");
    cell.output.querySelectorAll("img:not([alt])").forEach(function (img) {
      img.alt = figure ? figure.alt : "The figure this cell draws";
    });
  }

  async function runOne(cell) {
    const epoch = book.epoch;
    const source = cell.thebe.source;
    clearNotes(cell);
    setState(cell, "running");
    const started = performance.now();
    const clock = setInterval(function () {
      const ms = performance.now() - started;
      if (ms >= SHOW_SECONDS_AFTER && cell.state === "running") setState(cell, "running", seconds(ms));
    }, 1000);
    let result;
    try {
      result = await cell.thebe.execute(source);
      if (result && !(result.error && result.error.length) && epoch === book.epoch) await runQuietCells(cell);
    } finally {
      clearInterval(clock);
    }
    if (epoch !== book.epoch) return false; // the session restarted meanwhile: the cell was reset
    const took = seconds(performance.now() - started);
    const error = result ? result.error && result.error[0] : { ename: "Error", evalue: "the live session did not run the cell" };
    if (error) {
      setState(cell, "failed", `(${error.ename})`);
      showError(cell, error);
      announce(`${label(cell)} failed after ${took}: ${error.ename}: ${error.evalue}`);
      return false;
    }
    describeImages(cell);
    cell.ranSource = source;
    cell.ranDetail = `in ${took}`;
    setState(cell, source === cell.thebe.source ? "ran" : "edited", cell.ranDetail);
    announce(`${label(cell)} ran in ${took}.`);
    return true;
  }

  /** Run the cells above ``index`` that have not run (all of them, with ``again``), then that cell. */
  async function runThrough(index, options) {
    const epoch = book.epoch;
    const target = book.cells[index];
    const before = book.cells.slice(0, index).filter((c) => options.again || c.state !== "ran");
    before.concat(target).forEach((c) => setState(c, "waiting"));
    if (before.length) announce(`Running the ${before.length} cell${before.length > 1 ? "s" : ""} above ` +
      `${label(target).toLowerCase()} first.`);
    for (const [k, cell] of before.entries()) {
      const ok = await runOne(cell);
      if (epoch !== book.epoch) return false;
      if (!ok) {
        before.slice(k + 1).concat(target).forEach((c) => setState(c, "not-run", `(${label(cell).toLowerCase()} above failed)`));
        return false;
      }
    }
    return runOne(target);
  }

  function run(index, options) {
    const epoch = book.epoch;
    const target = book.cells[index];
    if (target.state !== "running") setState(target, "waiting"); // at once, even behind a run in progress
    const job = queue.then(() => (epoch === book.epoch ? runThrough(index, options || {}) : false));
    queue = job.catch(() => false);
    return job;
  }

  function runAll() {
    return run(book.cells.length - 1, { again: true });
  }

  /* ---- the session ---- */

  async function runPreamble() {
    const { error } = await runQuietly(book.preamble);
    if (error) throw new Error(`the live preamble failed: ${error.ename}: ${error.evalue}`);
    for (const code of book.cells.leading || []) await runQuietly(code); // left-out cells before the first
  }

  function runSetUp() {
    const wanted = book.cells.filter((c) => c.setUp || c.init);
    if (!wanted.length) return Promise.resolve(true);
    return run(wanted[wanted.length - 1].index);
  }

  /** Every cell back to not run: the kernel holds nothing the cells made. */
  function resetCells() {
    book.epoch += 1;
    queue = Promise.resolve();
    book.cells.forEach(function (cell) {
      clearNotes(cell);
      setState(cell, "not-run");
    });
  }

  async function restart() {
    const ok = window.confirm("Restart the live session? Every variable it holds is lost and every cell " +
      "goes back to not run; the chapter's set-up then runs again.");
    if (!ok) return;
    book.restarting = true;
    resetCells();
    announce("Restarting…");
    book.setStatus("connecting", "Restarting the live session: every cell is not run.");
    try {
      await book.session.restart();
      book.restarting = false;
      await runPreamble();
      book.setStatus("ready", `${book.connected} Restarted: every cell is not run; the set-up runs again.`);
      announce("The session restarted.");
      await runSetUp();
    } catch (err) {
      book.setStatus("error", `Could not restart the live session (${err && err.message ? err.message : err}).`);
    } finally {
      book.restarting = false;
    }
  }

  /** A kernel that restarts by itself (it died: out of memory, say) lost every cell's work: say so, set up again. */
  function watchKernel() {
    const kernel = book.session.kernel;
    if (!kernel || !kernel.statusChanged) return;
    kernel.statusChanged.connect(async function (_kernel, status) {
      if (book.restarting || status !== "autorestarting") return;
      book.restarting = true;
      resetCells();
      book.setStatus("connecting", "The live session stopped and is restarting by itself: every cell is not run.");
      try {
        await new Promise((resolve) => kernel.statusChanged.connect(function ready(_k, now) {
          if (now === "idle") { kernel.statusChanged.disconnect(ready); resolve(); }
        }));
        book.restarting = false;
        await runPreamble();
        book.setStatus("ready", `${book.connected} The live session restarted by itself: every cell is not run; ` +
          "the set-up runs again.");
        await runSetUp();
      } finally {
        book.restarting = false;
      }
    });
  }

  function addToolbar() {
    const bar = document.createElement("div");
    bar.className = "live-cells-toolbar";
    bar.setAttribute("role", "group"); // two buttons: a group, not a toolbar with its arrow keys
    bar.setAttribute("aria-label", "Live code");
    const all = makeButton("Run all", "live-cells-run-all", runAll);
    const again = makeButton("Restart", "live-cells-restart", restart);
    again.setAttribute("aria-haspopup", "dialog");
    const progress = document.createElement("p");
    progress.className = "live-cells-progress";
    progress.setAttribute("aria-live", "polite");
    bar.append(all, again);
    const status = document.querySelector(".live-code-status");
    status.insertAdjacentElement("afterend", bar);
    bar.insertAdjacentElement("afterend", progress);
    book.toolbar = bar;
    book.progress = progress;
  }

  /** CodeMirror's dark theme (in thebe's stylesheet) while the site is dark. */
  function followColourTheme() {
    const apply = function () {
      const theme = document.documentElement.dataset.theme === "dark" ? "darcula" : "default";
      book.cells.forEach((cell) => cell.cm && cell.cm.getOption("theme") !== theme && cell.cm.setOption("theme", theme));
    };
    new MutationObserver(apply).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    apply();
  }

  async function start(options) {
    const response = await fetch(options.preambleUrl);
    if (!response.ok) throw new Error(`could not load ${options.preambleUrl}`);
    book = { cells: findCells(options.notebook, options.config), session: options.session, epoch: 0,
      setStatus: options.setStatus, connected: options.connected, preamble: await response.text() };
    addToolbar();
    book.cells.forEach(addControls);
    followColourTheme();
    watchKernel();
    await runPreamble();
    const setUp = book.cells.some((c) => c.setUp || c.init);
    book.setStatus("ready", `${book.connected} ${setUp ? "The chapter's set-up runs first. " : ""}` +
      "A cell you run first runs the cells above it that have not run.");
    await runSetUp();
  }

  window.liveCells = { start, run, runAll, restart, definingSource };
})();
