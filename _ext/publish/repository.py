"""The book's GitHub repository comes from the environment, never from a file; Binder's ref from ``binder/``.

``BOOK_REPOSITORY=owner/name``: the workflow passes ``${{ github.repository }}``,
``make publish`` the ``origin`` remote's. It becomes the theme's
``repository_url``, and the ref Binder launches, ``binder-<hash of binder/>``
(:mod:`.binder_ref`), its ``repository_branch``: sphinx-book-theme reads both
when the builder starts (the launch menu's Binder link) and ``live_code``
reads them for thebe's Binder request.

Without ``BOOK_REPOSITORY`` the book is unpublished: the launch menu keeps
"Live Code" (for ``make live``) but has no Binder link, and the page
configuration has ``"repo": ""``, for which ``live-code.js`` says that live
code on Binder needs the book to be published from a repository.

``_config.yml`` must not name a repository (``repository.url``): then
jupyter-book fills in its own default, :data:`JUPYTER_BOOK_DEFAULT_URL`,
which this module replaces; any other URL is a :class:`ConfigError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

from .binder_ref import environment_ref

REPOSITORY_ENV = "BOOK_REPOSITORY"
#: The repository whose ``binder/`` names Binder's ref: the one holding this extension.
ROOT = Path(__file__).resolve().parents[2]
#: What jupyter-book's default configuration puts in ``repository.url`` when ``_config.yml`` has none.
JUPYTER_BOOK_DEFAULT_URL = "https://github.com/executablebooks/jupyter-book"
#: A GitHub ``owner/name``: owner of letters, digits and single hyphens; name of letters, digits, ``.-_``.
OWNER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[A-Za-z0-9._-]{1,100}")


def repository_from_env(environ: Mapping[str, str] = os.environ) -> str | None:
    """``owner/name`` from :data:`REPOSITORY_ENV`, or None if unpublished.

    Raises
    ------
    ConfigError
        When it is set to something GitHub would not accept.
    """
    repo = environ.get(REPOSITORY_ENV, "").strip()
    if not repo:
        return None
    if not OWNER_NAME.fullmatch(repo) or repo.endswith(".git"):
        raise ConfigError(f"{REPOSITORY_ENV}={repo!r}: expected the owner/name of a GitHub repository, "
                          "e.g. BOOK_REPOSITORY=octocat/self-attention-by-hand")
    return repo


def set_repository(app: Sphinx, config: Config) -> None:
    """Point the theme (launch menu) and ``live_code`` (thebe) at the repository and Binder's ref."""
    options = config.html_theme_options
    named = options.get("repository_url", "")
    if named and named.rstrip("/") != JUPYTER_BOOK_DEFAULT_URL:
        raise ConfigError(f"_config.yml names the repository {named!r}: remove repository.url and "
                          f"repository.branch; the build takes the repository from {REPOSITORY_ENV} and "
                          "the ref from binder/")
    repo = repository_from_env()
    if repo:
        options["repository_url"] = f"https://github.com/{repo}"
        options["repository_branch"] = environment_ref(ROOT)
        return
    options["repository_url"] = ""
    options["repository_branch"] = ""
    options["launch_buttons"] = {**(options.get("launch_buttons") or {}), "binderhub_url": ""}
    # sphinx-book-theme builds its launch menu from these; without them it fails on a
    # notebook page (it unpacks None) instead of leaving the Binder link out.
    config.html_context = {**config.html_context, "github_url": "https://github.com",
                           "github_user": "", "github_repo": "", "github_version": ""}
