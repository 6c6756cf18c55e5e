"""``{chapter}`content-attention``` : "chapter 9", linked, where prose names another chapter as a noun.

A chapter's title read mid-sentence ("the bilateral head of *Attention that
looks at content* compared values") is a title used as a noun; books write
"chapter 9". The number is Sphinx's own (the numbered toctree's, lettered
for the appendices by :mod:`.appendices`: "appendix B"), so it follows the
table of contents. ``{chapter}`Chapter <content-attention>``` writes the
word as given (a sentence's start). The role leaves a :class:`chapter_ref`
node that :func:`resolve` replaces, once the numbers are known, by a
reference to the page (Sphinx's ``get_relative_uri``: the HTML pages and the
single page of the PDF alike).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
EXPLICIT = re.compile(r"^(?P<word>[^<]*?)\s*<(?P<doc>[\w/-]+)>$")


class chapter_ref(nodes.Inline, nodes.TextElement):
    """A chapter named by its number, resolved when the numbers are known."""


def chapter_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{chapter}`stem``` or ``{chapter}`Word <stem>```: a :class:`chapter_ref` to ``book/stem``."""
    found = EXPLICIT.match(text.strip())
    word, stem = (found["word"], found["doc"]) if found else ("", text.strip())
    return [chapter_ref(rawtext, "", word=word, target=stem)], []


def resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace each :class:`chapter_ref` of ``docname`` by "chapter N" linked to its page."""
    env = app.builder.env
    folder = docname.rpartition("/")[0]
    for ref in list(doctree.findall(chapter_ref)):
        target = f"{folder}/{ref['target']}" if folder else ref["target"]
        number = env.toc_secnumbers.get(target, {}).get("")
        if target not in env.all_docs or not number:
            LOGGER.warning("{chapter}`%s`: no numbered chapter %s", ref["target"], target,
                           location=(docname, ref.line))
            ref.replace_self(nodes.Text(ref["target"]))
            continue
        appendix = isinstance(number[0], str)
        word = ref["word"] or ("appendix" if appendix else "chapter")
        text = f"{word} {'.'.join(map(str, number))}"
        link = nodes.reference("", "", internal=True, refuri=app.builder.get_relative_uri(docname, target))
        link += nodes.inline(text, text, classes=["chapter-ref"])
        ref.replace_self(link)


def setup(app: Sphinx) -> None:
    app.add_role("chapter", chapter_role)
    app.add_node(chapter_ref)
    app.connect("doctree-resolved", resolve)
