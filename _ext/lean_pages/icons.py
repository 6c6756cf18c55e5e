"""The theme's Font Awesome icons as inline SVG: no 540 KB script, no 157 KB webfont.

pydata-sphinx-theme and sphinx-book-theme write icons as empty elements,
``<i class="fa-solid fa-bars"></i>``, and load Font Awesome's JavaScript
(``fontawesome.js``, Font Awesome Free 6.5.2) to replace each by an
``<svg>``, which also makes the browser fetch the icon webfont. :func:`inline_icons`
does that replacement once, when the page is rendered: each element becomes
the ``<svg>`` the script would have made (same classes, so the theme's CSS,
such as the colour-mode switch's ``.theme-switch[data-mode]`` rules, still
applies; ``aria-hidden``, as the script makes it), with the path of the icon
from the npm package ``@fortawesome/fontawesome-free`` of the same version
(``metadata/icon-families.json``, which also knows Font Awesome 5's names that
sphinx-book-theme still uses, such as ``fa-pencil-alt``). An icon it does not
know fails the build. ``title`` attributes go: the buttons carry their own
names, and a title different from that name is an accessibility defect
(WCAG 2.5.3, "label in name").

The icons are CC BY 4.0 (Fonticons, Inc.), as in the theme's bundle.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from sphinx.errors import ExtensionError

#: ``node_modules`` beside ``_ext/`` (installed by ``make assets``).
NODE_MODULES = Path(__file__).resolve().parents[2] / "node_modules"
PACKAGE = NODE_MODULES / "@fortawesome" / "fontawesome-free"
ICON = re.compile(r'<(i|span) class="([^"]*\bfa-[a-z0-9-]+[^"]*)"([^>]*)>\s*</\1>')
STYLES = {"fa": "solid", "fas": "solid", "fa-solid": "solid", "far": "regular", "fa-regular": "regular",
          "fab": "brands", "fa-brands": "brands"}
PREFIXES = {"solid": "fas", "regular": "far", "brands": "fab"}
TITLE = re.compile(r'\s+title="[^"]*"')


@functools.lru_cache(maxsize=1)
def icon_table(package: Path = PACKAGE) -> dict[tuple[str, str], tuple[int, int, str]]:
    """``{(style, name or alias): (width, height, path)}`` of every free icon of the npm package."""
    metadata = package / "metadata" / "icon-families.json"
    if not metadata.is_file():
        raise ExtensionError(f"{package} is missing: run `make assets` (npm ci) first")
    table = {}
    for name, icon in json.loads(metadata.read_text(encoding="utf-8")).items():
        names = [name, *icon.get("aliases", {}).get("names", [])]
        for style, svg in icon.get("svgs", {}).get("classic", {}).items():
            for alias in names:
                table[style, alias] = (int(svg["width"]), int(svg["height"]), svg["path"])
    return table


def theme_version(bundle_license: Path) -> str:
    """The Font Awesome version of the theme's bundle, from its licence notice."""
    found = re.search(r"Font Awesome Free (\d+\.\d+\.\d+)", bundle_license.read_text(encoding="utf-8"))
    return found.group(1) if found else "unknown"


def package_version(package: Path = PACKAGE) -> str:
    return json.loads((package / "package.json").read_text(encoding="utf-8"))["version"]


def icon_svg(match: re.Match, table: dict) -> str:
    """The ``<svg>`` for one icon element (a match of :data:`ICON`)."""
    classes = match.group(2).split()
    style = next((STYLES[c] for c in classes if c in STYLES), "solid")
    names = [c[3:] for c in classes if c.startswith("fa-") and c not in STYLES]
    name = next((n for n in names if (style, n) in table), None)
    if name is None:
        raise ExtensionError(f"lean_pages: Font Awesome {PACKAGE.name} has no {style} icon for {match.group(0)!r}")
    width, height, path = table[style, name]
    kept = " ".join(c for c in classes if c not in STYLES)
    attributes = TITLE.sub("", match.group(3)).strip()
    return (f'<svg class="svg-inline--fa {kept}"{" " + attributes if attributes else ""} aria-hidden="true" '
            f'focusable="false" data-prefix="{PREFIXES[style]}" data-icon="{name}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}">'
            f'<path fill="currentColor" d="{path}"></path></svg>')


def inline_icons(html: str) -> str:
    """``html`` with every Font Awesome icon element replaced by its inline ``<svg>``."""
    if "fa-" not in html:
        return html
    table = icon_table()
    return ICON.sub(lambda match: icon_svg(match, table), html)
