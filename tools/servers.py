"""The two servers of ``make live``: the built site, and a Jupyter server for live kernels.

The browser tests and the benchmarks start them from here, exactly as
``make live`` (:mod:`tools.live`) does.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from tools import ROOT


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    home: str | None = None  # the file served at "/" (else index.html)

    def log_message(self, *args) -> None:
        """Log nothing: ``make live`` keeps the terminal to the one URL it prints."""

    def translate_path(self, path: str) -> str:
        if self.home and path.split("?")[0] == "/":
            path = "/" + self.home
        return super().translate_path(path)


class StaticServer:
    """The built site on ``http://127.0.0.1:<port>``, served from a thread.

    ``home`` (a path in ``site``) is served at ``/`` instead of ``index.html``.
    """

    def __init__(self, site: Path, port: int = 0, home: str | None = None):
        handler = functools.partial(type("Handler", (_QuietHandler,), {"home": home}), directory=str(site))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


class JupyterServer:
    """``jupyter server`` on 127.0.0.1 that only the page at ``origin`` may call.

    A fresh random token (passed in the environment, never on the command
    line); CORS limited to ``origin``; a free port chosen by the OS and read
    back from the server's info file in a private runtime directory.
    Requests carrying the token skip Jupyter's XSRF check, so the book's
    origin needs no further exemption.

    The keywords start it otherwise (:mod:`tools.binder` starts one as
    mybinder does): ``command`` (the server program), ``base_url``,
    ``options`` (more ``--ServerApp`` settings) and ``env`` (added to the
    environment).
    """

    def __init__(self, origin: str, root_dir: Path = ROOT, *, timeout: float = 60.0,
                 command: Sequence[str] = (sys.executable, "-m", "jupyter_server"), base_url: str = "/",
                 options: Sequence[str] = ("--ServerApp.terminals_enabled=False",),
                 env: Mapping[str, str] | None = None):
        self.token = secrets.token_hex(24)
        self.base_url = base_url
        self.runtime = Path(tempfile.mkdtemp(prefix="live-jupyter-"))
        self.log = self.runtime / "server.log"
        cmd = [*command, "--no-browser",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.port_retries=0",
               *options, f"--ServerApp.base_url={base_url}",
               f"--ServerApp.root_dir={root_dir}", f"--ServerApp.allow_origin={origin}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # containers and CI run as root
        env = {**os.environ, **(env or {}), "JUPYTER_TOKEN": self.token, "JUPYTER_RUNTIME_DIR": str(self.runtime)}
        with open(self.log, "wb") as log:
            # Its own session: Ctrl-C reaches only this script, which stops it cleanly.
            self.process = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self.url = self._wait_until_ready(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_until_ready(self, timeout: float) -> str:
        info = self.runtime / f"jpserver-{self.process.pid}.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter server exited:\n{self.log.read_text()[-2000:]}")
            if info.exists():
                url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}{self.base_url}"
                try:
                    with urllib.request.urlopen(f"{url}api/status?token={self.token}", timeout=2):
                        return url
                except OSError:
                    pass
            time.sleep(0.1)
        raise TimeoutError(f"jupyter server not ready after {timeout} s:\n{self.log.read_text()[-2000:]}")

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``: what a page must be allowed to reach to use this server."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def stop(self) -> None:
        """Stop the server (SIGTERM shuts its kernels down too) and remove its files."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)
