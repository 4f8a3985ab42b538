"""Batch grading throughput: plain `nbgrader autograde` against `python -m autograder grade --jobs 2`.

40 submissions of 02_forward_pass (a mix of correct and wrong answers), each
run graded in its own fresh copy of the course, one after the other on the same
machine. Submissions per minute for both, and their ratio. Both runs must give
every submission the same score on every test cell: a mismatch is printed and
fails the benchmark (a fast grader that grades differently is not faster).

Then the grader's memory: the peak resident memory of each grading process
(the parent, its workers and their judges, not the sandboxes) while it grades
submissions built to make a trusted process hold far more than they send.
"""

import copy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row, TreePeaks, run_timed

N_SUBMISSIONS = 40
ASSIGNMENT = "02_forward_pass"

# Answers the benchmark cycles through: the worked solution, and plausible mistakes.
_WRONG = {
    "ffn-missing-b1": {"ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n"
                                      "    return np.maximum(np.asarray(x, float) @ W1, 0.0) @ W2 + b2\n"},
    "torch-no-transpose": {"linear_torch": "def linear_torch(x, weight, bias):\n"
                                           "    y = np.asarray(x, float) @ np.asarray(weight, float)\n"
                                           "    return y if bias is None else y + bias\n"},
    "dead-fraction-unfinished": {},  # keeps the learner's stub
}


def _assignment():
    """02_forward_pass, or (while it is being written) the first graded assignment there is."""
    from autograder import assignments
    from autograder.authoring import build

    ids = assignments()
    if ASSIGNMENT in ids:
        return ASSIGNMENT
    for aid in ids:
        if any(c.metadata.get("nbgrader", {}).get("grade") for c in build.read_source(aid).cells):
            return aid
    raise RuntimeError("no graded assignment to benchmark")


def _submissions(aid, n=N_SUBMISSIONS):
    """student id -> notebook, `n` of them: the learner version with answers filled in."""
    import nbformat

    from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR

    learner = nbformat.read(NOTEBOOKS_DIR / f"{aid}.ipynb", as_version=4)
    solution = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                for c in nbformat.read(SOLUTIONS_DIR / f"{aid}.ipynb", as_version=4).cells}
    kinds = ["correct", *_WRONG] if aid == ASSIGNMENT else ["correct", "learner"]
    out = {}
    for i in range(n):
        kind = kinds[i % len(kinds)]
        nb = copy.deepcopy(learner)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            gid = meta.get("grade_id")
            if meta.get("solution") and kind != "learner":
                answer = _WRONG.get(kind, {}).get(gid, solution[gid])
                if not (kind == "dead-fraction-unfinished" and gid == "dead_fraction"):
                    cell.source = answer
        out[f"s{i:02d}-{kind}"] = nb
    return out


