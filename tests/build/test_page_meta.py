"""``_ext/page_meta``: the toggle of a page's collapsed first code cell says what it holds.

The built pages' toggles are checked in the browser tests
(``tests/browser/test_page_budgets.py``); here, which code gets which name.
"""

from __future__ import annotations

import pytest

from _ext.page_meta import set_up_label


@pytest.mark.parametrize(("code", "label"), [
    ("import numpy as np\nfrom myst_nb import glue\n", "the imports"),
    ("import numpy as np\n\nx = np.arange(3)\nglue('x', x)\n", "the imports and set-up"),
    ("fig = plot(x)\nglue('fig', fig)\n", None),  # plotting code: not set-up, the default name
    ("%matplotlib inline\nimport numpy as np\n", None),  # IPython, not Python: the default name
    ("", None),
])
def test_a_set_up_cell_is_named_for_what_it_holds(code, label):
    assert set_up_label(code) == label
