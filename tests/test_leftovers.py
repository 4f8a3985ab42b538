"""Nothing left behind: every temporary folder a `grade` run makes is gone when the run ends.

The run is `python -m autograder grade` with TMPDIR pointed at a folder of the test's own, listed before and after:
a run that ends normally, one stopped by Ctrl-C (SIGINT to its process group, as a terminal sends it) while a
student is graded, one whose grading worker is killed (SIGKILL) mid-run, and a run on a local Dask cluster.
The run's cgroups (one per worker and per sandbox, where this machine lets it make them) are gone too. A grade
killed outright leaves its folder, which the next one made removes (autograder/grading/tempfolders.py). A `check`
called as a function leaves its caller's environment as it found it.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import nbtools
import psutil
import pytest
from adversarial import grading

from autograder.grading.dispatch.pool import TIMING_LOG
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


def _grading_worker(run, results, workers=2, within=300.0):
    """A grading worker of `run` once the run has heard its `workers` ready (each then takes a student at once),
    or None. Before that a worker killed is one that failed to start, which ends the run (dispatch/pool.py)."""
    timing = results / "logs" / TIMING_LOG
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and run.poll() is None:
        started = timing.read_text(encoding="utf-8").count('"worker start"') if timing.exists() else 0
        found = [child for child in psutil.Process(run.pid).children(recursive=True) if _is_worker(child)]
        if started >= workers and found:
            return found[0]
        time.sleep(0.1)
    return None


def _is_worker(process):
    try:
        return "autograder.grading.worker" in " ".join(process.cmdline())
    except psutil.Error:
        return False


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
    assert _grading_worker(run, tmp_path / "results") is not None, _finished(run)
    made = _groups(run)  # where cgroups can be made here, the run's, with its sandboxes' inside
    assert bool(made) == (cgroups.find()[0] is not None)
    os.killpg(run.pid, signal.SIGINT)
    code, out = _finished(run, timeout=120)
    assert code != 0, out  # it stopped, mid-run
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_whose_worker_is_killed_leaves_nothing(course_root, tmp_path, temp_dir):
    run = _grade(course_root, tmp_path, temp_dir)
    worker = _grading_worker(run, tmp_path / "results")
    assert worker is not None, _finished(run)
    worker.kill()
    code, out = _finished(run)
    assert code == 0, out  # its student is a grader error; the run went on, with a worker in its place
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_on_a_local_cluster_leaves_nothing(course_root, tmp_path, temp_dir):
    code, out = _finished(_grade(course_root, tmp_path, temp_dir, "--cluster", "local:2"))
    assert code == 0, out
    assert _left(temp_dir) == []


# ---------------------------------------------------------------- a process killed outright


def _made_by_a_killed_process(within):
    """A folder tempfolders.make made in `within` (as the temporary folder) from a process then killed with SIGKILL,
    so that nothing of it removed the folder."""
    code = ("import os, sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
            "from autograder.grading import tempfolders\n"
            "path = tempfolders.make('grade', 0o711); (path / 'w0-0').mkdir()\n"
            "(path / 'w0-0' / 'a.ipynb').write_text('{}')\n"
            "print(path, flush=True); os.kill(os.getpid(), 9)\n")
    run = subprocess.run([sys.executable, "-c", code, str(within)], capture_output=True, text=True, timeout=60)
    assert run.returncode == -signal.SIGKILL, run.stderr
    return Path(run.stdout.strip())


def test_the_folder_of_a_killed_grade_is_removed_by_the_next_one(tmp_path, monkeypatch):
    """A grade killed outright (SIGKILL; the kernel's out-of-memory killer) leaves its folder, submissions and all.
    The next folder made removes it, and nothing else: not this process's own, not a folder without its maker's
    record, nor one of another user's, nor a link named like one (nor what it points to)."""
    from autograder.grading import tempfolders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed = _made_by_a_killed_process(tmp_path)
    assert killed.name.startswith("ffn-grade-") and (killed / "w0-0" / "a.ipynb").exists()
    mine = tempfolders.make("check")
    unrecorded = tmp_path / "ffn-grade-abcdefgh"
    unrecorded.mkdir()
    others = _made_by_a_killed_process(tmp_path)
    os.chown(others, 12345, 12345)
    target = tmp_path / "kept"
    (target / "ffn-grade-linkedto").mkdir(parents=True)
    (target / tempfolders.OWNER).write_text(f"{os.readlink('/proc/self/ns/pid')} 999999999\n")  # gone
    (tmp_path / "ffn-grade-alinkxyz").symlink_to(target)

    made = tempfolders.make("cluster")
    assert not killed.exists()
    assert made.exists() and mine.exists() and unrecorded.exists() and others.exists() and target.exists()
    assert (tmp_path / "ffn-grade-alinkxyz").is_symlink() and (target / "ffn-grade-linkedto").exists()
    assert tempfolders.sweep() == []  # nothing more: this process still runs


def test_a_running_makers_folder_is_kept_where_proc_hides_its_process(tmp_path, monkeypatch):
    """Whether the maker runs is asked of the kernel: /proc can hide processes (hidepid; a simulated macOS's check
    once removed the folders of every grade running beside it)."""
    from autograder.grading import tempfolders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = ("import sys, tempfile, time; tempfile.tempdir = sys.argv[1]\n"
            "from autograder.grading import tempfolders\n"
            "print(tempfolders.make('grade'), flush=True); time.sleep(60)\n")
    with subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True) as maker:
        try:
            running = Path(maker.stdout.readline().strip())
            real_stat = os.stat
            monkeypatch.setattr(os, "stat", lambda path, *a, **k: (_ for _ in ()).throw(FileNotFoundError(path))
                                if os.fspath(path).startswith("/proc/") else real_stat(path, *a, **k))
            assert tempfolders.sweep() == [] and running.exists()
        finally:
            maker.kill()
    monkeypatch.undo()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert tempfolders.sweep() == [running] and not running.exists()  # its maker ended: now it goes


def test_a_check_leaves_no_folder_and_removes_a_killed_ones(tmp_path, monkeypatch):
    from autograder.grading import tempfolders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed = _made_by_a_killed_process(tmp_path)
    with tempfolders.folder("check") as inside:
        assert inside.exists() and not killed.exists()
    assert not inside.exists() and list(tmp_path.iterdir()) == []


def test_a_check_in_this_process_leaves_its_environment_as_it_was(tmp_path, monkeypatch):
    """`check` called as a function runs its worker in the caller's process, and that worker points matplotlib at
    the check's folder: a process the caller started later made the removed folder again, to write its font list."""
    from autograder.grading import check

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    path.write_text(nbformat.writes(nbtools.completed_learner(ASSIGNMENT)), encoding="utf-8")
    before = dict(os.environ)
    result = check.check(path, unsafe=True, say=lambda text: None)
    assert result["status"] == "graded"
    assert dict(os.environ) == before
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True, timeout=120)
    left = [p.name for p in (tmp_path / "tmp").iterdir()]
    assert [name for name in left if not name.startswith("ffn-public-")] == []  # that one goes when this process does
