"""Each sandbox in a cgroup of its own (gate_in/cgroups.py): limits the kernel counts for the sandbox as a whole.

Real where this machine lets this process make cgroups (root, cgroup v1 or a delegated v2): processes that each
stay under RLIMIT_AS but together pass the sandbox's memory are killed; a flood of empty files in its /tmp (inodes:
kernel memory no tmpfs size counts) stops at the same bound; its process count holds for root's processes too,
which RLIMIT_NPROC never counts. The v2 path is checked on the files it writes (a folder standing for the cgroup
root), and the one line `grade` says where no cgroup can be made, on a machine with none.
"""

import os
import subprocess
import sys

import nbtools
import pytest
from adversarial import grading

from autograder.grading import grade
from autograder.grading.gate_in import cgroups
from autograder.grading.gate_in.sandbox import Limits, MiB, Sandbox

pytestmark = pytest.mark.sandbox
ASSIGNMENT = "02_forward_pass"
WORKER_UID = 200_123  # no such user
FOUND, WHY = cgroups.find()
real = pytest.mark.skipif(FOUND is None, reason=f"no cgroups can be made here: {WHY}")


@pytest.fixture
def worker():
    """A run's group and a worker's in it, as `grade` makes them; everything removed afterwards."""
    assert cgroups.start_run() == ""
    group, _ = cgroups.worker_group("w0-0", Limits(), None)
    yield group
    assert cgroups.end_run() == []


