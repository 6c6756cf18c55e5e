"""The repository's own tooling: ``make live``, and the helpers tests and benchmarks share.

Not part of the ``selfattention`` distribution: ``tools`` is importable from
the repository root only, which is where everything that uses it runs.
``make build``, ``make live`` and ``make bench`` run ``python -m tools.build``,
``python -m tools.live`` and ``python -m benchmarks`` from the root (``python -m`` puts the current
directory on ``sys.path``), and pytest adds the root through ``pythonpath``
in ``pyproject.toml``. Nothing adds it by hand.

* :mod:`tools.build`: ``make build``, built in ``_build/staging`` and published only when it succeeds;
* :mod:`tools.staging`: ``_build/``'s last good build, the staged one, and publishing one as the other;
* :mod:`tools.buildlock`: one build of a tree at a time (``flock`` on ``_build/.lock``);
* :mod:`tools.faults`: a write the file system refuses, said in one line with its fix;
* :mod:`tools.live`: ``make live``, the book with live code on a local Jupyter server;
* :mod:`tools.servers`: :class:`~tools.servers.StaticServer` (the built site) and
  :class:`~tools.servers.JupyterServer` (live kernels), started as ``make live`` starts them;
* :mod:`tools.lifetime`: a child process that ends when its parent does, however it ends, and a
  process that stops when its parent (``make``) has ended, or its terminal has hung up;
* :mod:`tools.chromium`: headless Chromium, launched one way for tests and benchmarks;
* :mod:`tools.workcopy`: ``make build`` in a copy of the working tree, or in a tiny book;
* :mod:`tools.toc`: the documents ``_toc.yml`` lists;
* :mod:`tools.measure`: the peak of memory a call allocates (memory tests, chapter tests, benchmarks).
"""

from pathlib import Path

#: The repository root (the directory holding ``pyproject.toml``).
ROOT = Path(__file__).resolve().parents[1]
#: Where ``make build`` writes the site, relative to a book's root.
SITE = Path("_build") / "html"
