"""The home page's reading time (``_ext/page_meta/reading_time.py``): the chapters' prose words, counted."""

from __future__ import annotations

import pytest
from sphinx_external_toc.parsing import parse_toc_yaml

from _ext.page_meta.reading_time import chapters, hours, prose_words
from tools import toc

SOURCE = """---
kernelspec:
  name: python3
---

# A title

(a-label)=
:::{div} chapter-goals
Three words here.
:::

Some prose with $x^2 + y$ math and a {doc}`reference-target` role.

```{code-cell} ipython3
:tags: [remove-cell]

these are not counted at all
```

$$
\\text{nor this display}
$$

% nor a comment
"""


def test_only_the_prose_is_counted():
    # "A title", "Three words here", "Some prose with math and a role": 2 + 3 + 7
    assert prose_words(SOURCE) == 12


@pytest.mark.parametrize(("words", "text"), [
    (150 * 60 * 6, "about 6 hours"), (150 * 60 * 5.6, "about 5.5 hours"), (150 * 60 * 5.8, "about 6 hours"),
    (10, "about half an hour"),
])
def test_hours_to_the_nearest_half(words, text):
    assert hours(int(words), 150) == text


def test_the_chapters_are_the_books_without_its_root_and_appendices():
    expected = [d for d in toc.documents()[1:] if d.removeprefix("book/") not in ("notation", "checking", "references")]
    assert chapters(parse_toc_yaml(toc.TOC)) == expected
    assert len(expected) >= 13
