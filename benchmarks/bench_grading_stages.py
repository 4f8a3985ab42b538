"""Where one submission's grading time goes: the per-stage breakdown of `python -m autograder grade`.

Grades FFN_BENCH_STAGES_STUDENTS (default 8) submissions of 02_forward_pass (bench_grading's
mix of right and wrong answers) with one job, so that no other job of the run competes
for the cores, and reads the run's own figures from `logs/timing.jsonl` (worker.TIMED_STAGES,
written by the grader on every run, not by this bench): the worker's start-up (its
process, nbgrader's imports, the course's modules; once per worker), then per submission
the notebook run (the sandboxed kernel's start-up and imports until it answers, the
cells, its shutdown, and nbgrader's own work around them), the clean re-run (the judge,
the learner's sandboxed process, the tests), the feedback page, and the parent's
publishing (gradebook, results files). Each row is the median over the submissions, in
wall seconds: on a busy machine every one of them grows, so read them side by side
with the load average in the note.

Grading as root on Linux, the whole run also goes in a cgroup of its own (cgroup v1's
cpuacct, or v2), whose CPU count includes the sandboxes: the CPU seconds one submission
costs, start-up included, which is what bounds a batch on fully busy cores.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row
from benchmarks.bench_grading import _assignment, _course, _submissions, _write

STAGES = ("notebook run: kernel start", "notebook run: cells", "notebook run: kernel stop",
          "notebook run: nbgrader", "clean re-run", "feedback", "other", "publish", "total")


class CpuGroup:
    """A cgroup for one command tree, to read its CPU seconds; `usable` is False where none can be made."""

    def __init__(self, name):
        self.folder, self.usage = None, None
        for folder, usage in ((Path("/sys/fs/cgroup/cpuacct") / name, "cpuacct.usage"),
                              (Path("/sys/fs/cgroup") / name, "cpu.stat")):
            try:
                folder.mkdir()
            except OSError:
                continue
            if (folder / usage).exists():
                self.folder, self.usage = folder, usage
                break
            folder.rmdir()

    @property
    def usable(self):
        return self.folder is not None

    def add(self, pid):
        (self.folder / "cgroup.procs").write_text(str(pid))

    def seconds(self):
        text = (self.folder / self.usage).read_text()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        return int(dict(line.split() for line in text.splitlines())["usage_usec"]) / 1e6

    def remove(self):
        if self.folder is not None:
            for _ in range(50):  # the last processes of the tree take a moment to leave
                try:
                    self.folder.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def _grade(tmp, aid, n):
    """Grade n submissions with one job; (timing.jsonl's records, wall seconds, CPU seconds or None)."""
    from autograder.grading import course

    _course(tmp / "course", aid)
    _write(tmp / "submitted", aid, _submissions(aid, n))
    course.ensure_bin_on_path()
    cmd = [sys.executable, "-m", "autograder", "grade", aid, str(tmp / "submitted"), "--out", str(tmp / "results"),
           "--jobs", "1", "--course", str(tmp / "course")]
    group = CpuGroup(f"ffn-bench-stages-{os.getpid()}")  # not usable unless root may make one
    start = time.perf_counter()
    # A child that joins the group before it runs anything: all its descendants are counted.
    grade = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=(lambda: group.add(os.getpid())) if group.usable else None)
    _, err = grade.communicate()
    wall = time.perf_counter() - start
    cpu = group.seconds() if group.usable else None
    group.remove()
    if grade.returncode != 0:
        raise RuntimeError(f"grade failed ({grade.returncode}):\n{err[-3000:]}")
    return read_timing(tmp / "results"), wall, cpu


def read_timing(results):
    """The records of a grading run's logs/timing.jsonl under `results`."""
    lines = (Path(results) / "logs" / "timing.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def stage_rows(records, label, note):
    """Rows of the median of each stage over the students of `records` (timing.jsonl's), and the workers' start."""
    students = [r["stages"] for r in records if "student" in r]
    starts = [r["stages"]["worker start"] for r in records if "worker" in r]
    out = [Row(f"{label}: worker start (once per worker)", statistics.median(starts), "s", "",
               "process, nbgrader and course imports, course copy")] if starts else []
    out += [Row(f"{label}: {stage}", statistics.median(s.get(stage, 0.0) for s in students), "s", "", note)
            for stage in STAGES]
    out.append(Row(f"{label}: worker's own CPU", statistics.median(s.get("worker cpu", 0.0) for s in students),
                   "s", "", "nbgrader, nbconvert, the judge's parent side, feedback"))
    return out


def rows():
    n = int(os.environ.get("FFN_BENCH_STAGES_STUDENTS", "8"))
    aid = _assignment()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ffn-bench-stages-") as tmp:
        records, wall, cpu = _grade(Path(tmp), aid, n)
    load = max(load, os.getloadavg()[0])
    graded = sum("student" in r for r in records)
    assert graded == n, f"timing.jsonl has {graded} of {n} students"
    busy = f"median of {n}, --jobs 1, load average {load:.1f} on {os.cpu_count()} cores"
    label = f"one submission of {aid}"
    out = stage_rows(records, label, busy)
    if cpu is not None:
        out.append(Row(f"{label}: CPU, every process (start-up shared out)", cpu / n, "s", "",
                       f"{wall:.0f} s wall for {n}; sandboxes included (cgroup)"))
    return out
