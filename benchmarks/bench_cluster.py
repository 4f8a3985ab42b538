"""`grade --cluster local:2` against `grade --jobs 2` on one machine, the same batch (issue 27).

Both grade the same submissions of 02_forward_pass (bench_grading's mix of correct and
wrong answers), each in a fresh copy of the course; every test cell's score must be the
same in both. The cluster's overhead (its wall time over the pool's, minus one) is what a
Dask scheduler, its workers and sending every submission and the assignment as bytes
cost; the per-submission seconds are what an instructor sizes a cluster with
(autograder/README.md). FFN_BENCH_CLUSTER_N sets the batch (default 40; the issue's figure
is for 300).
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import Row, run_timed
from benchmarks.bench_grading import _assignment, _course, _scores, _submissions, _write

N_SUBMISSIONS = int(os.environ.get("FFN_BENCH_CLUSTER_N", "40"))


def _grade(tmp, aid, name, how):
    """Wall seconds of one `grade` over the batch, in a copy of the course of its own; the gradebook's scores."""
    course = tmp / name
    shutil.copytree(tmp / "template", course)
    cmd = [sys.executable, "-m", "autograder", "grade", aid, str(tmp / "submitted"), "--out", str(tmp / f"{name}-out"),
           "--course", str(course), *how]
    run, seconds, _ = run_timed(cmd, cwd=tmp)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return seconds, _scores(course / "gradebook.db")


def rows():
    from autograder.grading import course

    aid = _assignment()
    submissions = _submissions(aid, N_SUBMISSIONS)
    with tempfile.TemporaryDirectory(prefix="ffn-bench-cluster-") as tmp:
        tmp = Path(tmp)
        _course(tmp / "template", aid)
        _write(tmp / "submitted", aid, submissions)
        course.ensure_bin_on_path()
        t_jobs, jobs = _grade(tmp, aid, "jobs", ["--jobs", "2"])
        t_cluster, on_cluster = _grade(tmp, aid, "cluster", ["--cluster", "local:2"])
    differ = sorted(k for k in set(jobs) | set(on_cluster) if jobs.get(k) != on_cluster.get(k))
    assert not differ, f"{len(differ)} test-cell scores differ between --jobs 2 and --cluster local:2: {differ[:5]}"
    load = os.getloadavg()[0]
    label = f"grading {len(submissions)} x {aid}"
    return [
        Row(f"{label}: grade --jobs 2", t_jobs / len(submissions), "s/submission", "",
            f"{t_jobs:.0f} s in all; load {load:.1f} on {os.cpu_count()} cores"),
        Row(f"{label}: grade --cluster local:2", t_cluster / len(submissions), "s/submission", "",
            f"{t_cluster:.0f} s in all, every score equal to --jobs 2"),
        Row(f"{label}: cluster overhead (local:2 / jobs 2 - 1)", t_cluster / t_jobs - 1, "ratio", "<= 0.10",
            "start-up of a scheduler and 2 workers included"),
    ]