def _course(root, aid):
    import nbformat

    from autograder import COURSE_ROOT
    from autograder.authoring import build
    from autograder.grading import course

    root.mkdir(parents=True)
    shutil.copy(COURSE_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    target = root / "source" / aid / f"{aid}.ipynb"
    target.parent.mkdir(parents=True)
    target.write_text(nbformat.writes(build.read_source(aid)) + "\n", encoding="utf-8")
    course.ensure_bin_on_path()
    course.generate_assignment(course.load_config(root), aid)


def _write(folder, aid, submissions):
    import nbformat

    for student, nb in submissions.items():
        path = folder / student / aid / f"{aid}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def _scores(db_path):
    from autograder.grading.scoring.gradebook import cell_scores

    return {(row.student, row.cell): row.auto_score for row in cell_scores(db_path)}


def _timed(cmd, cwd):
    """Wall seconds of one command, which must succeed."""
    run, seconds, _ = run_timed(cmd, cwd=cwd)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return seconds


# Answers built to make a trusted process hold much more than they send (issue 10's memory attacks).
_MEMORY_ATTACKS = {
    "m-strings": {"ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n"
                                 "    return ['x' * (16384 - i % 7) for i in range(4096)]\n"},
    "m-items": {"ffn_forward": "class Endless:\n    def __len__(self):\n        return 10**9\n"
                               "    def __getitem__(self, i):\n        return np.ones(2**23)\n\n"
                               "def ffn_forward(x, W1, b1, W2, b2):\n    return Endless()\n"},
    "m-errors": {"ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n    raise ValueError('e' * 40_000_000)\n"},
    "m-metadata": {"dead_fraction": "from IPython.display import display\n"
                                    "for _ in range(4):\n"
                                    "    display({'text/plain': 'x'}, raw=True, metadata={'m': 'y' * 25_000_000})\n\n"
                                    "def dead_fraction(x, W1, b1):\n    return 0.5\n"},
}


def _memory_rows(aid, tmp):
    if aid != ASSIGNMENT:
        return []
    from autograder.grading import course

    learner = _submissions(aid)
    honest = {k: v for k, v in list(learner.items())[:2]}
    attacks = {}
    for name, answers in _MEMORY_ATTACKS.items():
        nb = copy.deepcopy(next(iter(honest.values())))
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in answers:
                cell.source = "import numpy as np\n\n" + answers[gid]
        attacks[name] = nb
    root = tmp / "memory"
    _course(root / "course", aid)
    _write(root / "submitted", aid, {**honest, **attacks})
    course.ensure_bin_on_path()
    cmd = [sys.executable, "-m", "autograder", "grade", aid, str(root / "submitted"), "--out", str(root / "results"),
           "--jobs", "2", "--course", str(root / "course"), "--cell-timeout", "30"]
    start = time.perf_counter()
    grade = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peaks = TreePeaks(grade.pid, (b"autograder.grading.worker", b"autograder\0grade"))
    _, err = grade.communicate()
    peaks, seconds = peaks.stop(), time.perf_counter() - start
    if grade.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({grade.returncode}):\n{err[-3000:]}")
    label = f"grading {len(attacks)} memory attacks + {len(honest)} honest x {aid}"
    return [
        Row(f"{label}: peak memory of a worker or judge", peaks[b"autograder.grading.worker"] / 2**20, "MiB", "<= 1024",
            f"{seconds:.0f} s; sandboxes not counted (they have their own limit)"),
        Row(f"{label}: peak memory of the grading parent", peaks[b"autograder\0grade"] / 2**20, "MiB", "<= 1024"),
    ]


def rows():
    from autograder.grading import course

    aid = _assignment()
    submissions = _submissions(aid)
    with tempfile.TemporaryDirectory(prefix="ffn-bench-grading-") as tmp:
        tmp = Path(tmp)
        template = tmp / "template"
        _course(template, aid)
        plain, ours = tmp / "plain", tmp / "ours"
        shutil.copytree(template, plain)
        shutil.copytree(template, ours)
        _write(plain / "submitted", aid, submissions)
        _write(tmp / "submitted", aid, submissions)
        course.ensure_bin_on_path()
        t_plain = _timed([sys.executable, "-m", "nbgrader", "autograde", aid], cwd=plain)
        t_ours = _timed([sys.executable, "-m", "autograder", "grade", aid, str(tmp / "submitted"),
                                   "--out", str(tmp / "results"), "--jobs", "2", "--course", str(ours)], cwd=tmp)
        plain_scores, our_scores = _scores(plain / "gradebook.db"), _scores(ours / "gradebook.db")
        memory = _memory_rows(aid, tmp)
    mismatches = sorted(f"{student} {cell}: nbgrader {plain_scores.get((student, cell))}, "
                        f"autograder {our_scores.get((student, cell))}"
                        for student, cell in set(plain_scores) | set(our_scores)
                        if plain_scores.get((student, cell)) != our_scores.get((student, cell)))
    if mismatches or len({s for s, _ in plain_scores}) != N_SUBMISSIONS:
        print("scores differ between plain nbgrader and python -m autograder grade:", *mismatches, sep="\n  ")
    assert not mismatches, f"{len(mismatches)} test-cell scores differ (listed above)"
    rate_plain, rate_ours = N_SUBMISSIONS / t_plain * 60, N_SUBMISSIONS / t_ours * 60
    label = f"grading {N_SUBMISSIONS} x {aid}"
    return [
        Row(f"{label}: nbgrader autograde (serial)", rate_plain, "submissions/min", "", f"{t_plain:.0f} s"),
        Row(f"{label}: autograder grade --jobs 2 (sandboxed)", rate_ours, "submissions/min", "",
            f"{t_ours:.0f} s, every score equal to nbgrader's"),
        Row(f"{label}: throughput ratio (autograder / nbgrader)", rate_ours / rate_plain, "ratio", ">= 1.6",
            "wall clock: other load on the machine lowers it"),
        # No CPU-time rows: a sandbox killed at the end of its job leaves its processes to the system's init,
        # so their CPU time never reaches this process's children's count, and such a row would understate it.
        *memory,
    ]
