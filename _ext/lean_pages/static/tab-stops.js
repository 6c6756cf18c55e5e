// lean_pages: the theme's tab stops on scrollable code blocks, notebook outputs and tables, measured
// only near the view. pydata-sphinx-theme measured every one of them at load (and after each resize
// or change of the page), which lays out the sections below the fold that lean-pages.css leaves
// unrendered (content-visibility: auto); its call is removed from the theme's script (tab_stops.py).
// Until it is measured, a block is a tab stop (a scrollable one is never out of reach of the keyboard);
// near the view, it stays one only if it scrolls, and is measured again whenever its size changes.
(() => {
  "use strict";
  const SELECTOR = "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, "
    + ".pst-scrollable-table-container";
  const measure = (el) => {
    el.tabIndex = el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight ? 0 : -1;
  };
  const resized = new ResizeObserver((entries) => entries.forEach((entry) => measure(entry.target)));
  const near = new IntersectionObserver((entries) => entries.forEach((entry) => {
    if (entry.isIntersecting) {
      near.unobserve(entry.target);
      resized.observe(entry.target);  // measures it now, and when its size changes
    }
  }), { rootMargin: "100% 0px" });
  const watch = (root) => {
    const found = root.matches?.(SELECTOR) ? [root] : [];
    found.push(...(root.querySelectorAll?.(SELECTOR) ?? []));
    for (const el of found) {
      if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
      near.observe(el);
    }
  };
  const start = () => {
    const main = document.getElementById("main-content");
    if (!main) return;
    watch(main);
    // Outputs that live code adds later, and blocks whose content it changes.
    new MutationObserver((records) => records.forEach((record) => {
      record.addedNodes.forEach((node) => node.nodeType === Node.ELEMENT_NODE && watch(node));
      const block = record.target.closest?.(SELECTOR);
      if (block && block.isConnected) near.observe(block);
    })).observe(main, { subtree: true, childList: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
