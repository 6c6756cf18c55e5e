r"""One render-blocking stylesheet a page, not sixteen: the head's stylesheets joined into one file.

The theme, Sphinx and six extensions each link a stylesheet, and a page
paints nothing until every one of them has arrived. On a slow phone
network (Lighthouse's preset: 150 ms a round trip, six connections to a
host) sixteen requests take three rounds of round trips, and the largest
paint of a chapter came after 3 s. :class:`Bundler` (the ``bundling`` Jinja
filter on the head's ``css`` block) replaces the stylesheets that a page links from
``_static`` for every medium with one link, at the first one's place, to a
file that joins them in their order (:func:`joined`); a stylesheet for
some media only (print), or one from another host, keeps its own link.

The joined file is named by the list of files it holds (pages that link
the same stylesheets share it; a page with another list gets its own), and
its ``?v=`` is a checksum of their links, which carry Sphinx's checksums of
their contents: a changed stylesheet changes the link. It is written at
``build-finished``, from the files the build copied into ``_static``, so
it equals them. Joining them:

* each ``url()`` is rewritten to be relative to ``_static``, where the
  joined file is (KaTeX's ``fonts/...`` becomes ``katex/fonts/...``);
* ``@charset`` rules go (the joined file starts with one) and so do source
  map comments (the map belongs to the file it was made for); an
  ``@import`` fails the build (it is valid only at the top of a file);
* the theme's Font Awesome glyph rules go (:data:`GLYPH_RULE`, 1,883
  ``.fa-NAME:before{content:...}`` rules, 72 KB): the pages have no
  element that they would style, since :mod:`.icons` writes every icon as
  inline SVG (``test_page_budgets`` checks that no page has one);
* a selector goes when it asks for a class that nothing in the site could
  set (:func:`used_only`): no page (``.html``) and no script (``.js``)
  names it, or a prefix of it that ends in ``-`` (a script that writes
  ``ae-key-${key}``), and a rule goes with its last selector. A class
  inside ``:not()``, ``:is()``, ``:has()`` or an attribute selector does
  not count (``:not(.x)`` matches more without ``.x``). The theme's
  stylesheet holds Bootstrap's utilities and components, most of which
  no page uses: the joined file fell from 74 to 36 KB gzipped, which
  every page loads before it paints.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path

import tinycss2
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

#: A ``<link rel="stylesheet">`` element, with the newline that ends its line.
LINK = re.compile(r'[ \t]*<link\b(?=[^>]*\brel="stylesheet")[^>]*>\n?')
HREF = re.compile(r'\bhref="([^"]*)"')
MEDIA = re.compile(r'\bmedia="([^"]*)"')
STATIC = "_static/"
#: A rule of Font Awesome that only gives the glyph of ``.fa-NAME`` icons (a selector list of them).
GLYPH_RULE = re.compile(r'(?<=[};])(?:\.fa-[\w-]+:(?:before|after),)*\.fa-[\w-]+:(?:before|after)'
                        r'\{content:"(?:[^"\\]|\\.)*"\}')
URL = re.compile(r'url\(\s*(["\']?)([^"\')]*)\1\s*\)')
CHARSET = re.compile(r'@charset\s+"[^"]*"\s*;\s*')
SOURCE_MAP = re.compile(r'/\*# sourceMappingURL=[^*]*\*/\s*')
IMPORT = re.compile(r'@import\b')
PREFIX = "stylesheets-"
#: A class a selector asks for, and a word of a page or a script (a class it could set, or the prefix of one).
CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
WORD = re.compile(r"[_a-zA-Z][\w-]*")
#: A prefix a script completes into a class name: ``ae-key-${key}`` in a template, ``"ae-key-" + key``.
#: Found from the end: the dash and what completes it, then the prefix before it (scanning from a dash is fast).
COMPLETED = re.compile(r"""-(?:\$\{|["']\s*\+)""")
CLASS_PREFIX = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*-$")
#: At-rules that hold rules, whose rules are kept or dropped as the top level's are.
GROUPING = frozenset({"media", "supports", "layer", "container"})


def bundle_name(paths: list[str]) -> str:
    """The joined file of ``paths`` (relative to ``_static``), relative to ``_static``."""
    return f"{PREFIX}{hashlib.sha256(' '.join(paths).encode()).hexdigest()[:12]}.css"


def rebased(css: str, path: str) -> str:
    """``css`` of ``path`` (relative to ``_static``) with each relative ``url()`` made relative to ``_static``."""
    def rebase(found: re.Match) -> str:
        target = found[2].strip()
        if not target or re.match(r"^(?:[a-z][\w+.-]*:|/|#)", target, re.I):
            return found[0]
        return f'url("{posixpath.normpath(posixpath.join(posixpath.dirname(path), target))}")'
    return URL.sub(rebase, css)


def site_words(outdir: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """The words of every page and script of the site at ``outdir``, and those that are a class's prefix."""
    words, prefixes = set(), set()
    for path in [*outdir.rglob("*.html"), *outdir.rglob("*.js")]:
        text = path.read_text(encoding="utf-8", errors="replace")
        words.update(WORD.findall(text))
        prefixes.update(found[0] for end in COMPLETED.finditer(text)
                        if (found := CLASS_PREFIX.search(text, max(0, end.start() - 80), end.start() + 1)))
    return frozenset(words), tuple(sorted(prefixes))


def top_level(selector: str) -> str:
    """``selector`` without what is inside its brackets: the arguments of ``:not()``... and attribute selectors."""
    kept, depth = [], 0
    for char in selector:
        depth += char in "(["
        if depth == 0:
            kept.append(char)
        depth -= char in ")]"
    return "".join(kept)


def selector_list(prelude: str) -> list[str]:
    """A rule's selectors: its prelude split at the commas outside brackets."""
    selectors, depth, start = [], 0, 0
    for k, char in enumerate(prelude):
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            selectors.append(prelude[start:k])
            start = k + 1
    return [*selectors, prelude[start:]]


def used_only(css: str, words: tuple[frozenset[str], tuple[str, ...]]) -> str:
    """``css`` without the selectors that ask for a class no page or script names (see the module's docstring)."""
    names, prefixes = words

    def can_match(selector: str) -> bool:
        return all(name in names or name.startswith(prefixes) for name in CLASS.findall(top_level(selector)))

    def kept(rules: list) -> list:
        found = []
        for rule in rules:
            if rule.type == "qualified-rule":
                selectors = selector_list(tinycss2.serialize(rule.prelude))
                matching = [selector for selector in selectors if can_match(selector)]
                if not matching:
                    continue
                if len(matching) < len(selectors):
                    rule.prelude = tinycss2.parse_component_value_list(",".join(matching))
            elif rule.type == "at-rule" and rule.lower_at_keyword in GROUPING and rule.content is not None:
                inner = kept(tinycss2.parse_rule_list(rule.content))
                if not any(r.type in ("qualified-rule", "at-rule") for r in inner):
                    continue
                rule.content = inner
            found.append(rule)
        return found

    return tinycss2.serialize(kept(tinycss2.parse_stylesheet(css)))


#: The start of a joined file: the files it joins.
HEADER = re.compile(r'@charset "UTF-8";\n/\* lean_pages joins: ([^*]*) \*/\n')


def joined(static: Path, paths: list[str], words: tuple[frozenset[str], tuple[str, ...]] | None = None) -> str:
    """The stylesheets ``paths`` (relative to ``static``), in their order, as one stylesheet.

    With ``words`` (:func:`site_words`), each keeps only the selectors that can match (:func:`used_only`).
    """
    parts = [f'@charset "UTF-8";\n/* lean_pages joins: {" ".join(paths)} */\n']
    for path in paths:
        source = static / path
        if not source.is_file():
            raise ExtensionError(f"lean_pages: {path}, linked in a page's head, is not in {static}")
        css = SOURCE_MAP.sub("", CHARSET.sub("", source.read_text(encoding="utf-8")))
        if IMPORT.search(re.sub(r"/\*.*?\*/", "", css, flags=re.S)):
            raise ExtensionError(f"lean_pages: {path} has an @import, which only the top of a stylesheet may "
                                 "hold: it cannot be joined with the others (link it from a template instead)")
        css = GLYPH_RULE.sub("", rebased(css, path))
        if words is not None:
            css = used_only(css, words)
        parts.append(f"/* ---- {path} ---- */\n{css.strip()}\n")
    return "\n".join(parts)


class Bundler:
    """The ``bundling`` filter, and the joined files that the pages it filtered link (written when the build ends).

    A joined file starts with the list of the files it joins (:data:`HEADER`). When the build ends, the
    joined files of the pages it wrote are written; another one in ``_static`` is removed if every page
    was written (no page links it: a rebuild leaves what a clean build leaves), and else rewritten from
    its own list (a page this build did not write may link it). The lists are recorded as pages are
    written, in the main process (``site_build.parallel`` keeps Sphinx from writing in parallel).
    """

    def __init__(self) -> None:
        self.bundles: dict[str, list[str]] = {}
        self.written: set[str] = set()

    def __call__(self, html: str) -> str:
        links = [(found, href[1]) for found in LINK.finditer(html) if (href := HREF.search(found[0]))]
        ours = [(found, href) for found, href in links if STATIC in href and not re.match(r"[a-z][\w+.-]*:|//", href)
                and (MEDIA.search(found[0]) or [None, "all"])[1] == "all"]
        if len(ours) < 2:
            return html
        static_hrefs = [href.split(STATIC, 1)[1] for _, href in ours]  # "katex/katex.min.css?v=83223527"
        paths = [href.split("?", 1)[0] for href in static_hrefs]
        name = bundle_name(paths)
        self.bundles[name] = paths
        version = hashlib.sha256(" ".join(static_hrefs).encode()).hexdigest()[:8]
        prefix = ours[0][1].split(STATIC, 1)[0]
        link = f'<link rel="stylesheet" type="text/css" href="{prefix}{STATIC}{name}?v={version}" />\n'
        first, rest = ours[0][0], {found.start() for found, _ in ours[1:]}
        return LINK.sub(lambda m: link if m.start() == first.start() else "" if m.start() in rest else m[0], html)

    def page_written(self, app: Sphinx, pagename: str, *args) -> None:
        """Note a page this build writes (``html-page-context``)."""
        self.written.add(pagename)

    def write(self, app: Sphinx, exception: Exception | None) -> None:
        """Write the joined files (``build-finished``), and rewrite or remove the others in ``_static``."""
        if exception is not None or app.builder.format != "html":
            return
        static = Path(app.outdir) / "_static"
        every_page = set(app.env.found_docs) <= self.written
        bundles = dict(self.bundles)
        for other in sorted(static.glob(f"{PREFIX}*.css")):
            if other.name in bundles:
                continue
            if every_page:  # no page links it
                other.unlink()
                continue
            listed = HEADER.match(other.read_text(encoding="utf-8", errors="replace"))
            if listed is None:
                raise ExtensionError(f"lean_pages: {other} does not start with the list of the stylesheets it "
                                     "joins (damaged?), and pages this build did not write may link it: "
                                     "`make clean build` writes every page and it anew")
            bundles[other.name] = listed[1].split()
        words = site_words(Path(app.outdir))
        for name, paths in sorted(bundles.items()):
            (static / name).write_text(joined(static, paths, words), encoding="utf-8")
