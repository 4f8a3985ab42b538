"""CPU shares between sandboxes: an honest classmate beside a sandbox that keeps 200 processes busy.

`grade --jobs 2` runs in a cgroup of its own, as it does in a container or a pod, where the kernel's autogroups do
not share the CPU between sandboxes. An honest student is graded beside an honest classmate, then beside a
classmate whose `ffn_forward` cell forks 200 processes that each spin for 30 s: its grading time beside the burner
over its time beside the honest classmate (the issue's bound: 2x; the same two jobs share the machine's cores
either way; its time alone is printed too). Each sandbox's cgroup (gate_in/cgroups.py) gets one equal CPU share,
however many processes it runs. Where no cgroup can be made here, the row says so instead of a figure.
"""

import contextlib
import json
import os
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


def rows():
    from autograder.grading.gate_in import cgroups

    label = "honest student beside a 200-process burner, grading in a cgroup of its own"
    found, why = cgroups.find()
    if found is None:
        return [Row(f"{label}: slowdown", float("nan"), "x", "<= 2", f"not measured: no cgroups here ({why})")]
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
    return [Row(f"{label}: slowdown", honest["seconds"] / fair["seconds"], "x", "<= 2",
                f"{alone['seconds']:.1f} s alone, {fair['seconds']:.1f} s beside an honest classmate, "
                f"{honest['seconds']:.1f} s beside the burner "
                f"(score {honest['score']:g}/{honest['max_score']:g}); the burner: {burner['status']}, "
                f"{burner['seconds']:.1f} s")]
