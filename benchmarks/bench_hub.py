"""A class of 300 on JupyterHub: collect 300 submissions from nbgrader's exchange, grade them with --jobs N.

The submissions are 02_forward_pass (bench_grading's mix of right and wrong answers), laid
out as students' `nbgrader submit` leaves them in the exchange
(`<exchange>/ffn-course/inbound/<student>+<assignment>+<timestamp>+<random>/`). `nbgrader
collect` brings them into a fresh copy of the course, then `python -m autograder grade
--jobs N` grades them, sandboxed. Rows: the wall time; one job's wall time per submission,
with the machine's load average (other work slows it); the peak resident memory of one
job's processes (its worker or judge, and its sandboxed kernel), counting only processes
under this grading; and from the job's time per submission, the cores a 10-minute
turnaround for 300 students needs (not from CPU time: the children's CPU time that reaches
the grader misses most of the sandboxes' work, about 1 s per submission, less than one
kernel's start-up, so it would understate the need); and where a submission's time went,
the medians of the run's own logs/timing.jsonl (bench_grading_stages).

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

from benchmarks import Row, TreePeaks
from benchmarks.bench_grading import _assignment, _course, _submissions
from benchmarks.bench_grading_stages import read_timing, stage_rows

COURSE_ID = "ffn-course"
TURNAROUND_S = 600  # the guide's target: every submission of the class graded within 10 minutes
WARM_KERNEL = b"\x00kernel\x00"  # in the command line of a kernel started warm, and of its zygote


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
    from autograder.grading import course

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
        load, start = os.getloadavg()[0], time.perf_counter()
        grade = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # A kernel started the plain way runs ipykernel_launcher; one started warm has its zygote's command line,
        # whose last argument is its mode (zygote.py), so the kernels' zygote counts with them.
        peaks = TreePeaks(grade.pid, (b"autograder.grading.worker", b"ipykernel_launcher", WARM_KERNEL))
        _, err = grade.communicate()
        peaks = peaks.stop()
        grade_s, load = time.perf_counter() - start, max(load, os.getloadavg()[0])
        if grade.returncode != 0:
            raise RuntimeError(f"grade failed ({grade.returncode}):\n{err[-3000:]}")
        graded = len(list((tmp / "results").glob("*.json")))
        assert graded == n, f"grade wrote results for {graded} of {n} students"
        timing = read_timing(tmp / "results")
    wall_each = grade_s * jobs / n  # one job's wall seconds per submission
    label = f"hub {n} x {aid}"
    busy = f"load average {load:.1f} on {os.cpu_count()} cores"
    return [
        Row(f"{label}: nbgrader collect from the exchange", collect_s, "s"),
        Row(f"{label}: grade --jobs {jobs}, wall", grade_s, "s", "", f"{n / grade_s * 60:.1f} submissions/min"),
        Row(f"{label}: a job's wall time per submission", wall_each, "s", "", busy),
        Row(f"{label}: peak RSS of a job's worker or judge", peaks[b"autograder.grading.worker"] / 2**20, "MiB"),
        Row(f"{label}: peak RSS of a job's sandboxed kernel",
            max(peaks[b"ipykernel_launcher"], peaks[WARM_KERNEL]) / 2**20, "MiB", "",
            "a job runs one of each at a time"),
        Row("hub: cores for 300 students in 10 min", math.ceil(300 * wall_each / TURNAROUND_S), "cores", "",
            f"--jobs = cores, at this job speed ({busy})"),
        # Where one submission's time went (the run's own logs/timing.jsonl): medians over the class.
        *stage_rows(timing, f"{label} (medians)", f"median of {n}, --jobs {jobs}, {busy}"),
    ]
