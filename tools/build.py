"""`make build`: build the book in a staging directory; publish it to ``_build/html`` only when it succeeds.

Sphinx builds in ``_build/staging``, a copy of the last good build, which
is published to ``_build/html`` only when Sphinx succeeds
(:mod:`tools.staging`), one build of the book at a time
(:mod:`tools.buildlock`): a second build waits for the first, saying which
process that is.

A failed or interrupted build leaves ``_build/html`` as it was (the last good
site, or nothing) and says so in its last lines; the failed build stays in
``staging/`` until the next build, unless the disk was full: then it is
removed (it would keep the disk full), and one line says where the disk is
full and how much a build needs (:func:`tools.faults.disk_full`). A build
that failed because a notebook's kernel lost a race for its ports
(:func:`lost_port_race`) is run once more, and says so. A folder the build cannot write (read-only, immutable, a full
disk) stops it with one line naming that folder and the fix
(:mod:`tools.faults`), before anything is built when it can be seen then;
a publication the file system refuses is undone.

Sphinx runs in a child process (this module with ``--sphinx``) in its own
session, because while a notebook executes nbclient takes SIGINT and SIGTERM
over (it shuts the kernel down, and the build then ends with some other
error): only a parent can tell an interrupted build from a failed one. A
terminal's Ctrl-C or hang-up, or SIGTERM, reaches only the parent, which
mutes the child's output (the terminal may be gone), passes SIGINT on (harder
at each further signal) and reports the build as interrupted; the child also
ends when the parent ends however it ends, and the parent when its own parent
(``make``) ends (:mod:`tools.lifetime`).

Usage, from the book's root (``make build`` runs it)::

    python -m tools.build
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

from tools import ROOT, buildlock, lifetime
from tools.faults import Stop, disk_full, said_full
from tools.staging import BUILD, CACHE, SIGNALS, STAGING, STATE, last_good, prepare_staging, publish, remove_tree, size

ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)  # to the child, at each signal received
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Sets Sphinx's ``-j`` (default: one process per core): pages are read, and their notebooks executed,
#: in this many processes at once. The site does not depend on it (``tests/build/test_reproducible.py``).
JOBS_ENV = "BOOK_BUILD_JOBS"
#: The notebooks' OpenBLAS threads, unless the environment sets them: one, whatever ``jobs()``. Reading on
#: every core, two kernels with two threads each oversubscribe the cores, and OpenBLAS's threads spend CPU
#: waiting for each other at every small product (a clean build, two runs each on 2 cores: 74 and 67 s of
#: CPU against 78 and 76 s with two threads, wall 45 and 72 s against 47 and 85 s at loads 2 and 5). One
#: thread on every machine and for any number of jobs: the threads of a reduction can change its last bits,
#: and the site must not depend on ``BOOK_BUILD_JOBS``.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}
#: What the output of a build ends with when a kernel could not bind a port that jupyter_client chose for
#: it: jupyter_client finds free ports, closes them and writes them for the kernel, which binds them a
#: moment later; another process may take one meanwhile (jupyter/jupyter_client#154). Nothing in the book
#: is wrong, and the next build's kernel gets other ports.
PORT_RACE = ("zmq.error.ZMQError: Address already in use", "RuntimeError: Kernel died before replying to kernel_info")
#: The end of the child's output that :class:`Relay` keeps (the failure and the kernel's traceback are there).
TAIL_BYTES = 64 * 1024


def jobs() -> int:
    """The number of processes that read pages: ``$BOOK_BUILD_JOBS``, or one per core this process may use."""
    value = os.environ.get(JOBS_ENV, "").strip()
    if not value:
        return max(1, len(os.sched_getaffinity(0)))
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"{JOBS_ENV} must be a whole number of processes, 1 or more; got {value!r}")
    return int(value)


# ---- the child: Sphinx ----

class WarningLines:
    """A stream that passes everything on to ``stream`` and keeps the lines that are Sphinx warnings."""

    def __init__(self, stream):
        self.stream, self.lines, self._partial = stream, [], ""

    def write(self, text: str) -> int:
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        self.lines += [ANSI.sub("", line) for line in complete if "WARNING:" in line or "ERROR:" in line]
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def run_sphinx(root: Path, staging: Path):
    """Sphinx's HTML build of the book into ``staging``: 0, a non-zero status, or the exception."""
    from jupyter_book.sphinx import build_sphinx

    overrides = {
        "external_toc_path": (root / "_toc.yml").as_posix(),
        "nitpicky": True,
        "latex_individualpages": False,
        # The cache outlives the staging directory (myst-nb's default is beside the output).
        "nb_execution_cache_path": str(root / BUILD / CACHE),
    }
    return build_sphinx(root, staging / "html", doctreedir=staging / ".doctrees", noconfig=True,
                        path_config=str(root / "_config.yml"), confoverrides=overrides, builder="html",
                        warningiserror=True, keep_going=True, jobs=jobs())


