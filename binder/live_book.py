"""The plain Binder link's handler: open a chapter as the page's version, in an image that may be older.

Binder's image is made from the commit of the tag ``binder-<hash of binder/>``,
the last change to ``binder/``; the page the reader came from may be newer.
The site serves, beside its pages, each chapter as a notebook and the book's
package as a wheel (``_static/live-code/``, written by ``_ext/live_code``).
``live-code.js`` points the page's Binder link at this handler::

    <server>/live-book/open?site=<page's _static/live-code/ URL>&notebook=book/<chapter>.ipynb

which installs the site's wheel (``pip install --no-deps``), writes the
site's notebook into the server's folder, at ``book/<chapter>.ipynb``, and
opens it: the session runs the chapter and the package of the page, in the
environment of the tag. A Jupyter server extension (``binder/postBuild``
enables it); it uses only what ``jupyter-server`` brings (tornado).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote, urlsplit

from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.httpclient import AsyncHTTPClient

#: A notebook's path in the book: folders and a name of letters, digits, ``_.-``, ending in ``.ipynb``.
NOTEBOOK = re.compile(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*\.ipynb")
WHEEL = re.compile(r"[A-Za-z0-9_.+-]+\.whl")
#: A site served over plain http is accepted only from this computer (``make live``, the tests).
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
TIMEOUT = 60  # seconds for each download: a wheel of some 100 kB, a notebook of some 100 kB


def failure(status: int, text: str) -> web.HTTPError:
    """An error the reader sees on one line (the HTTP reason phrase: no line breaks, at most 400 characters)."""
    return web.HTTPError(status, reason=" ".join(text.split())[:400])


def site_url(site: str) -> str:
    """``site`` if it is an https URL (http on loopback only) of a folder, with no query; else HTTPError 400."""
    parts = urlsplit(site)
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
    if not (secure and parts.hostname and site.endswith("/")) or parts.query or parts.fragment or parts.username:
        raise failure(400, f"site must be the https:// URL of the book's _static/live-code/ folder, "
                           f"ending in /; got {site!r}")
    return site


def notebook_path(notebook: str) -> str:
    """``notebook`` if it is a relative path to an ``.ipynb`` with no ``..``; else HTTPError 400."""
    if not NOTEBOOK.fullmatch(notebook) or ".." in notebook.split("/"):
        raise failure(400, f"notebook must be a path like book/<chapter>.ipynb; got {notebook!r}")
    return notebook


async def download(url: str) -> bytes:
    try:
        response = await AsyncHTTPClient().fetch(url, request_timeout=TIMEOUT)
    except Exception as err:  # any failure (HTTP, DNS, TLS, timeout) is said in one line to the reader
        raise failure(502, f"could not fetch {url}: {err}") from err
    return response.body


async def install_wheel(site: str) -> str:
    """Install the wheel the site describes in ``package.json``, ``--no-deps``; its file name."""
    info = json.loads(await download(site + "package.json"))
    wheel = str(info.get("wheel", ""))
    if not WHEEL.fullmatch(wheel):
        raise failure(502, f"{site}package.json names no wheel file: {wheel!r}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / wheel
        path.write_bytes(await download(site + quote(wheel)))
        pip = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
            "--no-index", "--force-reinstall", str(path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await pip.communicate()
    if pip.returncode:
        raise failure(502, f"could not install {wheel}: {output.decode(errors='replace')[-300:]}")
    return wheel


class OpenHandler(JupyterHandler):
    """``GET live-book/open?site=...&notebook=...``: the page's package and chapter, then the notebook."""

    @web.authenticated
    async def get(self) -> None:
        site = site_url(self.get_argument("site"))
        notebook = notebook_path(self.get_argument("notebook"))
        await install_wheel(site)
        text = await download(site + "notebooks/" + quote(notebook))
        target = Path(self.settings["server_root_dir"]).expanduser() / notebook
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
        self.redirect(url_path_join(self.base_url, "tree", quote(notebook)))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "live_book"}]


def _load_jupyter_server_extension(serverapp) -> None:
    route = url_path_join(serverapp.web_app.settings["base_url"], "live-book", "open")
    serverapp.web_app.add_handlers(".*$", [(route, OpenHandler)])
