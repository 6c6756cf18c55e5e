/* lean_pages: Bootstrap's script (the theme's, 80 KB) only when a reader first reaches for what uses
   it (see _ext/lean_pages/bootstrap_on_demand.py). Run at every load, it held a phone's main thread
   for 40 to 90 ms; the book uses it for the article header's two menus (and the theme's script would
   make a tooltip for a collapse-sidebar button, which the book's pages do not have).

   Until it has run, window.bootstrap is a stand-in whose Tooltip (all the theme's script makes)
   passes show() and hide() on to a real tooltip once Bootstrap is there. Pointing at, touching or
   focusing a menu's button fetches Bootstrap; a click on a menu's button before it has run opens
   the menu once it has (later clicks are Bootstrap's own). A failed fetch is reported on the
   console, by URL, and tried again at the next reach. */
(function () {
  "use strict";
  const source = document.currentScript.dataset.bootstrap;
  const MENU = '[data-bs-toggle="dropdown"]';
  let loading = null;
  let pending = null;  // the menu button clicked while Bootstrap was on its way

  function load() {
    if (loading) return loading;
    loading = new Promise((resolve, reject) => {
      const script = Object.assign(document.createElement("script"), {src: source});
      script.addEventListener("load", () => resolve(window.bootstrap));
      script.addEventListener("error", () => reject(new Error(`Bootstrap's script did not load from ${source}`)));
      document.head.append(script);
    }).catch((error) => {  // what waited for it does nothing; the next reach for a menu tries again
      console.error("bootstrap-on-demand:", error.message);
      loading = null;
      return null;
    });
    return loading;
  }

  class Tooltip {
    constructor(element, options) {
      this.element = element;
      this.options = options;
    }
    forward(method) {
      this.wanted = method;  // the last call wins: a hide() before Bootstrap is there cancels a show()
      load().then((bootstrap) => {
        if (bootstrap && this.wanted === method) bootstrap.Tooltip.getOrCreateInstance(this.element, this.options)[method]();
      });
    }
    show() { this.forward("show"); }
    hide() { this.forward("hide"); }
  }

  function early(event) {
    if (loading && window.bootstrap !== standIn) return document.removeEventListener("click", early, true);
    const button = event.target.closest?.(MENU);
    if (!button) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    pending = pending === button ? null : button;  // a second click before then changes the reader's mind
    load().then((bootstrap) => {
      if (bootstrap && pending) bootstrap.Dropdown.getOrCreateInstance(pending).toggle();
      pending = null;
    });
  }

  function warm(event) {
    if (event.target.closest?.(MENU)) load();
  }

  const standIn = {Tooltip};
  window.bootstrap = standIn;
  document.addEventListener("click", early, true);
  for (const type of ["pointerover", "touchstart", "focusin"]) {
    document.addEventListener(type, warm, {capture: true, passive: true});
  }
})();
