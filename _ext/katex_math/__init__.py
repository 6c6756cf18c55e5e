"""Math typeset when the book is built: KaTeX HTML and MathML in the page, no script.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``) on top
of ``sphinxcontrib-katex``'s prerendering: every ``math`` and ``math_block``
node (MyST ``$...$`` and ``$$...$$``, amsmath environments, math in figure
captions, and the ``text/latex`` outputs myst-nb turns into math blocks, such
as sympy's ``Math``) goes through one Node process that runs KaTeX, and the
page gets KaTeX's HTML (``aria-hidden``) beside MathML for screen readers.
Nothing typesets math in the reader's browser, and nothing in a formula is
focusable. This extension

* selects that renderer (:func:`use_katex`) with KaTeX from the project's
  ``node_modules`` (npm ``katex``, pinned to the version sphinxcontrib-katex
  was made for) instead of the copy in the wheel, so the HTML always matches
  the stylesheet and fonts the site serves; and makes KaTeX strict: a formula
  it cannot typeset is a build warning naming the page, line and formula
  (warnings are errors), instead of KaTeX's red source text in the page;
* copies ``katex.min.css`` and its woff2 fonts into ``_static/katex/`` when
  the builder starts (:func:`copy_katex`; sphinxcontrib-katex would link the
  stylesheet from a CDN), before pages are written so that Sphinx's
  ``?v=<checksum>`` is computed from the copy;
* starts the KaTeX server itself, one for each process that writes pages
  (:func:`server_of_this_process`), on a Unix
  socket as sphinxcontrib-katex does, but connecting only once Node accepts
  connections (sphinxcontrib-katex connects as soon as the socket file
  exists, which Node creates a moment before it listens: on a busy machine
  the build then failed with "Connection refused"). Not on a loopback TCP
  port: there each formula's request and answer are two small writes each,
  and Nagle's algorithm with delayed acknowledgements held every round trip
  for about 40 ms (86 ms a formula, against 1 ms on the Unix socket);
* gives a display formula the column's whole width (no room kept for an
  equation number the book does not use), and lets one still wider scroll
  inside its own box, with a shadow at each edge beyond which more of it
  lies, instead of overflowing out of reach (``static/katex-layout.css``;
  a formula too wide for a phone is better broken into aligned lines:
  ``tests/browser/test_layout.py``);
* preloads, on pages with math, the two fonts nearly every formula uses
  (:data:`PRELOADED_FONTS`), so that text set in them does not reflow when
  they arrive (:func:`preload_fonts`);
* typesets every glued number that Python wrote in e-notation as a power
  of ten, ``6.4e-06`` as 6.4 × 10⁻⁶ (:mod:`.numbers`);
* says in the build's log how many formulas it typeset and how long KaTeX
  took (:func:`report_typesetting`): the one part of writing the pages that
  runs outside Python.

The LaTeX that live code prints is typeset in the browser, by KaTeX, only
after the reader starts Live Code: see ``_ext/live_code``.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.fileutil import copy_asset

from . import numbers

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
#: ``node_modules`` beside ``_ext/`` (installed by ``make assets``).
NODE_MODULES = HERE.parents[1] / "node_modules"
#: Where the stylesheet and fonts live in the built site, under ``_static/``.
STATIC_DIR = "katex"
RENDERER = "katex_build_time"
#: KaTeX's options for every formula. sphinxcontrib-katex's prerendering ignores
#: ``katex_options`` (its issues 65 and 145); its server takes ``KATEX_DEFAULT_OPTIONS``.
OPTIONS = {"throwOnError": True, "strict": "error", "output": "htmlAndMathml"}
#: Seconds Node may take to start KaTeX's server on a busy machine (sphinxcontrib-katex: 5).
STARTUP_TIMEOUT = 60.0
#: Makes the KaTeX server end with the process that started it (loaded by Node first).
EXIT_WITH_PARENT = HERE / "exit-with-parent.js"
#: KaTeX_Main (text, digits, operators) and KaTeX_Math (italic letters).
PRELOADED_FONTS = ("KaTeX_Main-Regular", "KaTeX_Math-Italic")


def katex_dist() -> Path:
    """``node_modules/katex/dist``, checked to be the version sphinxcontrib-katex renders with."""
    import sphinxcontrib.katex as sphinx_katex

    manifest = NODE_MODULES / "katex" / "package.json"
    if not manifest.is_file():
        raise ExtensionError(f"{manifest.parent} is missing: run `make assets` (npm ci) first")
    version = json.loads(manifest.read_text())["version"]
    if version != sphinx_katex.katex_version:
        raise ExtensionError(f"{manifest.parent} is KaTeX {version}; sphinxcontrib-katex "
                             f"{sphinx_katex.__version__} renders with {sphinx_katex.katex_version}")
    return manifest.parent / "dist"


def use_katex(app: Sphinx, config: Config) -> None:
    """Prerender with the npm package's KaTeX, strictly; serve its stylesheet from the site."""
    import sphinxcontrib.katex as sphinx_katex

    config.html_math_renderer = RENDERER
    config.katex_prerender = True
    config.katex_js_path = str(katex_dist() / "katex.min.js")  # read by Node at build time only
    config.katex_css_path = f"{STATIC_DIR}/katex.min.css"  # relative to _static/
    sphinx_katex.KATEX_DEFAULT_OPTIONS.update(OPTIONS)


#: Formulas typeset by this process in this build, and the seconds they took.
TYPESET = {"formulas": 0, "seconds": 0.0}


