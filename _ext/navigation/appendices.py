"""The back matter lettered: the chapters of the toctree captioned "Appendices" are A, B, C.

Sphinx numbers every numbered toctree's documents (jupyter-book's
``sphinx_multitoc_numbering`` goes on across the parts): the notation page,
"How this book is checked" and the references came out as chapters 14 to
16. After Sphinx numbers the sections and figures (``env-get-updated``, its
``TocTreeCollector`` at the default priority), :func:`letter` replaces the
chapter number of each document of the ``Appendices`` toctree (its
sections' numbers, its figures', the references of every table of contents
to it and its title's, for the rel links) by its letter, in the toctree's
order: "A. Notation", "A.2", "Fig. A.1". The HTML and single-page builders
join a number's parts with ``str``, so a letter needs nothing else.

So that an unchanged book is not written again at each build (Sphinx
rewrites the documents whose numbers differ from the last build's),
:func:`unletter` puts the numbers back before Sphinx compares them.
"""

from __future__ import annotations

import string

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import url_re

#: The caption of the root's toctree whose documents are lettered (``_toc.yml``).
CAPTION = "Appendices"


def appendix_documents(env: BuildEnvironment) -> list[str]:
    """The documents of the root's toctree captioned :data:`CAPTION`, in order (none if it has none)."""
    root = env.config.root_doc
    if root not in env.all_docs:
        return []
    for toctree in env.get_doctree(root).findall(addnodes.toctree):
        if toctree.get("caption") == CAPTION:
            return [ref for _, ref in toctree["entries"] if ref != "self" and not url_re.match(ref)]
    return []


def _lettered(number, chapter, letter):
    """``number`` (a tuple or list) with its first part ``chapter`` replaced by ``letter``; others unchanged."""
    if not number or number[0] != chapter:
        return number
    return type(number)([letter, *number[1:]])


def unletter(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Put back the numbers :func:`letter` replaced, for Sphinx to compare (``env-get-updated``, first)."""
    saved = getattr(env, "book_appendix_numbers", {})
    for doc, (secnumbers, fignumbers) in saved.items():
        if doc in env.toc_secnumbers:
            env.toc_secnumbers[doc] = secnumbers
        if doc in env.toc_fignumbers:
            env.toc_fignumbers[doc] = fignumbers
    return []


def letter(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Letter the appendices' numbers (``env-get-updated``, after Sphinx numbered them)."""
    env.book_appendix_numbers = {}
    for k, doc in enumerate(appendix_documents(env)):
        secnumbers = env.toc_secnumbers.get(doc)
        title = secnumbers.get("") if secnumbers else None
        if not title:  # not numbered
            continue
        chapter, mark = title[0], string.ascii_uppercase[k]
        fignumbers = env.toc_fignumbers.get(doc, {})
        env.book_appendix_numbers[doc] = (secnumbers, fignumbers)
        env.toc_secnumbers[doc] = {anchor: _lettered(n, chapter, mark) for anchor, n in secnumbers.items()}
        env.toc_fignumbers[doc] = {kind: {ident: _lettered(n, chapter, mark) for ident, n in numbers.items()}
                                   for kind, numbers in fignumbers.items()}
        for reference in env.tocs[doc].findall(nodes.reference):
            if reference.get("secnumber"):
                reference["secnumber"] = _lettered(reference["secnumber"], chapter, mark)
        if env.titles.get(doc) is not None and env.titles[doc].get("secnumber"):
            env.titles[doc]["secnumber"] = _lettered(env.titles[doc]["secnumber"], chapter, mark)
    return []


def setup(app: Sphinx) -> None:
    app.connect("env-get-updated", unletter, priority=400)
    app.connect("env-get-updated", letter, priority=600)
