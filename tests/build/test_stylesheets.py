r"""``_ext/lean_pages/stylesheets``: a page's stylesheets joined into one file, which holds what they held.

The filter replaces the links to ``_static`` stylesheets for every medium with
one link at the first one's place, keeps print-only and other hosts' links,
and names the joined file by its list and its version by the links'
checksums. :func:`joined` rebases ``url()``\ s onto ``_static``, drops
``@charset``, source maps and Font Awesome's glyph rules, and refuses an
``@import``. :meth:`Bundler.write` writes the joined files and removes or
rewrites the ones no page of the build linked. On the built site,
tests/browser/test_page_budgets.py checks that each page links one
render-blocking stylesheet and that the joined file holds every rule of the
files it joins but the glyph rules (parsed by tinycss2).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from sphinx.errors import ExtensionError

from _ext.lean_pages.stylesheets import Bundler, bundle_name, joined

HEAD = """<link rel="preload" href="../_static/katex/fonts/KaTeX_Main-Regular.woff2" as="font" />
<link href="../_static/basic.css?digest=abc" rel="stylesheet" />
<link rel="stylesheet" type="text/css" href="../_static/katex/katex.min.css?v=1" />
<link media="print" rel="stylesheet" type="text/css" href="../_static/print.css?v=2" />
<link rel="stylesheet" href="https://cdn.example.org/other.css" />
<link rel="stylesheet" type="text/css" href="../_static/lean-pages.css?v=3" />
<script defer src="../_static/doctools.js"></script>
"""
PATHS = ["basic.css", "katex/katex.min.css", "lean-pages.css"]


def test_a_pages_stylesheets_become_one_link_at_the_first_ones_place():
    bundler = Bundler()
    html = bundler(HEAD)
    name = bundle_name(PATHS)
    assert bundler.bundles == {name: PATHS}
    lines = html.splitlines()
    assert lines[0].startswith('<link rel="preload"')
    assert lines[1].startswith(f'<link rel="stylesheet" type="text/css" href="../_static/{name}?v=')
    assert lines[2:] == [HEAD.splitlines()[i] for i in (3, 4, 6)]  # print, another host's, the script


def test_the_joined_files_version_follows_its_links_checksums_and_not_the_pages_folder():
    version = Bundler()(HEAD).splitlines()[1].split("?v=")[1]
    at_root = Bundler()(HEAD.replace("../_static/", "_static/")).splitlines()[1]
    assert at_root.startswith(f'<link rel="stylesheet" type="text/css" href="_static/{bundle_name(PATHS)}?v={version}')
    changed = Bundler()(HEAD.replace("katex.min.css?v=1", "katex.min.css?v=9")).splitlines()[1]
    assert changed.split("?v=")[1] != version


def test_a_page_with_one_stylesheet_for_every_medium_keeps_its_links():
    bundler = Bundler()
    one = ('<link rel="stylesheet" href="_static/basic.css" />\n'
           '<link rel="stylesheet" media="screen" href="_static/screen.css" />\n'
           '<link rel="stylesheet" href="//cdn.example.org/_static/a.css" />\n')
    assert bundler(one) == one and bundler.bundles == {}


def write(static: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (static / path).parent.mkdir(parents=True, exist_ok=True)
        (static / path).write_text(text)


def test_joining_rebases_urls_on_static_and_drops_charsets_source_maps_and_glyph_rules(tmp_path):
    write(tmp_path, {
        "styles/theme.css": '@charset "UTF-8";\n.a{background:url(../img/a.png)}'
                            '.fa-b:before,.fa-c:after{content:"\\f00d"}.fa-d:before{content:"\\f0"}'
                            '.x,.fa-e:before{content:"\\f1"}.fa-f{font-size:2em}\n'
                            '/*# sourceMappingURL=theme.css.map*/\n',
        "katex/katex.min.css": "@font-face{src:url(fonts/K.woff2) format(\"woff2\"),url('fonts/K.ttf')}"
                               ".k{background:url(\"data:image/svg+xml;charset=utf-8,%3Csvg xmlns='http://w'\")}"
                               ".h{background:url(#m)}.g{background:url(https://e.org/g.png)}",
    })
    css = joined(tmp_path, ["styles/theme.css", "katex/katex.min.css"])
    assert css.startswith('@charset "UTF-8";\n/* lean_pages joins: styles/theme.css katex/katex.min.css */\n')
    assert css.count("@charset") == 1 and "sourceMappingURL" not in css
    assert 'url("img/a.png")' in css and 'url("katex/fonts/K.woff2")' in css and 'url("katex/fonts/K.ttf")' in css
    assert "url(\"data:image/svg+xml;charset=utf-8,%3Csvg xmlns='http://w'\")" in css
    assert "url(#m)" in css and "url(https://e.org/g.png)" in css
    assert ".fa-b" not in css and ".fa-d" not in css
    assert '.x,.fa-e:before{content:"\\f1"}' in css and ".fa-f{font-size:2em}" in css  # not glyph-only rules
    assert css.index("styles/theme.css ----") < css.index(".a{") < css.index("katex/katex.min.css ----")


def test_a_stylesheet_with_an_import_or_a_missing_one_fails_the_build(tmp_path):
    write(tmp_path, {"a.css": "/* @import in a comment is fine */ .a{}", "b.css": '.b{}\n@import "c.css";'})
    assert ".a{}" in joined(tmp_path, ["a.css"])
    with pytest.raises(ExtensionError, match=r"b\.css has an @import"):
        joined(tmp_path, ["a.css", "b.css"])
    with pytest.raises(ExtensionError, match=r"c\.css, linked in a page's head, is not in"):
        joined(tmp_path, ["a.css", "c.css"])


def finished_build(tmp_path: Path, found_docs: set[str]) -> SimpleNamespace:
    return SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"),
                           env=SimpleNamespace(found_docs=found_docs))


def test_a_build_writes_its_joined_files_and_removes_or_renews_the_others(tmp_path):
    static = tmp_path / "_static"
    write(static, {"basic.css": ".b{color:red}", "lean-pages.css": ".l{}", "katex/katex.min.css": ".k{}"})
    (tmp_path / "a.html").write_text('<p class="b l k"></p>')  # a page that uses the rules, so none is dropped
    old = ["basic.css", "lean-pages.css"]
    (static / bundle_name(old)).write_text(joined(static, old))
    write(static, {"basic.css": ".b{color:blue}"})
    bundler = Bundler()
    bundler(HEAD)
    bundler.page_written(None, "a")
    bundler.write(finished_build(tmp_path, {"a", "b"}), None)  # page b, not written, may link the old file
    assert ".b{color:blue}" in (static / bundle_name(old)).read_text()
    assert ".k{}" in (static / bundle_name(PATHS)).read_text()
    bundler.page_written(None, "b")
    bundler.write(finished_build(tmp_path, {"a", "b"}), None)  # every page written: no page links it
    assert sorted(p.name for p in static.glob("stylesheets-*.css")) == [bundle_name(PATHS)]


def test_a_damaged_joined_file_that_a_page_may_link_says_how_to_heal(tmp_path):
    static = tmp_path / "_static"
    write(static, {"basic.css": ".b{}", "katex/katex.min.css": ".k{}", "lean-pages.css": ".l{}",
                   bundle_name(["x.css"]): "garbage"})
    bundler = Bundler()
    bundler(HEAD)
    with pytest.raises(ExtensionError, match="make clean build"):
        bundler.write(finished_build(tmp_path, {"a", "b"}), None)
    bundler.page_written(None, "a")
    bundler.page_written(None, "b")
    bundler.write(finished_build(tmp_path, {"a", "b"}), None)
    assert not (static / bundle_name(["x.css"])).exists()
