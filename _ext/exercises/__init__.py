"""Sphinx extension: what the book's exercises need beyond ``sphinx-exercise``.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``), on
top of `sphinx-exercise <https://ext-exercise.readthedocs.io>`_, whose
``exercise`` and ``solution`` directives (gated: ``exercise-start`` /
``exercise-end``, ``solution-start`` / ``solution-end``, so that code cells
can sit inside) number the exercises per chapter ("Exercise 5.2", referable
with ``{numref}`` and ``{ref}``) and tie each solution to its exercise. It

* writes each solution of the web pages as a native ``<details>`` element,
  closed, whose ``<summary>`` names the exercise ("Solution to Exercise
  5.2"): no script, keyboard and screen-reader use as the browser gives it,
  nothing moves when the page loads (:mod:`.solutions`);
* gathers, in the single-page build that ``make pdf`` prints, every
  chapter's solutions, open, in a "Solutions" section at the end of the
  chapter, so that the printed book keeps them all but apart from the
  exercises (:mod:`.solutions`);
* adds the ``answer-box`` directive, a box in the page that checks a
  reader's number or small matrix with no kernel (:mod:`.answers`)::

      ```{answer-box} ex-trick-temperature
      :label: $\\tau =$
      :rtol: 0.01
      ```

  Its argument names a value the chapter glued (``glue(name, value,
  display=False)`` in a code cell above it, the value computed by the
  package): a number, or a list of lists of numbers (``array.tolist()``)
  for a matrix. At build time the directive reads that value from the
  executed notebook (myst-nb's glue data) and writes it, with the
  tolerance, into the page; ``static/answer-box.js`` compares the reader's
  entries with it (within ``atol + rtol * |answer|``, numpy's ``isclose``)
  and says whether a wrong one is too high or too low, never by how much
  (that would give the answer away); after three wrong answers it offers
  the exercise's solution, which the directive finds at build time. A glued
  value that is missing, not a finite number or not a rectangular matrix is
  a build error naming the page and the line.

The stylesheet goes on every page (it becomes part of the one stylesheet all
pages share and cache, ``lean_pages.stylesheets``), the script on pages with
an answer box only; both are copied into the site's ``_static``.

Adding a chapter's exercises is content only: an ``## Exercises`` section at
the chapter's end with gated ``exercise-start`` / ``solution-start``
directives, code cells that compute each answer with the package and glue
it, an ``answer-box`` where the answer is a number or a matrix, and the
chapter's test asserting the glued answers (see the README).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from . import answers, solutions

STATIC = Path(__file__).resolve().parent / "static"
CSS_FILE = "exercises.css"
JS_FILE = "answer-box.js"


def html_handlers_for_singlehtml(app: Sphinx) -> None:
    """Let the single-page builder write every node the HTML builder writes (``builder-inited``).

    Sphinx takes a builder's node handlers from those registered under its
    name, and falls back to its format's ("html") only when there are none.
    sphinx-exercise registers handlers for "singlehtml", so every other
    extension's html-only nodes (myst-nb's hidden cells, the book's) became
    unknown to ``make pdf``'s build. The single page gets html's handlers,
    overridden by its own.
    """
    handlers = app.registry.translation_handlers
    if app.builder.name == "singlehtml" and "singlehtml" in handlers:
        handlers["singlehtml"] = {**handlers.get("html", {}), **handlers["singlehtml"]}


def add_static_path(app: Sphinx) -> None:
    """The static files, and the stylesheet on every page (``builder-inited``)."""
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file(CSS_FILE)


def add_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The script on pages with answer boxes."""
    if doctree is not None and answers.has_answer_box(doctree):
        app.add_js_file(JS_FILE, defer="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx_exercise")  # its nodes first: solutions.setup overrides their HTML
    answers.setup(app)
    solutions.setup(app)
    app.connect("builder-inited", html_handlers_for_singlehtml)
    app.connect("builder-inited", add_static_path)
    app.connect("html-page-context", add_assets)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
