"""``tools.build``: a build that failed because a kernel lost a race for its ports is run once more, once.

The Sphinx child is replaced by a stand-in that ends with a given status and
output (:meth:`tools.build.Relay.run`); staging and publication are the real
ones, in a temporary book folder. The real failure is from a clean-clone
``make test`` (tests/build/test_incremental.py), where another process took a
port that jupyter_client had chosen for a notebook's kernel.
"""

from __future__ import annotations

import signal

import pytest

from tools import build
from tools.staging import BUILD, last_good

#: The end of the output of the build that failed that way (shortened).
LOST_RACE = """  File "zmq/backend/cython/_zmq.py", line 190, in zmq.backend.cython._zmq._check_rc
zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:44591')
...
RuntimeError: Kernel died before replying to kernel_info

The build failed: RuntimeError: Kernel died before replying to kernel_info
"""
#: A kernel that dies at its start for another reason: nothing to retry.
OTHER_DEATH = ("ModuleNotFoundError: No module named 'ipykernel'\n"
               "RuntimeError: Kernel died before replying to kernel_info\n")


@pytest.fixture
def runs(monkeypatch):
    """Set the (status, output) of each child run; the list of runs made."""
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # the test process keeps its own handlers
    made, outcomes = [], []

    def run(relay, command, cwd):
        status, output = outcomes[len(made)]
        made.append(command)
        relay.tail = output.encode()
        return status

    monkeypatch.setattr(build.Relay, "run", run)
    return outcomes, made


def test_the_output_of_a_lost_port_race_is_told_from_other_kernel_deaths():
    assert build.lost_port_race(LOST_RACE)
    assert not build.lost_port_race(OTHER_DEATH)
    assert not build.lost_port_race("The build failed with 1 warning(s) (warnings are errors):\n")


def test_a_build_whose_kernel_lost_a_port_race_runs_once_more_and_publishes(tmp_path, runs, capsys):
    outcomes, made = runs
    outcomes += [(1, LOST_RACE), (0, "build succeeded")]
    assert build.build(tmp_path) == 0
    assert len(made) == 2
    assert last_good(tmp_path / BUILD) is not None
    assert "Building once more." in capsys.readouterr().err


@pytest.mark.parametrize("outcome", [[(1, LOST_RACE), (1, LOST_RACE)], [(1, OTHER_DEATH)]], ids=["twice", "other"])
def test_a_build_fails_after_a_second_lost_race_or_at_once_for_another_cause(tmp_path, runs, outcome, capsys):
    outcomes, made = runs
    outcomes += outcome
    assert build.build(tmp_path) == 1
    assert len(made) == len(outcome)
    assert last_good(tmp_path / BUILD) is None
    assert capsys.readouterr().err.count("Building once more.") == len(outcome) - 1
