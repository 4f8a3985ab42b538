"""Nothing left behind: every temporary folder a `grade` run makes is gone when the run ends.

The run is `python -m autograder grade` with TMPDIR pointed at a folder of the test's own, listed before and after:
a run that ends normally, one stopped by Ctrl-C (SIGINT to its process group, as a terminal sends it) while a
student is graded, one whose grading worker is killed (SIGKILL) mid-run, and a run on a local Dask cluster.
The run's cgroups (one per worker and per sandbox, where this machine lets it make them) are gone too.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbtools
import psutil
import pytest
from adversarial import grading

from autograder.grading.gate_in import cgroups

ASSIGNMENT = "02_forward_pass"
pytestmark = [pytest.mark.grading, pytest.mark.sandbox, pytest.mark.xdist_group("leftovers")]


@pytest.fixture(scope="module")
def course_root(tmp_path_factory):
    return grading.make_course(tmp_path_factory.mktemp("leftovers") / "course", ASSIGNMENT)


@pytest.fixture
def temp_dir():
    """A fresh temporary folder as the system's is (anyone writes, the sticky bit): a grading worker's user writes
    in it. Short, under the system's own: a kernel's socket paths must fit 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="ffn-lo-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _class(tmp_path, n=3):
    learner = nbtools.completed_learner(ASSIGNMENT)
    return grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, {f"s{k}": learner for k in range(n)})


def _grade(course_root, tmp_path, temp_dir, *extra):
    """`python -m autograder grade` as a terminal starts it: a process group of its own, TMPDIR the test's; two
    workers unless `extra` says otherwise."""
    env = dict(nbtools.nbgrader_env(), TMPDIR=str(temp_dir))
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, _class(tmp_path),
                             "--out", tmp_path / "results", "--course", course_root, *(extra or ("--jobs", "2"))],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _grading_worker(run, within=300.0):
    """A grading worker of `run` while it grades a student (a sandbox under it), or None."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and run.poll() is None:
        for child in psutil.Process(run.pid).children(recursive=True):
            try:
                if "autograder.grading.worker" in " ".join(child.cmdline()) and any(
                        "bwrap" in " ".join(c.cmdline()) for c in child.children(recursive=True)):
                    return child
            except psutil.Error:
                pass
        time.sleep(0.1)
    return None


def _finished(run, timeout=900):
    out, _ = run.communicate(timeout=timeout)
    return run.returncode, out.decode(errors="replace")[-3000:]


def _left(temp_dir):
    return sorted(os.listdir(temp_dir))


def _groups(run):
    """The cgroups `run` made (gate_in/cgroups.py: ffn-<its pid>-..., in each hierarchy) that are still there."""
    found, _ = cgroups.find()
    return sorted(str(g) for base in (found.base if found else ()) for g in Path(base).glob(f"ffn-{run.pid}-*"))


def test_a_run_that_ends_leaves_nothing(course_root, tmp_path, temp_dir):
    assert _left(temp_dir) == []
    run = _grade(course_root, tmp_path, temp_dir)
    code, out = _finished(run)
    assert code == 0, out
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_stopped_by_ctrl_c_leaves_nothing(course_root, tmp_path, temp_dir):
    run = _grade(course_root, tmp_path, temp_dir)
    assert _grading_worker(run) is not None, _finished(run)
    made = _groups(run)  # where cgroups can be made here, the run's, with its sandboxes' inside
    assert bool(made) == (cgroups.find()[0] is not None)
    os.killpg(run.pid, signal.SIGINT)
    code, out = _finished(run, timeout=120)
    assert code != 0, out  # it stopped, mid-run
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_whose_worker_is_killed_leaves_nothing(course_root, tmp_path, temp_dir):
    run = _grade(course_root, tmp_path, temp_dir)
    worker = _grading_worker(run)
    assert worker is not None, _finished(run)
    worker.kill()
    code, out = _finished(run)
    assert code == 0, out  # its student is a grader error; the run went on, with a worker in its place
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_on_a_local_cluster_leaves_nothing(course_root, tmp_path, temp_dir):
    code, out = _finished(_grade(course_root, tmp_path, temp_dir, "--cluster", "local:2"))
    assert code == 0, out
    assert _left(temp_dir) == []
