"""The package as a whole: light to import, one version, unique and documented public names."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import tomllib
from collections import Counter
from importlib.metadata import version
from pathlib import Path

import numpy as np

import selfattention
from selfattention.studies import bias_variance, dk_scaling, leave_one_out, noise_and_samples

SRC = Path(selfattention.__file__).resolve().parent
PYPROJECT = SRC.parents[1] / "pyproject.toml"


def all_modules():
    """Every public module of the package (the ones needing matplotlib, ipywidgets or sympy too)."""
    names = [info.name for info in pkgutil.walk_packages(selfattention.__path__, "selfattention.")
             if not any(part.startswith("_") for part in info.name.split("."))]
    return [selfattention, *(importlib.import_module(name) for name in names)]


def public_definitions():
    """(module name, name) of every public function and class defined in the package."""
    for module in all_modules():
        for name, obj in inspect.getmembers(module, lambda o: inspect.isfunction(o) or inspect.isclass(o)):
            if obj.__module__ == module.__name__ and not name.startswith("_"):
                yield module.__name__, name, obj


def test_import_needs_only_numpy():
    code = "import sys, selfattention; print(sorted(set(sys.modules) & {'matplotlib', 'scipy', 'sympy', " \
           "'ipywidgets', 'IPython'}))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_the_version_has_one_source_pyproject():
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert selfattention.__version__ == version("selfattention") == declared
    assert not re.search(r"__version__\s*=\s*[\"']", (SRC / "__init__.py").read_text()), "no literal version"


def test_the_top_level_exports_are_the_core_api():
    exported = {name: getattr(selfattention, name) for name in selfattention.__all__}
    assert sorted(exported) == selfattention.__all__
    for name, obj in exported.items():
        home = sys.modules[obj.__module__]
        assert home.__name__.startswith("selfattention.") and getattr(home, name) is obj


def test_every_public_name_is_unique_across_the_package():
    counts = Counter(name for _, name, _ in public_definitions())
    clashes = {name: [m for m, n, _ in public_definitions() if n == name] for name, k in counts.items() if k > 1}
    assert clashes == {}


def test_every_public_function_and_class_is_documented():
    for module, name, obj in public_definitions():
        doc = inspect.getdoc(obj) or ""
        assert len(doc) > 20, f"{module}.{name} needs a docstring"
        if inspect.isfunction(obj) and len(inspect.signature(obj).parameters) > 1:
            assert "Parameters\n----------" in doc or "Parameters are those of" in doc, f"{module}.{name}"


def test_math_docstrings_are_raw_strings():
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                segment = ast.get_source_segment(path.read_text(), body[0].value)
                if "\\" in segment:
                    assert segment.startswith(("r", "R")), f"{path.name}:{body[0].lineno} needs r\"\"\""


def test_no_module_is_named_or_documented_by_chapter():
    for path in sorted(SRC.rglob("*.py")):
        assert not re.search(r"[Cc]hapters? \d|\bch\d", path.read_text()), path


#: numpy's functions on its global random state.
LEGACY_RANDOM = ("seed", "get_state", "set_state", "random", "rand", "randn", "randint", "normal",
                 "standard_normal", "uniform", "choice", "permutation", "shuffle")


def test_no_function_draws_from_numpys_global_random_state(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("numpy's global random state was used")

    for name in LEGACY_RANDOM:
        monkeypatch.setattr(np.random, name, forbidden)
    selfattention.noisy_sine(10, 1.0, rng=1)
    selfattention.unit_noise(5, None)
    noise_and_samples.noise_levels(10, [0.1, 0.2], 0.01, rng=np.random.default_rng(2))
    noise_and_samples.error_vs_samples([10, 20], 0.3, 0.01, n_draws=2, rng=3)
    bias_variance.monte_carlo_parts(10, [0.01], draws=2, rng=4)
    dk_scaling.dk_scaling_experiment([1, 2], n_queries=3, n_pairs=3, rng=5)
    leave_one_out.loo_choices([10], [0.3], [6])
