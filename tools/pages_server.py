"""The built site on 127.0.0.1, served the way GitHub Pages serves it, counting the bytes it sends.

What GitHub Pages sends (its responses' headers; it cannot be configured):
``Cache-Control: max-age=600``, ``Expires`` 600 s ahead, ``Last-Modified``,
an ``ETag`` (a conditional request that matches it gets a 304 without a body),
``Vary: Accept-Encoding``, ``Access-Control-Allow-Origin: *``, and gzip for
text types (HTML, CSS, JavaScript, JSON, SVG, XML); images and fonts are sent
as they are. A directory without its slash is redirected (301).

:class:`PagesServer` does the same from a thread, and records the bytes of
every response body it sends (:attr:`PagesServer.sent`), so that a test can
check what a page costs on the wire without trusting the browser's timing.
The browser tests' budgets and ``make bench`` measure the site through it.
"""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import http.server
import mimetypes
import threading
import time
import urllib.parse
from functools import partial
from pathlib import Path

from tools.quiet_server import QuietServer

MAX_AGE = 600
GZIP_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")
TYPES = {".js": "application/javascript", ".mjs": "application/javascript", ".woff2": "font/woff2",
         ".woff": "font/woff", ".webp": "image/webp", ".svg": "image/svg+xml", ".json": "application/json"}


class _Files:
    """(raw, gzipped, etag, mtime) per file, computed again when the file changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[float, bytes, bytes, str]] = {}

    def get(self, path: Path) -> tuple[bytes, bytes, str, float]:
        mtime = path.stat().st_mtime
        with self._lock:
            hit = self._entries.get(path)
        if hit is None or hit[0] != mtime:
            raw = path.read_bytes()
            hit = (mtime, raw, gzip.compress(raw, compresslevel=6, mtime=0),
                   '"' + hashlib.sha1(raw).hexdigest()[:16] + '"')
            with self._lock:
                self._entries[path] = hit
        return hit[1], hit[2], hit[3], mtime


def content_type(path: Path) -> str:
    kind = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return kind + ("; charset=utf-8" if kind.startswith(("text/", "application/j")) else "")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *args, server_state: PagesServer, **kwargs):
        self.state = server_state
        super().__init__(*args, **kwargs)

    def log_message(self, *args) -> None:
        """Log nothing (the tests read :attr:`PagesServer.sent` instead)."""

    def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes = b"", head: bool = False) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if body and not head:
            self.wfile.write(body)
            self.state.record(self.path, len(body))

    def do_HEAD(self) -> None:
        self.do_GET(head=True)

    def do_GET(self, head: bool = False) -> None:
        url_path = urllib.parse.urlsplit(self.path).path
        path = (self.state.root / urllib.parse.unquote(url_path).lstrip("/")).resolve()
        if path != self.state.root and self.state.root not in path.parents:
            path = self.state.root / "missing"
        if path.is_dir() and not url_path.endswith("/"):
            return self._reply(301, [("Location", url_path + "/"), ("Content-Length", "0")])
        path = path / "index.html" if path.is_dir() else path
        if not path.is_file():
            body = b"<!DOCTYPE html><html lang=en><title>404</title><h1>404</h1>"
            return self._reply(404, [("Content-Type", "text/html; charset=utf-8"),
                                     ("Content-Length", str(len(body)))], body, head)
        raw, packed, etag, mtime = self.state.files.get(path)
        kind = content_type(path)
        common = [("Cache-Control", f"max-age={MAX_AGE}"),
                  ("Expires", email.utils.formatdate(time.time() + MAX_AGE, usegmt=True)),
                  ("Last-Modified", email.utils.formatdate(mtime, usegmt=True)), ("ETag", etag),
                  ("Vary", "Accept-Encoding"), ("Access-Control-Allow-Origin", "*")]
        if self.headers.get("If-None-Match") == etag:
            return self._reply(304, common)
        gzipped = kind.startswith(GZIP_TYPES) and "gzip" in self.headers.get("Accept-Encoding", "")
        body = packed if gzipped else raw
        headers = [("Content-Type", kind), *common, ("Content-Length", str(len(body)))]
        self._reply(200, headers + ([("Content-Encoding", "gzip")] if gzipped else []), body, head)


class PagesServer:
    """``site`` on ``http://127.0.0.1:<port>`` as GitHub Pages serves it; ``stop()`` ends it.

    :attr:`sent` maps each requested URL path (with its query) to the bytes of
    the bodies sent for it; :meth:`take_sent` returns and clears it.
    """

    def __init__(self, site: Path, port: int = 0):
        self.root = Path(site).resolve()
        self.files = _Files()
        self.sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self.httpd = QuietServer(("127.0.0.1", port), partial(_Handler, server_state=self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def record(self, path: str, size: int) -> None:
        with self._lock:
            self.sent[path] = self.sent.get(path, 0) + size

    def take_sent(self) -> dict[str, int]:
        """What was sent since the last call: {URL path: body bytes}."""
        with self._lock:
            sent, self.sent = self.sent, {}
        return sent

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
