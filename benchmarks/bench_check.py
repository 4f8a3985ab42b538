"""The learner's self-check against a plain run: `python -m autograder check` beside nbclient, in one run.

Both take the completed learner notebook of 02_forward_pass (nbtools.completed_learner), as
a learner's own file: a plain run is `jupyter execute` of it in a fresh kernel (nbclient),
`check` grades it as `grade` would, the clean re-run included. They alternate,
FFN_BENCH_CHECK_ROUNDS times each (default 3), so that other work on the machine weighs on
both alike; each figure is the median. The ratio is set against the issue's targets: 1.5x
with the sandbox (where bubblewrap can build one), 1.2x without it (`check --unsafe`).

The breakdown is what `check` itself measured (check.TIMING_ENV): the interpreter's start
(a bare `python -c pass`), the imports until `check` runs, its set-up (the input's checks,
the sandbox probe, the grader's imports, the course: built from its source the first time,
then a copy of what check_cache kept), the grading
worker's start, then the worker's own stages (worker.TIMED_STAGES: kernel start, cells,
clean re-run, feedback), and the report. The last row is a check with nothing kept yet:
a learner's first. Timings are figures to read, not assertions;
the same points as a plain `grade` are tests/test_self_check.py's to hold.
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row, run_timed

ASSIGNMENT = "02_forward_pass"
TARGETS = {True: 1.5, False: 1.2}  # sandboxed: the ratio to a plain run
COURSE_STAGE = "course: its kept build copied, or built"  # check.py's name for it
WORKER_STAGES = ("notebook run: kernel start", "notebook run: cells", "notebook run: kernel stop",
                 "notebook run: nbgrader", "clean re-run", "feedback", "other")


def _plain(notebook):
    """Wall seconds of a plain run of `notebook` in a fresh kernel, the process's start included."""
    done, wall, _ = run_timed([str(Path(sys.executable).with_name("jupyter-execute")), str(notebook)])
    if done.returncode != 0:
        raise RuntimeError(f"the plain run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall


def _check(notebook, unsafe, timing, cache=None):
    """(wall seconds, check's own stage record) of `python -m autograder check` on `notebook`; with its cache in
    the folder `cache` if given (check_cache.CACHE_ENV), else the user's."""
    from autograder.grading.check import TIMING_ENV
    from autograder.grading.check_cache import CACHE_ENV

    cmd = [sys.executable, "-m", "autograder", "check", str(notebook)] + (["--unsafe"] if unsafe else [])
    env = dict(os.environ, **{TIMING_ENV: str(timing)}, **({CACHE_ENV: str(cache)} if cache else {}))
    launched = time.time()
    done, wall, _ = run_timed(cmd, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"check lost points or failed ({done.returncode}):\n{done.stdout[-2000:]}"
                           f"{done.stderr[-3000:]}")
    record = json.loads(Path(timing).read_text(encoding="utf-8"))
    record["to main"] = record["main entered"] - launched
    return wall, record


def _bare_start():
    """Wall seconds of the interpreter's start alone (site and the environment's .pth files)."""
    return statistics.median(run_timed([sys.executable, "-c", "pass"])[1] for _ in range(3))


def _stage_rows(records, label, note):
    """The median of each stage of `check` over `records`, in the order it runs."""
    bare = _bare_start()
    out = [Row(f"{label}: process start", bare, "s", "", "python -c pass"),
           Row(f"{label}: imports until check runs", statistics.median(r["to main"] for r in records) - bare, "s",
               "", note)]
    for stage in records[0]["stages"]:
        if stage in ("worker", "grading"):
            continue
        out.append(Row(f"{label}: {stage}", statistics.median(r["stages"][stage] for r in records), "s", "", note))
    for stage in WORKER_STAGES:
        out.append(Row(f"{label}: grading: {stage}",
                       statistics.median(r["stages"]["worker"].get(stage, 0.0) for r in records), "s", "", note))
    return out


def _compare(folder, unsafe, rounds):
    """(plain seconds, check seconds, check's records), alternating the two `rounds` times, after one check
    that fills the cache (its first run on a machine, or after a change to the course: not counted here)."""
    _check(folder / f"{ASSIGNMENT}.ipynb", unsafe, folder / "timing-warm-up.json")
    plain, checked, records = [], [], []
    for i in range(rounds):
        plain.append(_plain(folder / f"{ASSIGNMENT}.ipynb"))
        wall, record = _check(folder / f"{ASSIGNMENT}.ipynb", unsafe, folder / f"timing-{unsafe}-{i}.json")
        checked.append(wall)
        records.append(record)
    return statistics.median(plain), statistics.median(checked), records


def rows():
    import nbformat
    from nbtools import completed_learner

    from autograder.grading.gate_in import sandbox

    rounds = int(os.environ.get("FFN_BENCH_CHECK_ROUNDS", "3"))
    sandboxed = sandbox.probe(sandbox.Limits())[0]
    out = []
    with tempfile.TemporaryDirectory(prefix="ffn-bench-check-") as tmp:
        folder = Path(tmp)
        nbformat.write(completed_learner(ASSIGNMENT), folder / f"{ASSIGNMENT}.ipynb")
        for unsafe in ((False, True) if sandboxed else (True,)):
            load = os.getloadavg()[0]
            plain, checked, records = _compare(folder, unsafe, rounds)
            load = max(load, os.getloadavg()[0])
            how = "without the sandbox (--unsafe)" if unsafe else "in the sandbox"
            note = f"median of {rounds}, load average {load:.1f} on {os.cpu_count()} cores"
            out += [Row(f"plain run of {ASSIGNMENT} (jupyter execute)", plain, "s", "", note),
                    Row(f"check {how}", checked, "s", "", note),
                    Row(f"check {how} / plain run", checked / plain, "x", f"<= {TARGETS[not unsafe]}", note)]
            out += _stage_rows(records, f"check {how}", note)
        cold, record = _check(folder / f"{ASSIGNMENT}.ipynb", not sandboxed, folder / "timing-cold.json",
                              cache=folder / "empty-cache")
        out.append(Row("check, its first run (nothing kept yet)", cold, "s", "",
                       f"once; of which the course's build {record['stages'][COURSE_STAGE]:.1f} s"))
    return out
