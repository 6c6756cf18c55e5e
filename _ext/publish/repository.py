"""The book's GitHub repository and branch come from the environment, never from a file.

``BOOK_REPOSITORY=owner/name`` and ``BOOK_BRANCH=<branch>`` (default
``main``): the workflow passes ``${{ github.repository }}`` and the run's
branch, ``make publish`` the ``origin`` remote's. They become the theme's
``repository_url`` / ``repository_branch``, which sphinx-book-theme reads
when the builder starts (the launch menu's Binder link) and ``live_code``
reads for thebe's Binder request.

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

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

REPOSITORY_ENV = "BOOK_REPOSITORY"
BRANCH_ENV = "BOOK_BRANCH"
DEFAULT_BRANCH = "main"
#: What jupyter-book's default configuration puts in ``repository.url`` when ``_config.yml`` has none.
JUPYTER_BOOK_DEFAULT_URL = "https://github.com/executablebooks/jupyter-book"
#: A GitHub ``owner/name``: owner of letters, digits and single hyphens; name of letters, digits, ``.-_``.
OWNER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[A-Za-z0-9._-]{1,100}")
#: A git branch name as GitHub allows it (no spaces, no ``..``, no leading ``-``).
BRANCH = re.compile(r"(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}")


def repository_from_env(environ: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """``(owner/name, branch)`` from :data:`REPOSITORY_ENV` and :data:`BRANCH_ENV`, or None if unpublished.

    Raises
    ------
    ConfigError
        When either variable is set to something GitHub would not accept.
    """
    repo = environ.get(REPOSITORY_ENV, "").strip()
    if not repo:
        return None
    if not OWNER_NAME.fullmatch(repo) or repo.endswith(".git"):
        raise ConfigError(f"{REPOSITORY_ENV}={repo!r}: expected the owner/name of a GitHub repository, "
                          "e.g. BOOK_REPOSITORY=octocat/self-attention-by-hand")
    branch = environ.get(BRANCH_ENV, "").strip() or DEFAULT_BRANCH
    if not BRANCH.fullmatch(branch):
        raise ConfigError(f"{BRANCH_ENV}={branch!r}: expected a git branch name")
    return repo, branch


def set_repository(app: Sphinx, config: Config) -> None:
    """Point the theme (launch menu) and ``live_code`` (thebe) at the repository from the environment."""
    options = config.html_theme_options
    named = options.get("repository_url", "")
    if named and named.rstrip("/") != JUPYTER_BOOK_DEFAULT_URL:
        raise ConfigError(f"_config.yml names the repository {named!r}: remove repository.url and "
                          f"repository.branch; the build takes them from {REPOSITORY_ENV} and {BRANCH_ENV}")
    found = repository_from_env()
    if found:
        repo, branch = found
        options["repository_url"] = f"https://github.com/{repo}"
        options["repository_branch"] = branch
        return
    options["repository_url"] = ""
    options["repository_branch"] = ""
    options["launch_buttons"] = {**(options.get("launch_buttons") or {}), "binderhub_url": ""}
    # sphinx-book-theme builds its launch menu from these; without them it fails on a
    # notebook page (it unpacks None) instead of leaving the Binder link out.
    config.html_context = {**config.html_context, "github_url": "https://github.com",
                           "github_user": "", "github_repo": "", "github_version": ""}
