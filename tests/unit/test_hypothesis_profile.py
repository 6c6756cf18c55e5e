"""The tests' hypothesis profile is the same whether or not the variable CI is set (``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

from tools import ROOT

# Prints the settings the tests run under after tests/conftest.py has loaded its profile, as pytest would load it.
SHOW_PROFILE = """
import runpy
from hypothesis import settings
runpy.run_path("tests/conftest.py")
print(repr(settings.default))
print(settings.default.database is None)
"""


def profile(**env) -> list[str]:
    """The loaded settings' repr, and whether they store no failing examples, in a fresh interpreter."""
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD")}
    done = subprocess.run([sys.executable, "-c", SHOW_PROFILE], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_the_profile_does_not_depend_on_the_ci_variable():
    """With CI set, hypothesis alone loads its "ci" profile (database=None), on which its pytest plugin recursed."""
    assert profile(CI="true") == profile()
    assert profile(CI="true")[-1] == "False"
    assert "deadline=None" in profile()[0]