def lost_port_race(output: str) -> bool:
    """Whether a failed build's ``output`` says that a kernel died because another process took its port."""
    return all(text in output for text in PORT_RACE)


def failure(result, warnings: list[str]) -> list[str]:
    """What a failed Sphinx build prints last: the error, or every warning."""
    from sphinx.errors import SphinxError

    if isinstance(result, BaseException):
        what = str(result) if isinstance(result, SphinxError) else f"{type(result).__name__}: {result}"
        return ["", f"The build failed: {what}"]
    listed = [f"  {line}" for line in dict.fromkeys(warnings)]
    return ["", f"The build failed with {len(listed)} warning(s) (warnings are errors):", *listed]


def without_iri_syntax_checks() -> None:
    """Keep jsonschema from importing ``rfc3987_syntax``, which takes 1.5 s of every build.

    jupyter-book validates ``_config.yml`` with jsonschema, whose format
    checkers import ``rfc3987_syntax`` when it is installed (jupyter-events,
    for ``make live``'s server, asks for it): building its 38 Lark grammars
    is the largest part of a build with nothing to do. The schemas read here
    (jupyter-book's configuration, nbformat's) check no ``iri`` format, the
    only one it serves; jsonschema skips that format without it.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # "import rfc3987_syntax" raises ImportError


def sphinx_child(root: Path) -> int:
    """Build into ``_build/staging`` (prepared by the parent); 0 on success."""
    lifetime.exit_with_parent(signal.SIGINT)
    without_iri_syntax_checks()
    sys.stderr = warnings = WarningLines(sys.stderr)
    result = run_sphinx(root, root / BUILD / STAGING)
    if result == 0:
        return 0
    print("\n".join(failure(result, warnings.lines)), file=sys.stderr)
    return 1


# ---- the parent: staging, signals, publication ----

class Relay:
    """Echo the child's output (its end kept in ``tail``); on a signal, mute it and pass it on, harder each time."""

    def __init__(self):
        self.child, self.signal, self.sent, self.tail = None, None, 0, b""
        self.lock = None  # the descriptor holding the build's lock, which the child inherits
        for number in SIGNALS:
            signal.signal(number, self.handle)

    def handle(self, number, frame):
        self.signal = self.signal or signal.Signals(number).name
        if self.child is None:
            raise KeyboardInterrupt
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.child.pid, ESCALATION[min(self.sent, len(ESCALATION) - 1)])
        self.sent += 1

    def run(self, command: list[str], cwd: Path) -> int:
        """Run ``command`` in its own session and echo its output; its exit status."""
        env = {**BLAS_THREADS, **os.environ, "PYTHONUNBUFFERED": "1"}
        held = () if self.lock is None else (self.lock,)
        if held:
            env[buildlock.ENV] = str(self.lock)
        self.child = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True, pass_fds=held)
        output = self.child.stdout.fileno()
        self.tail = b""
        # Until the child has exited and its output is drained (a kernel it started may hold the pipe).
        while True:
            ready, _, _ = select.select([output], [], [], 0.5)
            chunk = os.read(output, 65536) if ready else b""
            self.tail = (self.tail + chunk)[-TAIL_BYTES:]
            if chunk and self.signal is None:
                with contextlib.suppress(OSError):  # a closed terminal
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.flush()
            if (ready and not chunk) or (not ready and self.child.poll() is not None):
                status = self.child.wait()
                self.child.stdin.close()
                self.child.stdout.close()
                return status


