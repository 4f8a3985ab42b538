"""CPU shares between sandboxes: an honest classmate beside a sandbox that keeps 200 processes busy.

`grade --jobs 2` runs in a cgroup of its own, as it does in a container or a pod, where the kernel's autogroups do
not share the CPU between sandboxes. An honest student is graded beside an honest classmate, then beside a
classmate whose `ffn_forward` cell forks 200 processes that each spin for 30 s: its grading time beside the burner
over its time beside the honest classmate (the issue's bound: 2x; the same two jobs share the machine's cores
either way; its time alone is printed too). Each sandbox's cgroup (gate_in/cgroups.py) gets one equal CPU share,
however many processes it runs. Where no cgroup can be made here, the row says so instead of a figure.

And a sandbox's memory, kernel memory included, under the floods no tmpfs size counts: extended attributes on its
/tmp and /dev/shm (the seccomp filter refuses them) and then empty files until its cgroup refuses more: the group's
peak against its bound.
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import Row, run_timed
from benchmarks.bench_grading import ASSIGNMENT, _course, _submissions, _write

BURNER = ("\n\nimport os as _os, time as _time\nfor _ in range(200):\n    if _os.fork() == 0:\n"
          "        _end = _time.time() + 30\n        while _time.time() < _end:\n            pass\n"
          "        _os._exit(0)\n")


def _students(burner):
    """The honest student and a classmate: honest too, or with `burner` one whose ffn_forward answer starts the 200
    spinners."""
    import nbformat

    honest = next(iter(_submissions(ASSIGNMENT, 1).values()))
    classmate = nbformat.from_dict(json.loads(nbformat.writes(honest)))
    if burner:
        for cell in classmate.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "ffn_forward":
                cell.source += BURNER
    return {"honest": honest, "classmate": classmate}


def _graded(root, course, students, group):
    """`grade --jobs 2` of `students`, started inside `group` (its cgroup); {student: result}."""
    from autograder.grading.gate_in import cgroups

    _write(root / "submitted", ASSIGNMENT, students)
    cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(root / "submitted"), "--out",
           str(root / "results"), "--jobs", "2", "--course", str(course)]
    done, _, _ = run_timed(cmd, cwd=root, preexec_fn=lambda: cgroups.join_cgroup(group))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {p.stem: json.loads(p.read_text()) for p in (root / "results").glob("*.json")}


FLOOD = """
import os
refused = 0
for where in ("/tmp", "/dev/shm"):
    open(f"{where}/x", "w").close()
    for k in range(1000):
        try:
            os.setxattr(f"{where}/x", f"user.k{k}", b"v" * 65536)
        except OSError:
            refused += 1
print(refused, flush=True)
for made in range(1, 2_000_001):  # until the cgroup's bound stops it (an out-of-memory kill leaves no last word)
    open(f"/tmp/f{made}", "w").close()
    if made % 10_000 == 0:
        print(made, flush=True)
"""


def _flood_row():
    """A sandbox's peak memory, kernel memory included, under the xattr and empty-file floods, against its bound."""
    from autograder.grading.gate_in import cgroups
    from autograder.grading.gate_in.sandbox import Limits, MiB, Sandbox

    label = "a sandbox's memory, kernel memory included, under the xattr and empty-file floods"
    found, why = cgroups.find()
    if found is None:
        return Row(label, float("nan"), "MiB", "<= bound", f"not measured: no cgroups here ({why})")
    limits = Limits(memory=256 * MiB, tmp_size=16 * MiB)
    cgroups.start_run()
    try:
        worker, _ = cgroups.worker_group("bench-flood", limits, None)
        group = cgroups.sandbox_group(worker, "sb-1", limits)
        with tempfile.TemporaryDirectory(prefix="ffn-bench-flood-") as tmp:
            sandbox = Sandbox(writable=(tmp,), cwd=tmp, limits=limits, cgroup=group)
            sandbox.prepare()
            run = subprocess.run(sandbox.command([sys.executable, "-c", FLOOD]), capture_output=True, text=True,
                                 timeout=600, stdin=subprocess.DEVNULL)
        peak = cgroups.read_back(group, "memory.peak" if found.kind == "v2" else "memory.max_usage_in_bytes")
    finally:
        cgroups.end_run()
    printed = run.stdout.split() or ["?"]
    refused, made = printed[0], (printed[-1] if len(printed) > 1 else "0")
    bound = cgroups.sandbox_memory(limits)
    return Row(label, float("nan") if peak is None else peak / MiB, "MiB", f"<= {bound / MiB:.0f}",
               f"{refused} of 2000 xattrs refused; about {made} empty files made before the bound stopped them")


def rows():
    return [_burner_row(), _flood_row()]


def _burner_row():
    from autograder.grading.gate_in import cgroups

    label = "honest student beside a 200-process burner, grading in a cgroup of its own"
    found, why = cgroups.find()
    if found is None:
        return Row(f"{label}: slowdown", float("nan"), "x", "<= 2", f"not measured: no cgroups here ({why})")
    group = cgroups.make(found.kind, found.base, f"ffn-bench-{os.getpid()}")
    try:
        with tempfile.TemporaryDirectory(prefix="ffn-bench-cgroups-") as tmp:
            tmp = Path(tmp)
            os.chmod(tmp, 0o755)
            course = tmp / "course"
            _course(course, ASSIGNMENT)
            alone = _graded(tmp / "alone", course, {"honest": _students(False)["honest"]}, group)["honest"]
            fair = _graded(tmp / "fair", course, _students(False), group)["honest"]
            beside = _graded(tmp / "beside", course, _students(True), group)
    finally:
        with contextlib.suppress(OSError):
            cgroups.remove(group)
    honest, burner = beside["honest"], beside["classmate"]
    return Row(f"{label}: slowdown", honest["seconds"] / fair["seconds"], "x", "<= 2",
                f"{alone['seconds']:.1f} s alone, {fair['seconds']:.1f} s beside an honest classmate, "
                f"{honest['seconds']:.1f} s beside the burner "
                f"(score {honest['score']:g}/{honest['max_score']:g}); the burner: {burner['status']}, "
                f"{burner['seconds']:.1f} s")
