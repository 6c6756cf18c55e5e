// navigation: on a narrow screen the theme (pydata-sphinx-theme 0.17) shows the page's table of contents,
// and the book's, in a <dialog> that covers most of the screen. Choosing a section in it scrolled the page
// behind and left the dialog open; here the dialog closes as the link is chosen (the theme's "close"
// handler puts the sidebar back), and the browser follows the link.
(() => {
  "use strict";
  const DIALOGS = ["pst-secondary-sidebar-modal", "pst-primary-sidebar-modal"];
  const start = () => {
    for (const id of DIALOGS) {
      const dialog = document.getElementById(id);
      if (!dialog) continue;
      dialog.addEventListener("click", (event) => {
        if (dialog.open && event.target.closest?.("a[href]")) dialog.close();
      });
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
