"""Solutions: closed ``<details>`` on the web pages, gathered at each chapter's end in the printed book.

``sphinx-exercise`` writes a solution as a ``<div class="admonition">``
whose title links to its exercise; collapsing it is left to
sphinx-togglebutton's script, which hides the content only once the page has
loaded and names its button "Toggle hidden content" whatever it shows. Here,
for the web pages (builders ``html`` and ``dirhtml``), a post-transform
(:class:`SolutionsAsDetails`, after sphinx-exercise has resolved the titles)
replaces the title by a :class:`solution_summary` ("Solution to Exercise
5.2", the text of that title without its link, which a ``<summary>`` must
not hold), and the solution is written as ``<details>``: closed until the
reader opens it, by mouse, keyboard or screen reader, with no script.

In the single-page build (``make pdf``), :func:`gather_solutions` moves
every solution of a chapter, in order, into a :class:`gathered_solutions`
block at the end of that chapter, under the heading "Solutions"; there they
keep sphinx-exercise's open admonition and its title, which links back to
the exercise. Printed, no solution is lost, and none sits beside its
exercise.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import (
    depart_solution_node,
    exercise_enumerable_node,
    exercise_node,
    solution_node,
    visit_solution_node,
)

SOLUTIONS_HEADING = "Solutions"


class solution_summary(nodes.TextElement):
    """The ``<summary>`` of a solution written as ``<details>``."""


class gathered_solutions(nodes.General, nodes.Element):
    """A chapter's solutions, at its end, in the printed book: ``docname`` names the chapter."""


class UniqueContentIds(SphinxPostTransform):
    """sphinx-exercise gives the content of every exercise the id ``exercise-content`` (and of every
    solution ``solution-content``): one id many times in a page. Each becomes ``<label>-content``."""

    default_priority = 30

    def run(self, **kwargs) -> None:
        for node in self.document.findall(lambda n: isinstance(n, exercise_node | exercise_enumerable_node
                                                               | solution_node)):
            for child in node.children:
                if isinstance(child, nodes.section) and child["ids"] in (["exercise-content"], ["solution-content"]):
                    child["ids"] = [f"{node['label']}-content"]


class SolutionsAsDetails(SphinxPostTransform):
    """Give every solution a summary instead of its title, for the web pages."""

    default_priority = 30  # after sphinx-exercise's ResolveTitlesInSolutions (21)
    builders = ("html", "dirhtml")

    def run(self, **kwargs) -> None:
        for node in self.document.findall(solution_node):
            if node.children and isinstance(node.children[0], nodes.title):
                node.children[0].replace_self(solution_summary("", node["title"]))
            node["details"] = True


def visit_solution(self, node) -> None:
    if node.get("details"):
        self.body.append(self.starttag(node, "details", CLASS="admonition"))
    else:
        visit_solution_node(self, node)


def depart_solution(self, node) -> None:
    if node.get("details"):
        self.body.append("</details>\n")
    else:
        depart_solution_node(self, node)


def visit_summary(self, node) -> None:
    self.body.append('<summary class="admonition-title">')


def depart_summary(self, node) -> None:
    self.body.append("</summary>\n")


def visit_gathered(self, node) -> None:
    ident = f"solutions-{node['docname'].replace('/', '-')}"
    self.body.append(f'<section class="gathered-solutions" id="{ident}">\n<h2>{SOLUTIONS_HEADING}</h2>\n')


def depart_gathered(self, node) -> None:
    self.body.append("</section>\n")


def gather_solutions(app, doctree, docname: str) -> None:
    """In the single-page build, move each chapter's solutions to its end (``doctree-resolved``).

    The single page holds every chapter in an ``addnodes.start_of_file``
    (``docname``), its first section being the chapter.
    """
    if app.builder.name != "singlehtml":
        return
    for start in list(doctree.findall(addnodes.start_of_file)):
        chapter = next((child for child in start.children if isinstance(child, nodes.section)), None)
        found = [] if chapter is None else list(chapter.findall(solution_node))
        if not found:
            continue
        block = gathered_solutions(docname=start["docname"])
        for solution in found:
            solution.parent.remove(solution)
            block += solution
        chapter += block


def setup(app) -> None:
    app.add_node(solution_node, override=True, html=(visit_solution, depart_solution),
                 singlehtml=(visit_solution, depart_solution))
    # singlehtml has handlers of its own (sphinx-exercise's), which replace html's: both are given.
    app.add_node(solution_summary, html=(visit_summary, depart_summary), singlehtml=(visit_summary, depart_summary))
    app.add_node(gathered_solutions, html=(visit_gathered, depart_gathered),
                 singlehtml=(visit_gathered, depart_gathered))
    app.add_post_transform(UniqueContentIds)
    app.add_post_transform(SolutionsAsDetails)
    app.connect("doctree-resolved", gather_solutions)
