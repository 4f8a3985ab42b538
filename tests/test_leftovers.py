"""Nothing left behind: every temporary folder a `grade` run makes is gone when the run ends.

The run is `python -m autograder grade` with TMPDIR pointed at a folder of the test's own, listed before and after:
a run that ends normally, one stopped by Ctrl-C (SIGINT to its process group, as a terminal sends it) while a
student is graded (it says so, and exits with status 130), one whose grading worker is killed (SIGKILL) mid-run,
and a run on a local Dask cluster. The run's cgroups (one per worker and per sandbox, where this machine lets it
make them) are gone too. A grade killed outright leaves its folder, and on a cluster the copy of the submission it
was sending: the next folder made removes them (autograder/grading/tempfolders.py). A `check` called as a function
leaves its caller's environment as it found it.
"""

import contextlib
import copy
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import nbformat
import nbtools
import psutil
import pytest
from adversarial import grading

from autograder.grading import grade
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


@pytest.fixture
def terminal(course_root, tmp_path, temp_dir):
    """A grade run started as from a terminal (_Terminal); if the test ends while it still runs (a failed
    assertion), it is killed with every process it started, rather than left holding a sandbox for an hour."""
    run = _Terminal(course_root, tmp_path, temp_dir)
    yield run
    run.kill()


SLOW = "s-slow"  # a student whose last cell waits far longer than any test waits for it
WAITING_CELL = "import time\ntime.sleep(3600)  # stopped by the run's end, never by the cell's own time limit"
SLOW_CELL_TIMEOUT = 1800  # seconds: the waiting cell cannot end before the test has acted on the run


def _class(tmp_path, n=3):
    """n students with the worked answers; the first one's notebook ends with WAITING_CELL, so that while the grader
    reports it in that cell the run is provably mid-way, however fast the machine grades the others."""
    learner = nbtools.completed_learner(ASSIGNMENT)
    slow = copy.deepcopy(learner)
    slow.cells.append(nbformat.v4.new_code_cell(WAITING_CELL))
    students = {SLOW: slow, **{f"s{k}": learner for k in range(1, n)}}
    return grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, students)


def _as_an_interactive_shell_starts_a_command():
    """SIGINT and SIGQUIT at their defaults and no signal blocked, as an interactive shell starts a command, whatever
    this process has: a suite started in the background by a script (`make test &`, a CI runner's shell) starts with
    both ignored (POSIX, for an asynchronous list without job control), and a run would inherit that and never take
    its Ctrl-C. `grade` itself keeps what it is given (`grade ... &` in a script is not meant to stop on Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


class _Terminal:
    """`python -m autograder grade` as a terminal starts it: a process group of its own, stdout and stderr a
    terminal (a pty) wide enough for its progress line, which then names every second each student being graded
    and the cell its grading is in (dispatch/progress.py). TMPDIR is the test's."""

    def __init__(self, course_root, tmp_path, temp_dir, *extra):
        env = dict(nbtools.nbgrader_env(), TMPDIR=str(temp_dir))
        main, side = pty.openpty()
        fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 500, 0, 0))  # rows, columns
        self.results = tmp_path / "results"
        self.run = subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, _class(tmp_path), "--out", self.results,
             "--course", course_root, "--cell-timeout", str(SLOW_CELL_TIMEOUT),
             "--timeout", str(2 * SLOW_CELL_TIMEOUT), *(extra or ("--jobs", "2"))],
            env=env, stdin=subprocess.DEVNULL, stdout=side, stderr=side, start_new_session=True,
            preexec_fn=_as_an_interactive_shell_starts_a_command)
        os.close(side)
        self.main, self.text = main, ""
        self.pid = self.run.pid

    def _read(self, until):
        """Read what the run writes until `until` (monotonic) or its end; False once the terminal is closed."""
        ready, _, _ = select.select([self.main], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            return True
        try:
            data = os.read(self.main, 1 << 16)
        except OSError:  # EIO: every process holding the terminal is gone
            data = b""
        self.text += data.decode(errors="replace")
        return bool(data)

    def wait_for(self, pattern, within=300.0):
        """The first match of `pattern` in what the run has written, once it is there (None by the deadline, or if
        the run ended first)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text)
            if found:
                return found
            if not self._read(deadline):
                return None
        return None

    def kill(self):
        """End the run and all it started, if it still runs (SIGKILL: a test that failed has nothing to check)."""
        if self.run.poll() is None:
            with contextlib.suppress(psutil.Error):
                tree = [*psutil.Process(self.pid).children(recursive=True), psutil.Process(self.pid)]
                for process in tree:
                    with contextlib.suppress(psutil.Error):
                        process.kill()
                psutil.wait_procs(tree, timeout=60)
            self.run.wait(timeout=60)
        if self.main is not None:
            os.close(self.main)
            self.main = None

    def stacks(self, within=30.0):
        """Where each thread of the run is: the Python stacks it writes on SIGUSR1 (grade.main), down to the main
        thread's outermost frame (runpy's, for `python -m`), once written."""
        mark = len(self.text)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGUSR1)
        deadline = time.monotonic() + within
        while "_run_module_as_main" not in self.text[mark:] and time.monotonic() < deadline and self._read(deadline):
            pass
        return self.text[mark:] or "(nothing written)"

    def finished(self, timeout=900):
        """(exit code, the end of what it wrote) once the run has ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline):
            pass
        try:
            code = self.run.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the run has not ended within {timeout} s; it wrote:\n{self.text[-3000:]}\n"
                                 f"where it is:\n{self.stacks()}\nits processes: {_tree(self.pid)}") from None
        os.close(self.main)
        self.main = None
        return code, self.text[-3000:]


