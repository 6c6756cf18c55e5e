"""`make build` is strict: every problem below fails it, and a clean book passes.

Each case builds a tiny book that has the project's own ``_config.yml``,
extensions, ``Makefile`` and ``tools/build.py`` (so the real flags (warnings
are errors, nitpicky, keep going) and the real settings are what is tested),
with one defect; the failed build must leave no ``_build/html``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import ROOT, SITE, workcopy

pytestmark = pytest.mark.slow

GOOD = """# A good chapter

```{code-cell} ipython3
print(6 * 7)
```

(sec-good)=
## A section

See {ref}`sec-good` and the [landing page](index.md); $x^2$ is math.
"""

DEFECTS = {
    "broken cross-reference": ("See {numref}`fig-does-not-exist`.\n", "fig-does-not-exist"),
    "broken internal link": ("See [the missing chapter](missing-chapter.md).\n", "missing-chapter"),
    "broken doc reference": ("See {doc}`missing-chapter`.\n", "missing-chapter"),
    "failing cell": ("```{code-cell} ipython3\nraise RuntimeError('cell failed on purpose')\n```\n",
                     "cell failed on purpose"),
    "formula KaTeX cannot typeset": ("Math $\\frac{1}{\\notacommand{x}}$ here.\n", "KaTeX cannot typeset"),
    "unknown directive": ("```{not-a-directive}\nx\n```\n", "not-a-directive"),
    "asset from another host": ('<img src="https://example.com/logo.png" alt="logo">\n', "example.com"),
    "build path in the output": ("```{code-cell} ipython3\nimport os\nprint(os.getcwd())\n```\n",
                                 "contains the build machine's path"),
    "widget state in the page": ("```{code-cell} ipython3\nimport ipywidgets\nipywidgets.IntSlider()\n```\n",
                                 "embeds application/vnd.jupyter.widget"),
}


def build_tiny(tmp_path: Path, body: str) -> workcopy.BuildResult:
    book = workcopy.tiny_book(ROOT, tmp_path / "book", {"chapter": body})
    return workcopy.build(book, timeout=600)


def test_a_clean_tiny_book_builds(tmp_path):
    result = build_tiny(tmp_path, GOOD)
    assert result.ok, result.log[-3000:]
    assert "42" in (tmp_path / "book" / SITE / "book" / "chapter.html").read_text()


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_a_defect_fails_the_build(tmp_path, defect):
    text, mentioned = DEFECTS[defect]
    result = build_tiny(tmp_path, GOOD + "\n" + text)
    assert not result.ok, f"the build passed despite a {defect}"
    assert mentioned in result.log, result.log[-3000:]
    # A failed clean build publishes nothing, and says so last (before make's own line).
    assert not (tmp_path / "book" / SITE).exists()
    assert "No site was published" in "\n".join(result.log.strip().splitlines()[-3:]), result.log[-3000:]
