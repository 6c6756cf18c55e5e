"""Run in the reader's live kernel when Live Code connects (and after each restart); never in the build.

A chapter's cells end in ``glue(name, value, display=False)``: the build keeps
the value for the text and shows nothing in the cell. Live, that left a
figure cell blank. This makes ``myst_nb.glue`` show the value in the cell
when it is not displayed: a figure (anything with ``_repr_png_``, as the
book's figures have) is drawn, any other value printed as ``name = value``.
With ``display=True`` glue does what it always does. The static build never
runs this file, so what it glues is unchanged.
"""


def _live_code_glue():
    try:
        import myst_nb
    except ImportError:  # a kernel without myst_nb: the chapters' set-up cells will say so
        return
    if getattr(myst_nb.glue, "live_code", False):
        return
    import numbers

    from IPython.display import display as show

    recorded = myst_nb.glue

    def text(value):
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)):
            return f"{float(value):.6g}"
        return str(value)

    def glue(name, variable, display=True):
        if display:
            return recorded(name, variable, display=True)
        if hasattr(variable, "_repr_png_") or hasattr(variable, "_repr_html_"):
            show(variable)
        else:
            print(f"{name} = {text(variable)}")
        return None

    glue.live_code = True
    glue.__doc__ = recorded.__doc__
    myst_nb.glue = glue


_live_code_glue()
del _live_code_glue
