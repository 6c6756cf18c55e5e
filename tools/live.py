"""`make live`: the built book plus a local Jupyter server, for live code cells.

Builds the book if it is missing or older than its sources, serves it on
127.0.0.1 only (no directory listings), starts ``jupyter server`` on
127.0.0.1, and prints one URL to open. What the Jupyter server enforces:

* every request needs its token: 192 random bits, fresh for each run, passed
  to the server in its environment (never on a command line), which its
  kernels do not inherit, logged by Jupyter as "...", printed only in the one
  URL below;
* a request from a browser page of another origin than the book's is refused
  (HTTP 404, WebSocket 403), token or not, ``Origin: null`` included; a
  request with no ``Origin`` header (a script on this machine) is accepted
  with the token.

The token travels in the URL *fragment* (``#jupyter=<server>&token=<token>``),
which the browser never sends to a server; the page's ``live-code.js`` reads
it (see ``_ext/live_code``).

Ctrl-C, closing the terminal and SIGTERM stop both servers: the Jupyter
server shuts its kernels down and its runtime folder is removed (about 1.5 s
on a busy 2-core machine). Closing the terminal signals only the session's
leader, which may be ``make`` (``ssh -t host make live``), and ``make`` waits
for its children: this process also watches its terminal, and its parent,
and stops when either ends (:mod:`tools.lifetime`). If this process dies
without cleaning up (SIGKILL, a crash), the Jupyter server notices and does
the same itself (:func:`tools.servers.serve_jupyter`).

A build that fails says so in one line and the last good site is served,
if there is one; so it is after Ctrl-C during the build, which stops the
build (Ctrl-C again stops the servers). A hang-up or SIGTERM during the
build stops the build and serves nothing.

The two servers are :mod:`tools.servers`, which the browser tests and the
benchmarks start the same way.

Usage, from the repository root (``make live`` runs the first form)::

    python -m tools.live [--site DIR] [--page PATH] [--port PORT] [--no-build]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from tools import ROOT, SITE, lifetime
from tools.build import ESCALATION
from tools.servers import JupyterServer, StaticServer

#: ``make build``'s command (the Makefile's ``live`` target has made ``make build``'s prerequisites).
BUILD = (sys.executable, "-m", "tools.build")
#: What a build of the book depends on (newer than the site: rebuild).
SOURCES = ("book", "_ext", "src", "_config.yml", "_toc.yml", "requirements.txt")


def site_is_stale(site: Path, root: Path = ROOT) -> bool:
    """True when ``site`` has no index.html or a source file is newer than it."""
    index = site / "index.html"
    if not index.exists():
        return True
    built = index.stat().st_mtime
    paths = (root / name for name in SOURCES)
    files = (f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
    return any(f.stat().st_mtime > built for f in files if "__pycache__" not in f.parts)


def live_url(site_url: str, page: str, jupyter_url: str, token: str) -> str:
    """The page's URL with the server and token in its fragment."""
    return f"{site_url}/{page.lstrip('/')}#jupyter={quote(jupyter_url, safe='')}&token={quote(token, safe='')}"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.live", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / SITE, help="built site (default: _build/html)")
    parser.add_argument("--page", default="book/smoothing.html", help="page the URL opens")
    parser.add_argument("--port", type=int, default=0, help="port of the book (default: any free port)")
    parser.add_argument("--no-build", action="store_true", help="never build, even if the site is stale")
    return parser.parse_args(argv)


class Signals:
    """What ``make live`` is told while it runs: Ctrl-C (SIGINT), SIGTERM, a hang-up (SIGHUP).

    While the book builds, each signal is passed on to the build, harder at
    each one (:data:`tools.build.ESCALATION`); the build, in its own session,
    hears nothing from the terminal itself. Once the servers run, the first
    signal raises :class:`KeyboardInterrupt` (they are then stopped) and any
    further one is ignored, so that it cannot cut that stopping short.
    """

    def __init__(self):
        self.build: subprocess.Popen | None = None
        self.received: list[int] = []
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, self.handle)

    def handle(self, number, frame):
        self.received.append(number)
        if self.build is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.build.pid, ESCALATION[min(len(self.received), len(ESCALATION)) - 1])
        elif len(self.received) == 1:
            raise KeyboardInterrupt


def say(line: str, file=sys.stdout) -> None:
    """Print a line, if there still is a terminal to print it to."""
    with contextlib.suppress(OSError):
        print(line, file=file, flush=True)


def build(site: Path, signals: Signals, command: tuple[str, ...] = BUILD) -> bool:
    """Build the book as ``make build`` does; whether to serve ``site`` then (one line says why not, or what)."""
    say("Building the book (make build)...")
    # Its own session: a signal reaches it through `signals` only, once, with no terminal to stop it.
    signals.build = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
    while True:  # a timeout, not one blocking wait: a signal that reached another thread is handled here too
        try:
            status = signals.build.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            pass
    signals.build = None
    if signals.received and signals.received != [signal.SIGINT]:  # stopped (a hang-up, SIGTERM, Ctrl-C twice)
        return False
    if status == 0 and not signals.received:
        return True
    what = "was interrupted" if signals.received else "failed"
    signals.received.clear()  # Ctrl-C now stops the servers
    if not (site / "index.html").exists():
        say(f"make live: the build {what}, and there is no built site to serve.", sys.stderr)
        return False
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime((site / "index.html").stat().st_mtime))
    say(f"make live: the build {what}; serving the last good site, built {built}.", sys.stderr)
    return True


def main(argv=None) -> int:
    args = parse_args(argv)
    signals = Signals()
    # make live stops when its terminal hangs up even if only make, the session's leader, was told,
    # and when make is killed: make would wait for it, or it would outlive make (tools.lifetime).
    lifetime.watch_terminal(signal.SIGHUP)
    with lifetime.watch_parent(signal.SIGHUP):
        try:
            if not args.no_build and site_is_stale(args.site) and not build(args.site, signals):
                return 1
        except KeyboardInterrupt:  # a signal between the build's end and the servers' start
            return 1
        if not (args.site / "index.html").exists():
            say(f"no built site in {args.site}", sys.stderr)
            return 1
        return serve(args)


def serve(args) -> int:
    """Serve the site and a Jupyter server until a signal, or until the Jupyter server stops."""
    site = jupyter = None
    try:
        site = StaticServer(args.site, args.port)
        jupyter = JupyterServer(origin=site.url)
        say("\nThe book, with live code cells on a Jupyter server on this machine. Open:\n")
        say(f"    {live_url(site.url, args.page, jupyter.url, jupyter.token)}\n")
        say('Then press the rocket button, "Live Code". The URL holds a fresh token: keep it private.')
        say("Ctrl-C (or closing this terminal) stops both servers.")
        while jupyter.process.poll() is None:
            time.sleep(0.5)
        say("the Jupyter server stopped", sys.stderr)
        return 1
    except KeyboardInterrupt:
        say("\nStopping...")
        return 0
    finally:
        if jupyter is not None:
            jupyter.stop()
        if site is not None:
            site.stop()


if __name__ == "__main__":
    sys.exit(main())
