"""Bootstrap's script only when a reader first reaches for what uses it: ``static/bootstrap-on-demand.js``.

pydata-sphinx-theme 0.17 ends every page with Bootstrap's script (80 KB, with
Popper). Running it took 40 to 90 ms of a phone's main thread (4x CPU) on
every page, in a task of its own after the first paint; what the book uses of
it is two menus of the article header (``data-bs-toggle="dropdown"``: launch,
download). The theme's script also makes a tooltip for a collapse-sidebar
button, which the book's pages do not have; and the header buttons'
``data-bs-toggle="tooltip"`` are never made into tooltips (nothing calls
Bootstrap for them; their ``title`` shows).

:func:`bootstrap_on_demand` (a template filter) puts the book's small script
where Bootstrap's was, and hands it Bootstrap's URL; that script stands in for
``window.bootstrap`` and fetches the real one the first time a reader points
at, focuses or opens one of those menus, or a tooltip is shown. A theme
whose pages no longer end with Bootstrap's script fails the build, so that
the page does not silently keep it or lose it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from sphinx.errors import ExtensionError

#: The book's stand-in, under the extension's ``static`` directory (so under ``_static``).
SCRIPT = "bootstrap-on-demand.js"
#: The theme's script element for Bootstrap, its URL relative to the page.
BOOTSTRAP = re.compile(r'<script defer src="(?P<base>[^"]*?_static/)(?P<path>scripts/bootstrap\.js\?digest=\w+)">'
                       r"</script>")


def digest(static: Path) -> str:
    """A digest of the stand-in's text, for its URL (a changed script is fetched anew)."""
    return hashlib.sha256((static / SCRIPT).read_bytes()).hexdigest()[:12]


def bootstrap_on_demand(html: str, version: str) -> str:
    """``html`` (a page's end) with the stand-in loaded in place of Bootstrap's script, which it loads on demand."""
    found = list(BOOTSTRAP.finditer(html))
    if len(found) != 1:
        raise ExtensionError(f"lean_pages: {len(found)} script elements for Bootstrap at the end of a page, not 1 "
                             "(pydata-sphinx-theme changed?); see _ext/lean_pages/bootstrap_on_demand.py")
    match = found[0]
    stand_in = (f'<script defer src="{match["base"]}{SCRIPT}?v={version}" '
                f'data-bootstrap="{match["base"]}{match["path"]}"></script>')
    return html[:match.start()] + stand_in + html[match.end():]
