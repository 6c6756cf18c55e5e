"""``{reading-time}`150```: how long the chapters take to read, at the words a minute the role names.

The home page says how long the book takes; the number is counted when the
book is built, from the chapters' sources: every document of the table of
contents but the root and the back matter (the root's toctree captioned
"Appendices"), their prose's words (not code cells, directive options,
formulas, comments or markup). The role writes "about 6 hours at 150 words a
minute", to the nearest half hour. The page that holds the role depends on
those sources (``note_dependency``), so an edited chapter makes the next
build count again, as a clean build would.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxRole

#: The caption of the back matter in ``_toc.yml``, not counted.
BACK_MATTER = "Appendices"
#: What of a MyST source is not prose: front matter, code cells, math, comments, directive and option lines.
NOT_PROSE = (
    re.compile(r"\A---\n.*?\n---\n", re.S),
    re.compile(r"^```\{code-cell\}.*?^```[ \t]*$", re.S | re.M),
    re.compile(r"\$\$.*?\$\$", re.S),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"^(?:%.*|```.*|:::.*|:[\w-]+:.*|\([\w-]+\)=)$", re.M),
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # roles: a reference's target, a glued number
)
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")


def prose_words(text: str) -> int:
    """The number of words of the prose of a MyST source."""
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return len(WORD.findall(text))


def chapters(site_map) -> list[str]:
    """The documents of sphinx-external-toc's ``site_map``, root and back matter aside, in order."""
    found = []

    def walk(docname: str) -> None:
        for subtree in site_map[docname].subtrees:
            if subtree.caption == BACK_MATTER:
                continue
            for item in subtree.items:
                if isinstance(item, str) and item in site_map:
                    found.append(item)
                    walk(item)

    walk(site_map.root.docname)
    return found


def hours(words: int, per_minute: int) -> str:
    """"about 6 hours", "about 5.5 hours", "about half an hour": to the nearest half hour."""
    halves = max(1, round(2 * words / per_minute / 60))
    if halves == 1:
        return "about half an hour"
    return f"about {halves // 2}{'.5' if halves % 2 else ''} hours"


class ReadingTime(SphinxRole):
    """``{reading-time}`<words a minute>```: "about 6 hours at 150 words a minute"."""

    def run(self):
        try:
            per_minute = int(self.text)
            if per_minute <= 0:
                raise ValueError
        except ValueError:
            msg = self.inliner.reporter.error(f"reading-time: words a minute must be a positive integer, "
                                              f"got {self.text!r}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        words = 0
        for docname in chapters(self.env.external_site_map):
            path = Path(self.env.doc2path(docname))
            self.env.note_dependency(str(path))
            words += prose_words(path.read_text(encoding="utf-8"))
        text = f"{hours(words, per_minute)} at {per_minute} words a minute"
        return [nodes.inline(text, text, classes=["reading-time"])], []
