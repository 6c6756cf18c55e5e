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
"""

from __future__ import annotations

import os
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
