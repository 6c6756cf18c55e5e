"""The theme's script without its tab-stop pass over the whole page; ``static/tab-stops.js`` does it near the view.

pydata-sphinx-theme 0.17's script ends by calling, at ``load``, the function
that gives every code block, notebook output and table that scrolls a tab stop
(its ``addTabStopsToScrollableElements``): it reads ``scrollWidth`` and
``clientWidth`` of each one, and again after every resize and every change to
the page. With the sections below the fold left unrendered
(``content-visibility: auto``, ``static/lean-pages.css``) each of those reads
made the browser lay out the section that holds the block: on the longest
chapters more than 10,000 layout objects, in tasks of several hundred
milliseconds on a phone's CPU, for blocks the reader has not scrolled to.

:func:`without_tab_stop_pass` removes that one call from the theme's script
(the function itself stays, unused), :func:`write_theme_script` writes the
result beside the book's own static files (as :data:`LEAN_SCRIPT`, named by a
digest of its content), and :func:`with_lean_theme_script` points the pages'
preload and script elements at it instead of the theme's file. A theme whose
script no longer ends with that call fails the build, instead of measuring twice.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from sphinx.errors import ExtensionError

#: Where the theme's script is, under a theme's ``static`` directory, and so under ``_static``.
THEME_SCRIPT = Path("scripts") / "pydata-sphinx-theme.js"
#: Where the theme's script without the pass is, under ``_static``.
LEAN_SCRIPT = Path("lean_pages") / "pydata-sphinx-theme.js"
#: The theme's script as the theme's templates link it (preloaded in the head, run at the end of the body).
THEME_SCRIPT_URL = re.compile(r'(?<=_static/)scripts/pydata-sphinx-theme\.js\?digest=\w+')
#: The theme's last statement: its tab-stop pass, at once if the page has loaded, else at ``load``.
TAB_STOP_CALL = re.compile(r'"complete"===document\.readyState\?(?P<name>\w+)\(\):'
                           r'window\.addEventListener\("load",(?P=name)\)')
#: What the function it calls starts with: a query of the blocks whose overflow it measures.
TAB_STOP_FUNCTION = 'function {name}(){{const e=()=>{{document.querySelectorAll(["pre",'
SOURCE_MAP = re.compile(r"\n//# sourceMappingURL=\S+\s*$")


def without_tab_stop_pass(script: str) -> str:
    """``script`` (the theme's minified script) without the call of its tab-stop pass."""
    calls = list(TAB_STOP_CALL.finditer(script))
    if len(calls) != 1 or TAB_STOP_FUNCTION.format(name=calls[0]["name"]) not in script:
        raise ExtensionError("lean_pages: pydata-sphinx-theme's script does not end with its tab-stop pass over "
                             "every code block (the theme changed?): it would lay out every unrendered section "
                             "at load; see _ext/lean_pages/tab_stops.py")
    found = calls[0]
    # The source map describes the theme's file, not this one.
    return SOURCE_MAP.sub("\n", script[:found.start()] + "void 0" + script[found.end():])


#: The digest of the script :func:`write_theme_script` wrote last, for its URL.
WRITTEN = {"digest": ""}


def write_theme_script(theme_static: Path, out: Path) -> Path:
    """Write the theme's script without its tab-stop pass to ``out``/:data:`LEAN_SCRIPT`; returns ``out``."""
    script = without_tab_stop_pass((theme_static / THEME_SCRIPT).read_text())
    target = out / LEAN_SCRIPT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script)
    WRITTEN["digest"] = hashlib.sha256(script.encode()).hexdigest()[:20]
    return out


def with_lean_theme_script(html: str) -> str:
    """``html`` with the theme's script's URL replaced by that of :data:`LEAN_SCRIPT`."""
    if not WRITTEN["digest"]:
        raise ExtensionError("lean_pages: the theme's script without its tab-stop pass was not written")
    return THEME_SCRIPT_URL.sub(f"{LEAN_SCRIPT.as_posix()}?digest={WRITTEN['digest']}", html)
