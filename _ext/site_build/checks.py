"""Build-time guards: no asset from another host, no widget state, no leaked paths.

Each guard reports through a Sphinx warning, and the book is built with
``--warningiserror --keep-going``, so any of them fails the build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from .paths import PROJECT_ROOT

logger = logging.getLogger(__name__)

# An element that makes the browser fetch its src/href (a link <a> does not).
FETCHING_TAG = re.compile(
    r"<(?:img|script|iframe|source|video|audio|embed|link)\b[^>]*?\s(?:src|href|srcset)="
    r"[\"']?((?:https?:)?//[^\"'\s>]+)", re.I)
WIDGET_MIMETYPES = ("application/vnd.jupyter.widget-view+json",
                    "application/vnd.jupyter.widget-state+json")
TEXT_SUFFIXES = {".html", ".js", ".css", ".txt", ".json", ".svg", ".xml"}
SKIPPED_DIRS = ()  # third-party bytes copied verbatim (none today)


def external_assets(context: dict[str, Any]) -> list[str]:
    """URLs on other hosts that a page's scripts, stylesheets or body would load."""
    assets = [getattr(f, "filename", str(f)) for f in
              [*context.get("script_files", []), *context.get("css_files", [])]]
    urls = [a for a in assets if re.match(r"(?:[a-z]+:)?//", a or "", re.I)]
    return urls + FETCHING_TAG.findall(context.get("body", "") or "")


def no_external_assets(app: Sphinx, pagename: str, templatename: str,
                       context: dict[str, Any], doctree: Any) -> None:
    """Warn about every asset of the page that is not served by the site."""
    for url in external_assets(context):
        logger.warning("page %s loads %s from another host; serve it from the site",
                       pagename, url, type="site_build", subtype="external")


def no_widget_state(app: Sphinx, pagename: str, templatename: str,
                    context: dict[str, Any], doctree: Any) -> None:
    """Warn if a page embeds ipywidgets views or state: their model ids are random.

    A static page shows a still output instead; live widgets come from a kernel.
    """
    scripts = " ".join(str(getattr(f, "attributes", "")) for f in context.get("script_files", []))
    embedded = (context.get("body", "") or "") + scripts
    for mimetype in WIDGET_MIMETYPES:
        if mimetype in embedded:
            logger.warning("page %s embeds %s (random model ids, dead controls); show a still "
                           "output instead", pagename, mimetype, type="site_build", subtype="widgets")


def leaked_paths(outdir: Path, secrets: list[str]) -> dict[str, str]:
    """``{relative file: leaked path}`` for text files of ``outdir`` containing a secret."""
    found = {}
    for path in sorted(outdir.rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        if path.suffix not in TEXT_SUFFIXES or relative.startswith(SKIPPED_DIRS) or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        hit = next((s for s in secrets if s in text), None)
        if hit:
            found[relative] = hit
    return found


def no_leaked_paths(app: Sphinx, exception: Exception | None) -> None:
    """Warn if an absolute path of this build (source, output) appears in the site."""
    if exception is not None or app.builder.format != "html":
        return
    roots = {str(Path(p).resolve()) for p in (app.srcdir, Path(app.outdir).parent, PROJECT_ROOT)}
    secrets = sorted(roots - {"/"}, key=len, reverse=True)
    for relative, hit in leaked_paths(Path(app.outdir), secrets).items():
        logger.warning("%s contains the build machine's path %s", relative, hit,
                       type="site_build", subtype="path")
