/*
 * LaTeX that live code prints (sympy's Math(...), IPython's Latex), typeset by KaTeX,
 * loaded only once the reader starts Live Code.
 *
 * thebe 0.9.3 renders `text/latex` outputs only when its `mathjaxUrl` option is
 * set, and then drives MathJax 2's API: when it starts it adds
 * <script src="{mathjaxUrl}?config=..."> and calls MathJax.Hub.Config,
 * Register.StartupHook and Configured, then MathJax.Hub.Queue(["Typeset",
 * MathJax.Hub, element]) for each output. live-code.js passes this file as
 * `mathjaxUrl`; it answers that API with KaTeX's auto-render (katex.min.js and
 * contrib/auto-render.min.js of the npm package `katex`, which _ext/live_code
 * copies into _static/live-code/katex/). The page's own math is typeset when
 * the book is built (_ext/katex_math), which also puts KaTeX's stylesheet and
 * fonts on every page; nothing of this loads before the reader starts Live Code.
 */
(function () {
  "use strict";

  const base = new URL("live-code/katex/", document.currentScript.src); // _static/live-math.js
  let ready = null;

  function load(name) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL(name, base).href;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`could not load ${script.src}`));
      document.head.append(script);
    });
  }

  function typeset(element) {
    ready = ready || load("katex.min.js").then(() => load("auto-render.min.js"));
    return ready.then(() => window.renderMathInElement(element, {
      delimiters: [
        { left: "$$", right: "$$", display: true }, { left: "\\[", right: "\\]", display: true },
        { left: "$", right: "$", display: false }, { left: "\\(", right: "\\)", display: false },
      ],
      throwOnError: false, // a kernel may print anything: show KaTeX's red source rather than nothing
    })).catch((err) => console.warn("live-math:", err.message));
  }

  function run(job) {
    if (typeof job === "function") job();
    else if (Array.isArray(job) && job[0] === "Typeset") typeset(job[2]);
    // Other MathJax jobs (["Require", ...], ...) have nothing to do for KaTeX.
  }

  window.MathJax = {
    Hub: {
      config: {},
      Config() {},
      Configured() {},
      Register: { StartupHook(_name, callback) { callback(); } },
      Queue(...jobs) { jobs.forEach(run); },
    },
    Ajax: {},
    InputJax: { TeX: { resetEquationNumbers() {} } },
  };
})();
