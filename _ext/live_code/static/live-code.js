/*
 * Live code cells for the book: thebe 0.9.3 loaded from this site, connected to
 * Binder (the default) or to the reader's own Jupyter server.
 *
 * Local mode: open any page as  page.html#jupyter=<server url>&token=<token>
 * (`make live` prints such a URL). The fragment is never sent to the static
 * server; this script moves it into sessionStorage (this tab only) and removes
 * it from the address bar. `#binder` goes back to Binder.
 *
 * A link can name any server, and whoever runs it could show anything in this
 * page: a server on this computer (127.0.0.1, localhost, [::1]) is used at
 * once; for any other host the page names it and asks the reader to confirm
 * before it sends a single request there.
 *
 * sphinx-book-theme's "Live Code" launch button calls window.initThebe().
 */
(function () {
  "use strict";

  const STORE = "live-code-server";
  const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"]; // URL.hostname keeps IPv6 brackets
  // thebe 0.9.3 fetches require.js from this fixed CDN address before it
  // renders any widget (there is no option for it): serve our copy instead.
  const REQUIREJS_CDN = "https://cdnjs.cloudflare.com/ajax/libs/require.js/";
  const STATIC = new URL(".", document.currentScript.src).href; // .../_static/
  const ASSETS = STATIC + "live-code/";
  let launched = false;
  const UNPUBLISHED = "Live code on Binder needs this book to be published from a GitHub repository, " +
    "and this copy was built without one (see \"Publish your own copy\" in the book's README). " +
    "To run the cells on your own machine instead, start a local server with make live.";

  /* ---- where the kernel comes from ---- */

  function readFragment() {
    const hash = window.location.hash.replace(/^#/, "");
    if (!/^(jupyter=|binder$)/.test(hash)) return;
    const params = new URLSearchParams(hash);
    if (params.has("jupyter")) {
      const server = { url: params.get("jupyter"), token: params.get("token") || "" };
      window.sessionStorage.setItem(STORE, JSON.stringify(server));
    } else {
      window.sessionStorage.removeItem(STORE);
    }
    // Keep the token out of the address bar, the history and shared links.
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }

  /** {mode: "binder"} | {mode: "local", baseUrl, token} | {mode: "error", message} */
  function kernelSource() {
    const saved = window.sessionStorage.getItem(STORE);
    if (!saved) return { mode: "binder" };
    let server, url;
    try {
      server = JSON.parse(saved);
      url = new URL(server.url);
    } catch (err) {
      const text = server && server.url ? `"${server.url}"` : "(none)";
      return { mode: "error", message: `The Jupyter server address in the page URL is malformed: ${text}. ` +
        "Expected something like #jupyter=http://127.0.0.1:8888/&token=… as printed by make live." };
    }
    if (!/^https?:$/.test(url.protocol) || url.search || url.username || url.password) {
      return { mode: "error", message: `The Jupyter server address "${server.url}" is not usable: ` +
        "it must be a plain http:// or https:// URL with no query string or user name, " +
        "and the token must be passed separately (&token=…)." };
    }
    url.hash = "";
    const baseUrl = url.href.endsWith("/") ? url.href : url.href + "/";
    return { mode: "local", baseUrl: baseUrl, token: String(server.token || ""), host: url.host,
      loopback: LOOPBACK.includes(url.hostname) };
  }

  function pageConfig() {
    const el = document.getElementById("live-code-config");
    return el ? JSON.parse(el.textContent) : null;
  }

  function thebeOptions(config, source) {
    const options = {
      requestKernel: true,
      useBinder: source.mode === "binder",
      predefinedOutput: true,
      mountStatusWidget: false,
      mountActivateWidget: false,
      mountRestartAllButton: false,
      // live-cells.js gives each cell its Run button and state, and the page one toolbar.
      mountRunButton: false,
      mountRunAllButton: false,
      mountRestartButton: false,
      // LaTeX outputs: thebe loads this MathJax-2-shaped shim over KaTeX at the first one (never a CDN).
      mathjaxUrl: STATIC + "live-math.js",
      kernelOptions: { kernelName: config.kernelName, path: config.path },
      codeMirrorConfig: { mode: "python" },
    };
    if (source.mode === "binder") {
      const binderUrl = config.binderUrl;
      options.binderOptions = { repo: config.repo, ref: config.ref, binderUrl: binderUrl, repoProvider: "github" };
    } else {
      options.serverSettings = { baseUrl: source.baseUrl, token: source.token, appendToken: true };
    }
    return options;
  }

  /* ---- status text ---- */

  function statusBox() {
    let box = document.querySelector(".live-code-status");
    if (!box) {
      box = document.createElement("div");
      box.className = "live-code-status";
      box.setAttribute("role", "status");
      box.setAttribute("aria-live", "polite");
      const anchor = document.querySelector(".thebe-launch-button") || document.querySelector("section h1");
      anchor.insertAdjacentElement("afterend", box);
    }
    return box;
  }

  function setStatus(state, text) {
    const box = statusBox();
    box.dataset.state = state; // connecting | ready | error
    box.setAttribute("role", state === "error" ? "alert" : "status");
    box.textContent = text;
  }

  function where(source, config) {
    if (source.mode === "local") {
      return `${source.loopback ? "your" : "the"} Jupyter server at ${source.baseUrl}`;
    }
    const host = new URL(config.binderUrl).host;
    return `Binder (${host}, repository ${config.repo}@${config.ref})`;
  }

  function connectError(source, config, detail) {
    const reason = source.mode === "local"
      ? `Could not connect to ${where(source, config)}: it refused the connection, is not running, ` +
        "or does not accept this page's origin or token. If you started it with make live, " +
        "check that it is still running and open the URL it printed."
      : `Could not start a live Python session on ${where(source, config)}.`;
    setStatus("error", `${reason} (${detail})`);
  }

  function watchThebe(source, config) {
    window.thebe.on("status", function (_event, data) {
      const box = statusBox();
      if (box.dataset.state !== "connecting") return;
      const verb = source.mode === "binder" ? "Launching on" : "Connecting to";
      setStatus("connecting", `${verb} ${where(source, config)}: ${data.message || data.status}`);
    });
    window.thebe.on("error", function (_event, data) {
      if (data.subject === "cell") return; // an exception in the reader's code: shown in the cell
      connectError(source, config, data.message || data.status);
    });
  }

  /* ---- loading thebe from this site ---- */

  function serveRequireJsLocally() {
    const original = window.fetch;
    window.fetch = function (input, init) {
      const url = typeof input === "string" ? input : input && input.url;
      if (url && url.startsWith(REQUIREJS_CDN)) return original.call(this, ASSETS + "require.js", init);
      return original.call(this, input, init);
    };
  }

  function loadThebe() {
    const css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = ASSETS + "thebe/thebe.css";
    document.head.appendChild(css);
    return new Promise(function (resolve, reject) {
      const script = document.createElement("script");
      script.src = ASSETS + "thebe/index.js";
      script.onload = resolve;
      script.onerror = function () { reject(new Error(`could not load ${script.src}`)); };
      document.head.appendChild(script);
    });
  }

  /** Mark each code cell's source and give every cell one output placeholder (thebe pairs them in order). */
  function prepareCells() {
    document.querySelectorAll("div.cell").forEach(function (cell) {
      const source = cell.querySelector(".cell_input pre");
      if (!source) return;
      source.setAttribute("data-executable", "true");
      source.setAttribute("data-language", "python");
      let output = cell.querySelector(":scope > .cell_output");
      if (!output) {
        output = document.createElement("div");
        output.className = "cell_output live-code-output";
        cell.appendChild(output);
      }
      output.setAttribute("data-output", "");
      cell.querySelectorAll("button.copybtn").forEach(function (button) { button.remove(); });
    });
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error(`could not load ${script.src}`)); };
      document.head.appendChild(script);
    });
  }

  /** Binder's image holds binder/ only: the session installs the package this site was built with
   *  (_ext/live_code/package.py), from the site's own address, before any cell runs. */
  async function installPackage(session) {
    const response = await fetch(ASSETS + "package.json");
    if (!response.ok) throw new Error(`the site has no package.json for its package (HTTP ${response.status})`);
    const info = await response.json();
    const wheel = new URL(info.wheel, ASSETS).href;
    const code = "import subprocess as _s, sys as _y\n_s.run([_y.executable, '-m', 'pip', 'install', '--quiet', " +
      `'--no-deps', '--no-index', '--force-reinstall', ${JSON.stringify(wheel)}], check=True)\ndel _s, _y`;
    const reply = await session.kernel.requestExecute({ code: code, silent: true, store_history: false }).done;
    if (reply.content.status !== "ok") throw new Error(`the session could not install ${info.wheel}`);
  }

  /** The cells' Run buttons, states and toolbar, the chapter's set-up run first (live-cells.js). */
  async function startCells(config, result, connected) {
    const css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = STATIC + "live-cells.css";
    document.head.appendChild(css);
    await loadScript(STATIC + "live-cells.js");
    await window.liveCells.start({ notebook: result.notebook, session: result.session, config: config,
      setStatus: setStatus, connected: connected, preambleUrl: STATIC + "live_preamble.py" });
  }

  /** A server not on this computer is used only if the reader, told its host, agrees. */
  function confirmedByReader(source) {
    return window.confirm(`This link asks the page to run its code on the Jupyter server at ${source.host}, ` +
      "which is not on this computer. Whoever runs that server decides what appears in this page. " +
      `Connect to ${source.host} only if you started that server yourself.`);
  }

  async function launch() {
    const config = pageConfig();
    if (!config) return;
    const source = kernelSource();
    if (source.mode === "error") return setStatus("error", source.message);
    if (source.mode === "local" && !source.loopback && !confirmedByReader(source)) {
      return setStatus("error", `Not connected: you declined the Jupyter server at ${source.host}, ` +
        "which is not on this computer. make live prints a link to a server on this computer.");
    }
    // An unpublished build (no BOOK_REPOSITORY, see _ext/publish) has no repository for Binder to start.
    if (source.mode === "binder" && !config.repo) return setStatus("error", UNPUBLISHED);
    const verb = source.mode === "binder" ? "Launching on" : "Connecting to";
    setStatus("connecting", `${verb} ${where(source, config)}…`);
    try {
      serveRequireJsLocally();
      await loadThebe();
      watchThebe(source, config);
      prepareCells();
      const result = await window.thebe.bootstrap(thebeOptions(config, source));
      if (!result.session) throw new Error("the server started no live session");
      if (source.mode === "binder") await installPackage(result.session);
      const connected = `Connected: live session (${config.kernelName}) on ${where(source, config)}.`;
      setStatus("ready", connected);
      await startCells(config, result, connected);
    } catch (err) {
      connectError(source, config, err && err.message ? err.message : String(err));
    }
  }

  /* ---- the plain Binder link: this page's chapter and package, in the cached image ---- */

  /** Binder's image holds the chapters of its tag's commit; point the launch menu's Binder link
   *  (sphinx-book-theme: <binderhub>/v2/gh/<repo>/<ref>?urlpath=tree/<source>) at binder/live_book.py,
   *  which installs this site's wheel and opens this site's notebook of the page (_ext/live_code/notebooks.py). */
  function pointAtThisPage(link) {
    const config = pageConfig();
    if (!config || !config.notebook) return;
    const url = new URL(link.href);
    if (!/^tree\//.test(url.searchParams.get("urlpath") || "")) return;
    const open = new URLSearchParams({ site: ASSETS, notebook: config.notebook });
    url.searchParams.set("urlpath", "live-book/open?" + open.toString());
    link.href = url.href;
  }

  ["click", "auxclick"].forEach(function (type) { // auxclick: a middle click opens it in a new tab
    document.addEventListener(type, function (event) {
      const link = event.target.closest && event.target.closest('a[href*="/v2/gh/"]');
      if (link) pointAtThisPage(link);
    }, true);
  });

  window.initThebe = function () {
    if (launched) return statusBox().scrollIntoView({ block: "nearest" });
    launched = true;
    launch();
  };

  readFragment();
})();