def _located(visitor):
    """``visitor`` with KaTeX's refusal turned into a warning at the formula's source line, and timed."""
    import sphinxcontrib.katex as sphinx_katex

    def visit(self, node: nodes.Element) -> None:
        start, clock = len(self.body), time.perf_counter()
        server_of_this_process()
        try:
            visitor(self, node)
        except sphinx_katex.KaTeXError as err:
            del self.body[start:]  # the opening tag the visitor wrote before KaTeX refused
            logger.warning("KaTeX cannot typeset %r: %s", node.astext(), err,
                           location=node, type="katex_math", subtype="formula")
            raise nodes.SkipNode from err
        finally:
            TYPESET["formulas"] += 1
            TYPESET["seconds"] += time.perf_counter() - clock

    return visit


def report_typesetting(app: Sphinx, exception: Exception | None) -> None:
    """Log the formulas typeset in this build and KaTeX's time (``build-finished``)."""
    if app.builder.format == "html" and TYPESET["formulas"]:
        logger.info("katex_math: typeset %d formulas in %.2f s", TYPESET["formulas"], TYPESET["seconds"])


def start_katex_server(app: Sphinx) -> None:
    """Start this process's KaTeX server before any page is written (``builder-inited``).

    After sphinxcontrib-katex's own ``builder-inited`` handler, which names the
    ``katex.min.js`` the server loads.
    """
    if app.builder.format == "html":
        server_of_this_process()


#: The process whose server ``KaTeXServer.katex_server`` is.
_SERVER_PID: int | None = None


def server_of_this_process():
    """sphinxcontrib-katex's ``KaTeXServer`` for this process, started on a Unix socket if it has none.

    Sphinx writes pages in forked processes (``-j``): a child that used the
    server it inherited would interleave its requests with its siblings' on
    one socket. Each process gets a server of its own, on first use, started
    with sphinxcontrib-katex's command line (:data:`EXIT_WITH_PARENT` loaded
    first) and stopped when the process exits: by ``atexit`` in the main
    process, and in every case when Node sees the end of its standard input.
    """
    global _SERVER_PID
    from sphinxcontrib.katex import KaTeXServer

    if _SERVER_PID == os.getpid():
        return KaTeXServer.katex_server
    rundir = Path(tempfile.mkdtemp(prefix="sphinxcontrib_katex"))
    path = rundir / "katex.sock"
    node, *rest = KaTeXServer.build_command(socket=path)
    process = subprocess.Popen([node, "--require", str(EXIT_WITH_PARENT), *rest], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, cwd=rundir)
    KaTeXServer.katex_server = KaTeXServer(rundir, process, connect_when_listening(path, process))
    _SERVER_PID = os.getpid()
    atexit.register(KaTeXServer.terminate, KaTeXServer.katex_server)
    return KaTeXServer.katex_server


def connect_when_listening(path: Path, process: subprocess.Popen,
                           timeout: float = STARTUP_TIMEOUT) -> socket.socket:
    """A socket connected to the server at ``path``, retried until it accepts (or ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
        if process.poll() is not None:
            raise ExtensionError(f"the KaTeX server (Node) exited with status {process.returncode} "
                                 "before it listened")
        if time.monotonic() > deadline:
            process.kill()
            raise ExtensionError(f"the KaTeX server did not listen on {path} within {timeout:.0f} s")
        time.sleep(0.01)


def copy_katex(app: Sphinx) -> None:
    """Copy ``katex.min.css`` and its woff2 fonts into ``_static/katex/`` (unchanged files are skipped).

    Every browser that runs the site reads woff2, so the stylesheet's woff and
    ttf fallbacks are never requested and are not copied.
    """
    if app.builder.format != "html":
        return
    dist = katex_dist()
    target = Path(app.outdir) / "_static" / STATIC_DIR
    copy_asset(dist / "katex.min.css", target)
    copy_asset(dist / "fonts", target / "fonts", excluded=lambda name: not name.endswith(".woff2"))


def add_stylesheet(app: Sphinx) -> None:
    """The layout fix of ``static/katex-layout.css`` (wide formulas scroll on a phone)."""
    app.config.html_static_path.append(str(HERE / "static"))
    app.add_css_file("katex-layout.css")


def preload_fonts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    """On a page with math, ``<link rel="preload">`` the :data:`PRELOADED_FONTS`.

    The links go with the page's ``metatags`` (raw HTML in ``<head>``):
    ``add_css_file`` would add ``?v=<checksum>`` to the URL, which then would
    not match the stylesheet's ``url(fonts/...)`` and the font would load twice.
    """
    if doctree is None or next(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))), None) is None:
        return
    links = "".join(
        f'\n<link rel="preload" href="{context["pathto"](f"_static/{STATIC_DIR}/fonts/{font}.woff2", 1)}" '
        'as="font" type="font/woff2" crossorigin="anonymous" />' for font in PRELOADED_FONTS)
    context["metatags"] = context.get("metatags", "") + links


def setup(app: Sphinx) -> dict[str, Any]:
    import sphinxcontrib.katex as sphinx_katex

    app.setup_extension("sphinxcontrib.katex")
    app.add_html_math_renderer(RENDERER, inline_renderers=(_located(sphinx_katex.html_visit_math), None),
                               block_renderers=(_located(sphinx_katex.html_visit_displaymath), None))
    app.connect("config-inited", use_katex)
    app.add_transform(numbers.GluedPowers)
    app.connect("builder-inited", copy_katex)
    app.connect("builder-inited", add_stylesheet)
    app.connect("builder-inited", start_katex_server, priority=900)  # after sphinxcontrib-katex's
    app.connect("html-page-context", preload_fonts)
    app.connect("build-finished", report_typesetting)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
