"""Time limits under load: what a looping answer costs, and whether a busy machine withholds honest points.

1. A batch of 40 submissions of 02_forward_pass, 2 of them (5%) with `while True: pass` in
   `ffn_forward`, graded with `--jobs 2` and the course's own cell timeout: the wall time,
   and each looping student's time beyond the median honest student's (the issue's bound:
   one cell timeout plus at most 10 s).
2. 20 honest submissions graded with `--jobs 2` while two other processes keep both cores
   busy: how many test cells end withheld (`rerun incomplete`) after the regrade alone that
   follows the batch (target 0), and how many students needed that regrade.
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row, run_timed
from benchmarks.bench_grading import ASSIGNMENT, _course, _submissions, _write

N_BATCH, N_LOOPING, N_BUSY = 40, 2, 20
LOOPING = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"
BUSY = "while True: pass"


def _grade(root, students, course):
    """`python -m autograder grade --jobs 2` over `students`; (wall seconds, stderr, {student: result})."""
    _write(root / "submitted", ASSIGNMENT, students)
    cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(root / "submitted"), "--out",
           str(root / "results"), "--jobs", "2", "--course", str(course)]
    done, seconds, _ = run_timed(cmd, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    results = {p.stem: json.loads(p.read_text()) for p in (root / "results").glob("*.json")}
    return seconds, done.stderr, results


def _cell_timeout(course):
    from autograder.grading import course as course_module

    return float(course_module.load_config(course).Execute.get("timeout", 30) or 30)


def _looping_rows(tmp):
    import nbformat

    students = _submissions(ASSIGNMENT, N_BATCH)
    looping = []
    for student in [s for s in students if s.endswith("-correct")][:N_LOOPING]:
        nb = nbformat.from_dict(json.loads(nbformat.writes(students.pop(student))))
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "ffn_forward":
                cell.source = LOOPING
        looping.append(student.replace("-correct", "-looping"))
        students[looping[-1]] = nb
    course = tmp / "looping" / "course"
    _course(course, ASSIGNMENT)
    seconds, _, results = _grade(tmp / "looping", students, course)
    limit = _cell_timeout(course)
    honest = statistics.median(r["seconds"] for s, r in results.items() if s not in looping)
    label = f"grading {len(students)} x {ASSIGNMENT}, {len(looping)} looping (5%)"
    rows = [Row(f"{label}: wall time, --jobs 2", seconds, "s", "", f"cell timeout {limit:g} s; "
                f"an honest student took {honest:.1f} s (median)")]
    for student in looping:
        r = results[student]
        statuses = sorted({c["status"] for c in r["cells"] if c["exercise"] == "ffn_forward"})
        rows.append(Row(f"{label}: {student}'s cost beyond an honest student's", r["seconds"] - honest, "s",
                        f"<= {limit + 10:g}", f"{r['seconds']:.1f} s in all; ffn_forward: {', '.join(statuses)}; "
                        f"score {r['score']:g}/{r['max_score']:g}, {len(r['flags'])} flag(s)"))
    return rows


def _busy_rows(tmp):
    students = _submissions(ASSIGNMENT, N_BUSY)
    course = tmp / "busy" / "course"
    _course(course, ASSIGNMENT)
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        time.sleep(1)
        with open("/proc/loadavg", encoding="ascii") as f:
            load = f.read().split()[0]
        seconds, stderr, results = _grade(tmp / "busy", students, course)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    withheld = sum(c["status"] == "rerun incomplete" for r in results.values() for c in r["cells"])
    regraded = next((int(line.split()[1]) for line in stderr.splitlines()
                     if line.startswith("grading ") and " again, alone" in line), 0)
    label = f"grading {len(students)} honest x {ASSIGNMENT} beside 2 busy processes"
    return [
        Row(f"{label}: test cells withheld", withheld, "cells", "== 0",
            f"{regraded} student(s) graded again alone after the batch; load average {load} at the start"),
        Row(f"{label}: wall time, --jobs 2", seconds, "s", "", ""),
    ]


def rows():
    with tempfile.TemporaryDirectory(prefix="ffn-bench-timeouts-") as tmp:
        tmp = Path(tmp)
        return _looping_rows(tmp) + _busy_rows(tmp)
