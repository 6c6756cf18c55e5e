"""The in-context layer of the ``attention-explorer`` directive (``_ext/attention_explorer``): its element, its
script and its static picture."""

from __future__ import annotations

import json

from _ext import attention_explorer as ext
from selfattention.interactive import in_context_data as icd


def test_the_element_carries_the_data_and_the_kind():
    data_json = icd.in_context_explorer_json()
    html = ext.render_open("attention-explorer-0", data_json, "in-context") + ext.render_close("in-context")
    assert 'class="attention-explorer ae-kind-in-context"' in html
    start = html.index('class="attention-explorer-data">') + len('class="attention-explorer-data">')
    assert json.loads(html[start:html.index("</script>")]) == icd.in_context_explorer_data()
    assert "The three learners on the starting prompt" in html


def test_its_script_and_options_are_registered():
    assert ext.LAYER_JS_FILES["in-context"] == "in_context_explorer.js"
    assert (ext.STATIC / ext.LAYER_JS_FILES["in-context"]).is_file()
    assert ext.LAYER_OPTIONS["in-context"] == ("examples", "temperature", "eta")
    assert set(ext.LAYER_OPTIONS["in-context"]) <= set(ext.AttentionExplorer.option_spec)


def test_the_static_picture_is_a_png_of_the_starting_prompt():
    png = ext.fallback_png(icd.in_context_explorer_json(examples=5))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png != ext.fallback_png(icd.in_context_explorer_json(examples=6)), "drawn from the prompt"


def test_the_script_says_the_labels_with_the_chapters_letter():
    """Each example's value, read to a screen reader, names its label s, the chapter's letter (not y)."""
    script = (ext.STATIC / ext.LAYER_JS_FILES["in-context"]).read_text()
    assert "`input p = ${p.toFixed(2)}, label s = ${y.toFixed(2)}`" in script
    assert "label y" not in script and "y_j" not in script