def _tree(pid):
    """(pid, state, command) of `pid` and every process it started."""
    found = []
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                found.append((p.pid, p.status(), " ".join(p.cmdline())[:120]))
    return found


def _slow_student_in_its_waiting_cell(terminal):
    """Wait until the progress line names SLOW in the notebook run at a cell below the notebook's last named cell:
    the waiting cell, which holds that student until the run ends. Fails the test, with what the run said, if the
    grader never reports it."""
    last = [nbtools.grade_id(c) for c in nbtools.learner(ASSIGNMENT).cells if nbtools.grade_id(c)][-1]
    found = terminal.wait_for(rf"{SLOW}: notebook run, a cell below {re.escape(last)} \(")
    assert found, terminal.text[-3000:]


def _grade(course_root, tmp_path, temp_dir, *extra):
    env = dict(nbtools.nbgrader_env(), TMPDIR=str(temp_dir))
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, _class(tmp_path, n=2),
                             "--out", tmp_path / "results", "--course", course_root, *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _worker_grading(run, student):
    """The grading worker of `run` that holds `student`'s submission now (its folder has in/<student>), or None."""
    for child in psutil.Process(run.pid).children(recursive=True):
        try:
            if "autograder.grading.worker" in " ".join(child.cmdline()) and \
                    (Path(child.environ()["HOME"]) / "in" / student).is_dir():
                return child
        except (psutil.Error, KeyError):
            continue
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
    run = _grade(course_root, tmp_path, temp_dir, "--jobs", "2", "--cell-timeout", "2")  # its waiting cell: 2 s
    code, out = _finished(run)
    assert code == 0, out
    assert _left(temp_dir) == [] and _groups(run) == []


def test_a_run_stopped_by_ctrl_c_leaves_nothing(terminal, temp_dir):
    _slow_student_in_its_waiting_cell(terminal)
    made = _groups(terminal)  # where cgroups can be made here, the run's, with its sandboxes' inside
    assert bool(made) == (cgroups.find()[0] is not None)
    where = terminal.stacks()  # `kill -USR1` shows where a run is (autograder/README.md), and it goes on
    assert " in run_pool" in where and terminal.run.poll() is None, where
    os.killpg(terminal.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the foreground process group
    code, out = terminal.finished(timeout=120)
    assert code == grade.STOPPED_STATUS and grade.stopped() in out, out  # it stopped mid-run, and said so
    assert not (terminal.results / f"{SLOW}.json").exists(), out
    assert _left(temp_dir) == [] and _groups(terminal) == []


def test_a_run_whose_worker_is_killed_leaves_nothing(terminal, temp_dir):
    _slow_student_in_its_waiting_cell(terminal)
    worker = _worker_grading(terminal.run, SLOW)
    assert worker is not None, terminal.text[-3000:]
    worker.kill()
    code, out = terminal.finished()
    assert code == 0, out  # its student is a grader error; the run went on, with a worker in its place
    assert json.loads((terminal.results / f"{SLOW}.json").read_text())["status"] == "grader error", out
    assert _left(temp_dir) == [] and _groups(terminal) == []


def test_a_run_on_a_local_cluster_leaves_nothing(course_root, tmp_path, temp_dir):
    code, out = _finished(_grade(course_root, tmp_path, temp_dir, "--cluster", "local:2", "--cell-timeout", "2"))
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


def test_a_cluster_run_sends_a_submission_without_a_copy_on_disk(tmp_path, monkeypatch):
    """`grade --cluster` reads each submission into memory to send it (cluster.submission_files): no folder of the
    temporary folder holds a student's files, so a grade killed outright mid-send leaves none behind."""
    from autograder.grading.dispatch import cluster

    (tmp_path / "tmp").mkdir()
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "a.ipynb").write_text("{}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    assert cluster.submission_files(tmp_path / "alice") == {"a.ipynb": b"{}"}
    assert list((tmp_path / "tmp").iterdir()) == []


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
