"""A class of 300 on JupyterHub: collect 300 submissions from nbgrader's exchange, grade them with --jobs N.

The submissions are 02_forward_pass (bench_grading's mix of right and wrong answers), laid
out as students' `nbgrader submit` leaves them in the exchange
(`<exchange>/ffn-course/inbound/<student>+<assignment>+<timestamp>+<random>/`). `nbgrader
collect` brings them into a fresh copy of the course, then `python -m autograder grade
--jobs N` grades them, sandboxed. Rows: the wall time, CPU seconds per submission, the
peak resident memory of one job's processes (its worker or judge, and its sandboxed
kernel), and from the CPU time the cores a 10-minute turnaround for 300 students needs.

FFN_BENCH_HUB_STUDENTS (default 300) and FFN_BENCH_HUB_JOBS (default: the number of cores)
change the class size and N.
"""

import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row
from benchmarks.bench_grading import _assignment, _course, _cpu, _Peaks, _submissions

COURSE_ID = "ffn-course"
TURNAROUND_S = 600  # the guide's target: every submission of the class graded within 10 minutes


def _exchange_inbound(exchange, aid, notebooks, n):
    """n students' submissions in the exchange's inbound folder, cycling through `notebooks`."""
    import nbformat

    inbound = exchange / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    variants = list(notebooks.items())
    for i in range(n):
        kind, nb = variants[i % len(variants)]
        stamp = f"2026-01-01 09:{i // 60 % 60:02d}:{i % 60:02d}.000000 UTC"
        folder = inbound / f"st{i:03d}-{kind.split('-', 1)[1]}+{aid}+{stamp}+{secrets.token_urlsafe(8)}"
        folder.mkdir()
        (folder / f"{aid}.ipynb").write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")


def _run(cmd, cwd):
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({run.returncode}):\n{run.stderr[-3000:]}")


def rows():
    from autograder import course

    n = int(os.environ.get("FFN_BENCH_HUB_STUDENTS", "300"))
    jobs = int(os.environ.get("FFN_BENCH_HUB_JOBS", str(os.cpu_count() or 1)))
    aid = _assignment()
    with tempfile.TemporaryDirectory(prefix="ffn-bench-hub-") as tmp:
        tmp = Path(tmp)
        root, exchange = tmp / "course", tmp / "exchange"
        _course(root, aid)
        _exchange_inbound(exchange, aid, _submissions(aid), n)
        course.ensure_bin_on_path()
        start = time.perf_counter()
        _run([sys.executable, "-m", "nbgrader", "collect", aid, f"--Exchange.root={exchange}",
              f"--CourseDirectory.course_id={COURSE_ID}"], cwd=root)
        collect_s = time.perf_counter() - start
        collected = len(list((root / "submitted").glob(f"*/{aid}/{aid}.ipynb")))
        assert collected == n, f"nbgrader collect brought {collected} of {n} submissions"
        cmd = [sys.executable, "-m", "autograder", "grade", aid, str(root / "submitted"), "--out",
               str(tmp / "results"), "--jobs", str(jobs), "--course", str(root)]
        cpu, start = _cpu(), time.perf_counter()
        with _Peaks(b"autograder.worker") as workers, _Peaks(b"ipykernel") as kernels:
            _run(cmd, cwd=tmp)
        grade_s, cpu = time.perf_counter() - start, _cpu() - cpu
        graded = len(list((tmp / "results").glob("*.json")))
        assert graded == n, f"grade wrote results for {graded} of {n} students"
    cpu_each = cpu / n
    label = f"hub: {n} x {aid} collected from the exchange, grade --jobs {jobs}"
    return [
        Row(f"{label}: collect", collect_s, "s", "", "nbgrader collect, exchange -> submitted/"),
        Row(f"{label}: grade, wall", grade_s, "s", f"<= {TURNAROUND_S}", f"{n / grade_s * 60:.1f} submissions/min"),
        Row(f"{label}: CPU per submission", cpu_each, "s", "", "sandbox, notebook run and clean re-run"),
        Row(f"{label}: peak memory of a job's worker or judge", workers.peak / 2**20, "MiB"),
        Row(f"{label}: peak memory of a job's sandboxed kernel", kernels.peak / 2**20, "MiB", "",
            "a job holds one of each at a time"),
        Row(f"cores for 300 students in {TURNAROUND_S // 60} min (from the CPU per submission)",
            math.ceil(300 * cpu_each / TURNAROUND_S), "cores", "", "--jobs = cores; assumes no other load"),
    ]