def _run(group, limits, code, uid=None, tmp_path=None):
    sandbox = Sandbox(writable=(str(tmp_path),), cwd=str(tmp_path), uid=uid, limits=limits, cgroup=group)
    sandbox.prepare()
    return subprocess.run(sandbox.command([sys.executable, "-c", code]), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


TOGETHER = """
import os
hold, release = os.pipe()  # each child holds its memory until the parent closes `release`: until one is gone
kids = []
for _ in range(3):  # each 300 MiB, under its own RLIMIT_AS; together past the sandbox's memory
    pid = os.fork()
    if pid == 0:
        os.close(release)
        b = bytearray(300 * 1024 * 1024)
        for j in range(0, len(b), 4096):
            b[j] = 1
        os.read(hold, 1)
        os._exit(0)
    kids.append(pid)
first, status = os.wait()  # none ends of itself: the first to end was killed
os.close(release)
codes = [os.waitstatus_to_exitcode(status)]
codes += [os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids if k != first]
print(sorted(codes))
"""


@real
def test_processes_that_together_pass_the_sandboxs_memory_are_killed(worker, tmp_path):
    limits = Limits(memory=400 * MiB, tmp_size=16 * MiB)
    group = cgroups.sandbox_group(worker, "sb-1", limits)
    run = _run(group, limits, TOGETHER, tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    codes = eval(run.stdout)  # noqa: S307 (the list printed above)
    assert -9 in codes, codes  # SIGKILL: the kernel's out-of-memory killer, in this group alone
    assert cgroups.oom_kills(group) >= 1


FLOOD = """
import os
made = 0
try:
    while made < 1_000_000:
        open(f"/tmp/f{made}", "w").close()
        made += 1
finally:
    print(made, flush=True)
"""


@real
def test_a_flood_of_empty_files_in_tmp_stops_at_the_sandboxs_memory(worker, tmp_path):
    # 1,000,000 empty files take no page of the tmpfs's size, but about a KiB of kernel memory each: far past 104
    # MiB (an unbounded tmpfs allows half the machine's pages as inodes)
    limits = Limits(memory=96 * MiB, tmp_size=4 * MiB)
    group = cgroups.sandbox_group(worker, "sb-1", limits)
    run = _run(group, limits, FLOOD, tmp_path=tmp_path)
    made = int(run.stdout.split()[0]) if run.stdout.split() else 0
    assert made < 1_000_000, run.stderr[-2000:]
    usage = int(open(os.path.join(group[0], "memory.max_usage_in_bytes" if FOUND.kind == "v1" else "memory.peak"))
                .read())
    assert usage <= cgroups.sandbox_memory(limits)


PIDS = """
import os
hold, release = os.pipe()  # every child lives until the parent has counted them all and closes `release`
started = 0
for _ in range(100):
    try:
        if os.fork() == 0:
            os.close(release)
            os.read(hold, 1)
            os._exit(0)
        started += 1
    except OSError:
        break
os.close(release)
print(started)
"""


@real
def test_the_process_count_holds_for_the_sandbox_as_a_whole(worker, tmp_path):
    # uid None as root: the sandbox's processes are root's, whose RLIMIT_NPROC the kernel never enforces
    limits = Limits(nproc=32)
    group = cgroups.sandbox_group(worker, "sb-1", limits)
    run = _run(group, limits, PIDS, tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout) < 32  # the runner's own processes (bwrap, python) count too


def read(folder, name):
    return open(os.path.join(folder, name)).read()


def _kernel_says(group, *names):
    value = cgroups.read_back(group, *names)
    assert value is not None, f"none of {names} in {group}"
    return value


@real
def test_the_kernel_holds_each_sandboxs_limits_and_gives_every_sandbox_the_same_cpu_share(worker):
    """Read back from the kernel, not from what was written: a write the kernel refused would leave no bound."""
    limits = Limits(memory=300 * MiB, tmp_size=8 * MiB, nproc=48)
    first, second = (cgroups.sandbox_group(worker, f"sb-{k}", limits) for k in (1, 2))
    for group in (first, second):
        assert _kernel_says(group, "memory.max", "memory.limit_in_bytes") == cgroups.sandbox_memory(limits)
        assert _kernel_says(group, "pids.max") == 48
    shares = [_kernel_says(g, "cpu.weight", "cpu.shares") for g in (first, second, worker)]
    assert len(set(shares)) == 1, shares
    assert _kernel_says(worker, "memory.max", "memory.limit_in_bytes") == cgroups.worker_memory(Limits())


def test_the_v2_path_writes_its_limits_and_delegates(tmp_path, monkeypatch):
    root = tmp_path / "cgroup"
    (root / "grading").mkdir(parents=True)
    for folder in (root, root / "grading"):  # the root of a v2 mount, and the group this process is in
        (folder / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    own = tmp_path / "own"
    own.write_text("0::/grading\n")
    found, why = cgroups.find(str(root), str(own))
    assert found == cgroups.Hierarchy("v2", (str(root / "grading"),)), why
    monkeypatch.setattr(cgroups, "find", lambda root=None: (found, ""))
    monkeypatch.setattr(cgroups, "kind_of", lambda folder: "v2")  # what the kernel's cgroup.controllers would say
    assert cgroups.start_run() == ""
    limits = Limits(memory=512 * MiB, tmp_size=64 * MiB, nproc=40)
    try:
        group, own = cgroups.worker_group("w0-0", limits, WORKER_UID if os.geteuid() == 0 else None)
        (sandbox,) = cgroups.sandbox_group(group, "sb-1", limits)
        (run,) = cgroups._RUN["folders"]
    finally:
        cgroups._RUN.clear()  # a stand-in's folders hold files, which end_run could not remove
    assert read(root / "grading", "cgroup.subtree_control") == "+memory +pids +cpu"  # below this process's own
    for inner in (run, group[0]):
        assert read(inner, "cgroup.subtree_control") == "+memory +pids +cpu"
    assert own == (os.path.join(group[0], "self"),)
    assert int(read(group[0], "memory.max")) == 640 * MiB + cgroups.WORKER_OWN
    assert int(read(sandbox, "memory.max")) == 640 * MiB
    assert int(read(sandbox, "pids.max")) == 40
    assert int(read(sandbox, "cpu.weight")) == 100 == int(read(group[0], "cpu.weight"))
    if os.geteuid() == 0:  # handed to the worker's user, who makes its sandboxes' groups in it
        assert os.stat(group[0]).st_uid == WORKER_UID == os.stat(own[0]).st_uid


def test_v2_without_its_controllers_is_not_used(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpuset io\n")
    own = tmp_path / "own"
    own.write_text("0::/\n")
    found, why = cgroups.find(str(tmp_path), str(own))
    assert found is None
    assert "without the memory, pids, cpu controller(s) delegated" in why


def test_grade_says_in_one_line_which_limits_do_not_hold_without_cgroups(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cgroups, "ROOT", str(tmp_path))  # a machine with no cgroup mounted
    grade.say_without_cgroups()
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("Limits not held here: a memory bound on each sandbox as a whole"), err
    assert "a process count per sandbox" in err and "an equal CPU share" in err and "(no cgroups: " in err
    assert cgroups.end_run() == []  # and no run group was made


HOARD = """

import os as _os
_hold, _release = _os.pipe()  # the children hold their memory until one of them is gone, however slowly they allocate
_kids = []
for _ in range(6):  # 500 MiB each, far under RLIMIT_AS; 3 GiB together, past the sandbox's 2.5 GiB
    _pid = _os.fork()
    if _pid == 0:
        _os.close(_release)
        _held = b"x" * (500 * 2**20)
        _os.read(_hold, 1)
        _os._exit(0)
    _kids.append(_pid)
_first, _ = _os.wait()  # none ends of itself: the first to end was killed
_os.close(_release)
for _pid in _kids:
    if _pid != _first:
        _os.waitpid(_pid, 0)
"""


# Its largest process, the one the kernel kills, is the one that runs the tests: in the clean re-run they are left
# without a verdict, and the notebook run's kernel dies.
KILLED = """
def _hoard():
    import os
    ready, held = os.pipe()  # each child says it holds its memory
    hold, release = os.pipe()  # and holds it until this process, which alone keeps `release` open, is gone
    for _ in range(4):
        if os.fork() == 0:
            os.close(release)
            os.close(ready)
            _held = b"x" * (450 * 2**20)
            os.write(held, b"h")
            os.read(hold, 1)
            os._exit(0)
    os.close(held)
    told = 0
    while told < 4 and (said := os.read(ready, 4 - told)):  # empty: every child is gone
        told += len(said)
    return b"y" * (900 * 2**20)


def ffn_forward(x, W1, b1, W2, b2):
    _keep = _hoard()
    z = np.asarray(x, dtype=float) @ W1 + b1
    return np.maximum(z, 0.0) @ W2 + b2
"""


@real
@pytest.mark.grading
def test_grading_reports_processes_killed_for_the_sandboxs_memory_as_out_of_memory(tmp_path):
    # The hoarder's kernel itself lives (the killer takes its largest process, a child): no MemoryError, no dead
    # kernel; the sandbox's cgroup alone knows, and the worker reads it (the warm kernel, from a zygote, joined it)
    ctx = nbtools.completed_learner(ASSIGNMENT)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in ctx.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    students = {"honest": ctx, "hoarder": nbtools.with_answers(ctx, {"ffn_forward": answers["ffn_forward"] + HOARD}),
                "killed": nbtools.with_answers(ctx, {"ffn_forward": KILLED})}
    submitted = grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, students)
    course = grading.make_course(tmp_path / "course", ASSIGNMENT)
    # 60 s a cell, a deadline that only catches a hang: a machine busy with other work allocates 3 GiB slowly, and
    # run_batch's 10 s would end the cell as a timeout (which a status reports before running out of memory)
    results = grading.run_batch(ASSIGNMENT, submitted, tmp_path / "results", course, cell_timeout=60.0)
    for student in ("hoarder", "killed"):
        assert results[student]["status"] == "out of memory", (student, results[student]["status"])
    messages = [c["message"] for c in results["killed"]["cells"] if c["grade_id"] == "test_ffn_forward"]
    assert "MemoryError: the sandbox's processes together went past its memory" in messages[0], messages
    assert results["honest"]["status"] == "graded"
    assert results["honest"]["score"] == results["honest"]["max_score"]