def say(*lines: str) -> None:
    """Print to stderr, if there still is one (a closed terminal is not an error)."""
    with contextlib.suppress(OSError):
        print("\n".join(lines), file=sys.stderr, flush=True)


def site_status(build_dir: Path) -> str:
    """What ``_build/html`` holds after a build that published nothing."""
    if (build_dir / "html" / "index.html").is_file():
        return f"{BUILD / 'html'} is unchanged: it still holds the last good build."
    return f"No site was published: {BUILD / 'html'} does not exist."


def stop_on_a_full_disk(build_dir: Path) -> int:
    """Remove the partial build (it keeps the disk full) and say in one line how much a build needs; the status."""
    staging, last = build_dir / STAGING, last_good(build_dir)
    last_size = sum(size(last / name) for name in STATE) if last is not None else 0
    written = size(staging)
    try:
        remove_tree(staging)
        removed = "the partial build was removed"
    except Stop as stop:
        removed = f"the partial build stays: {stop}"
    line = disk_full(build_dir, last_size, written, removed)
    say("", f"The build stopped: {line}.", site_status(build_dir))
    return 1


def build(root: Path = ROOT) -> int:
    """Build (one build of the book at a time), publish on success, and say what happened; the exit status."""
    build_dir = root / BUILD
    jobs()  # a bad BOOK_BUILD_JOBS is refused before anything is staged
    relay = Relay()
    try:
        with lifetime.watch_parent(signal.SIGHUP) as watch:  # killing make stops its build, as Ctrl-C does
            return _build(root, build_dir, relay, watch)
    finally:
        if relay.lock is not None:
            os.close(relay.lock)  # the lock is released once the child, which inherited it, has ended too


def _build(root: Path, build_dir: Path, relay: Relay, watch: lifetime.ParentWatch) -> int:
    try:
        relay.lock = buildlock.acquire(root, say)
        for attempt in (1, 2):
            prepare_staging(build_dir)
            status = relay.run([sys.executable, "-m", "tools.build", "--sphinx"], root)
            if status == 0 or relay.signal is not None or attempt == 2 \
                    or not lost_port_race(relay.tail.decode(errors="replace")):
                break
            say("", "A notebook's kernel died at its start: another process took a port chosen for it "
                    "(jupyter_client picks free ports before the kernel binds them). Building once more.", "")
        if relay.signal is None and status == 0:
            warning = publish(build_dir)
            say("", f"Published the site: {BUILD / 'html'} (open {BUILD / 'html' / 'index.html'}).",
                *([f"But {warning}."] if warning else []))
            return 0
    except KeyboardInterrupt:
        status = None
    except Stop as stop:
        if stop.full and relay.lock is not None:  # (the staging folder is this build's only under the lock)
            return stop_on_a_full_disk(build_dir)
        say("", f"The build stopped: {stop}.", site_status(build_dir))
        return 1
    if relay.signal is not None or status is None:
        why = f"its parent process, PID {watch.lost}, ended" if watch.lost else relay.signal or "SIGINT"
        say("", f"The build was interrupted ({why}). {site_status(build_dir)}")
        return 130
    if said_full(relay.tail.decode(errors="replace")):
        return stop_on_a_full_disk(build_dir)
    say(site_status(build_dir), f"The failed build is in {BUILD / STAGING} until the next build.")
    return 1


if __name__ == "__main__":
    sys.exit(sphinx_child(ROOT) if sys.argv[1:] == ["--sphinx"] else build())
