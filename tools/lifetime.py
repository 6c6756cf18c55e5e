"""Child processes that end with their parent, however the parent ends.

A child started in its own session (so that a terminal's Ctrl-C or hang-up
reaches only the parent, which stops it cleanly) would outlive a parent that
is killed outright (SIGKILL, a crash): no signal handler of the parent runs.
The parent therefore gives the child a pipe as standard input and never
writes to it; the kernel closes the pipe when the parent exits, however it
exits, and :func:`exit_with_parent`'s thread in the child sees end-of-file
and signals the child itself, which then stops as it would on that signal.
Linux's ``PR_SET_PDEATHSIG`` does the same for one platform only, and fires
when the parent *thread* that started the child ends.

Parent::

    child = subprocess.Popen([...], stdin=subprocess.PIPE, start_new_session=True)

Child::

    lifetime.exit_with_parent(signal.SIGTERM)

A process whose parent holds no such pipe for it (``make build`` runs
``python -m tools.build`` with the terminal as its input) watches its parent
instead: :func:`watch_parent` notices that it was given another parent (the
kernel re-parents an orphan, to ``init`` or a subreaper) and signals the
process, again every few seconds until it has ended. Killing only ``make``
then stops the build it started, as Ctrl-C would::

    with lifetime.watch_parent(signal.SIGHUP) as watch:
        ...                      # watch.lost: the PID of the parent that ended, or None

Closing a terminal signals (SIGHUP) only its session's leader, which may be
``make`` (``ssh -t host make live``, ``tmux new 'make live'``): ``make`` then
waits for its children, whose parent has not ended. A process that must stop
with its terminal therefore watches the terminal itself:
:func:`watch_terminal` signals the process once its controlling terminal
hangs up, whoever the session's leader is::

    lifetime.watch_terminal(signal.SIGHUP)
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading


def _wait_for_end_of_input(descriptor: int, signum: int) -> None:
    # The raw descriptor, not sys.stdin: a daemon thread blocked in a buffered read stops the interpreter's exit.
    while os.read(descriptor, 65536):
        pass  # the parent never writes; tolerate it if something does
    os.kill(os.getpid(), signum)


def exit_with_parent(signum: int = signal.SIGTERM) -> threading.Thread:
    """Send ``signum`` to this process when standard input (the parent's pipe) reaches end-of-file."""
    if sys.stdin is None or sys.stdin.isatty():
        raise RuntimeError("exit_with_parent needs standard input to be a pipe held by the parent")
    thread = threading.Thread(target=_wait_for_end_of_input, args=(sys.stdin.fileno(), signum), daemon=True,
                              name="exit-with-parent")
    thread.start()
    return thread


class ParentWatch:
    """A thread that signals this process once its parent has ended (see :func:`watch_parent`)."""

    def __init__(self, signum: int, interval: float, repeat: float):
        self.parent, self.lost = os.getppid(), None
        self._signum, self._interval, self._repeat = signum, interval, repeat
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="watch-parent")
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            if os.getppid() != self.parent:  # re-parented: the parent has ended
                self.lost = self.parent
                break
        else:
            return
        while True:  # once now, then again: the process's handler escalates at each signal
            os.kill(os.getpid(), self._signum)
            if self._stop.wait(self._repeat):
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextlib.contextmanager
def watch_parent(signum: int = signal.SIGHUP, *, interval: float = 0.2, repeat: float = 5.0):
    """Send ``signum`` to this process when its parent ends, then every ``repeat`` seconds until the block ends.

    The parent is polled every ``interval`` seconds (``os.getppid()`` changes
    when the kernel gives an orphan another parent); yields the
    :class:`ParentWatch`, whose ``lost`` is then the ended parent's PID.
    """
    watch = ParentWatch(signum, interval, repeat)
    try:
        yield watch
    finally:
        watch.stop()


def _wait_for_hang_up(descriptor: int, signum: int) -> None:
    poll = select.poll()
    poll.register(descriptor, 0)  # no events asked for: poll returns on a hang-up (or an error) only
    while not poll.poll():
        pass
    os.close(descriptor)
    # To the main thread, which runs Python's handlers: a signal to the process may reach this thread
    # instead, and a main thread blocked in a system call would then not hear of it until that call returns.
    signal.pthread_kill(threading.main_thread().ident, signum)


def watch_terminal(signum: int = signal.SIGHUP) -> threading.Thread | None:
    """Send ``signum`` to this process once its controlling terminal hangs up; None if it has no terminal.

    A thread polls ``/dev/tty`` for nothing but a hang-up: the kernel reports
    one when the terminal is hung up (its session's leader got SIGHUP) or the
    other end of a pseudo-terminal is closed, whichever process the signal reached.
    """
    try:
        descriptor = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:  # no controlling terminal (nohup, a service, a test's own session)
        return None
    thread = threading.Thread(target=_wait_for_hang_up, args=(descriptor, signum), daemon=True,
                              name="watch-terminal")
    thread.start()
    return thread
