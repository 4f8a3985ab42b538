"""Answers to look at for 300 students x 30 answer cells, the class report with the students' notebooks, and
the share of disguised copies listed (tests/disguises.py's corpus).

Each student's answer to each cell is one of the course's own (the published solution, or an alternative
or wrong answer of tests/submissions/), renamed and laid out anew for that student; 1 in 20 copies a
classmate's instead. The cells are the course's answer cells, taken in turn until there are 30.
"""

import importlib
import random
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Row, run_timed

N_STUDENTS = 300
N_CELLS = 30
AID = "02_forward_pass"


def _cells():
    """[(grade_id, solution, starter, [the course's answers to it])], N_CELLS of them."""
    from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR, assignments
    from tests.report_fixtures import answer_cells

    cells = []
    for aid in assignments():
        try:
            module = importlib.import_module(f"tests.submissions.{aid}")
        except ModuleNotFoundError:
            continue
        solutions, starters = (answer_cells(d / f"{aid}.ipynb") for d in (SOLUTIONS_DIR, NOTEBOOKS_DIR))
        for gid, solution in solutions.items():
            others = [v[gid] for v in module.CORRECT.values() if gid in v]
            others += [w.source for w in module.WRONG if w.cell == gid]
            cells.append((f"{aid}/{gid}", solution, starters[gid], [solution, *others]))
    return [cells[i % len(cells)] for i in range(N_CELLS)]


def _class(rng, codes):
    from tests.report_fixtures import renamed

    answers = {}
    for i in range(N_STUDENTS):
        student = f"s{i:03d}"
        if answers and rng.random() < 0.05:
            answers[student] = renamed(rng.choice(list(answers.values())), f"c{i}")
        else:
            answers[student] = renamed(rng.choice(codes), f"s{i}")
    return answers


def rows():
    from autograder.report import similarity

    rng = random.Random(30)
    work = [(gid, _class(rng, codes), solution, starter) for gid, solution, starter, codes in _cells()]
    t0, cpu0 = time.perf_counter(), time.process_time()
    found = sum(len(similarity.compare_cell(*w)[0]) for w in work)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return [
        Row(f"answers to look at, {N_STUDENTS} students x {N_CELLS} answer cells", wall, "s", "< 10",
            f"one process (wall on a shared machine); CPU {cpu:.1f} s; {found} matches listed"),
        _report_row(rng),
        *_rate_rows(),
        *_heldout_rows(),
    ]


TARGETS = {"renamed and commented": "100%", "reformatted, redundant parentheses": "100%",
           "through a free cell": "100%", "bound by assignment in a free cell": "100%",
           "beside a decoy in a free cell": "100%", "looked up by a string": "100%",
           "dead code": ">= 90%", "temporaries": ">= 85%",
           "classmate pairs": ">= 95%", "independent answers": "0"}


def _rate_rows():
    """Disguised copies listed, per kind, on the corpus of tests/disguises.py; independent answers listed."""
    from tests import disguises

    r = disguises.rates()
    rows = []
    for kind, target in TARGETS.items():
        share = r.reported[kind] / r.total[kind] if r.total[kind] else float("nan")
        note = f"{r.reported[kind]} of {r.total[kind]} listed"
        if kind == "independent answers":
            rows.append(Row(f"similarity: {kind} listed (controls)", r.reported[kind], "answers", target, note))
        else:
            rows.append(Row(f"similarity: disguised copies listed, {kind}", 100 * share, "%", target, note))
    return rows


HELDOUT_TARGETS = {"renamed": "100%", "commented": "100%", "reformatted": "100%", "parentheses": "100%",
                   "dead_code": ">= 90%", "temporaries": ">= 85%", "free_cell": "", "reordered": ""}


def _heldout_rows():
    """Held-out copies written by hand (tests/heldout_copies/), through the class report itself."""
    tests_dir = str(Path(__file__).resolve().parent.parent / "tests")
    if tests_dir not in sys.path:  # heldout_copies imports itself by that name, as the tests do
        sys.path.insert(0, tests_dir)
    from heldout_copies import measure

    r = measure.measure()
    rows = [Row(f"similarity, held out: copies listed, {kind}", 100 * r.rate(kind), "%", target,
                f"{r.listed[kind]} of {r.total[kind]} listed ({r.short[kind]} more too short to list)")
            for kind, target in HELDOUT_TARGETS.items()]
    rows.append(Row("similarity, held out: independent answers listed", len(r.false_alarms), "answers", "0",
                    f"of {r.independent}"))
    rows.append(Row("similarity, held out: classmates' own answers listed against the solution",
                    len(r.classmates_listed), "answers", "", f"students of {r.classmates} pairs from a classmate: "
                    + ", ".join(sorted({f"{n} {c}" for n, c, _, _ in r.classmates_listed}))))
    return rows


def _report_row(rng):
    """The class report command with --notebooks: reading 300 notebooks and comparing their 3 answer cells."""
    from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR
    from autograder.report.results import course_layout
    from tests.report_fixtures import answer_cells, graded_cells, student_record, write_class, write_notebooks

    solutions = answer_cells(SOLUTIONS_DIR / f"{AID}.ipynb")
    variants = importlib.import_module(f"tests.submissions.{AID}").CORRECT
    codes = {gid: [solutions[gid], *(v[gid] for v in variants.values() if gid in v)] for gid in solutions}
    answers = {gid: _class(rng, c) for gid, c in codes.items()}
    students = sorted(answers[next(iter(answers))])
    layout = course_layout(AID)
    with tempfile.TemporaryDirectory(prefix="ffn-bench-similarity-") as tmp:
        tmp = Path(tmp)
        results = write_class(tmp / "results", [student_record(s, AID, graded_cells(layout, {})) for s in students])
        notebooks = write_notebooks(tmp / "autograded", AID, {s: {g: answers[g][s] for g in answers}
                                                              for s in students})
        assert (NOTEBOOKS_DIR / f"{AID}.ipynb").is_file()
        done, wall, cpu = run_timed([sys.executable, "-m", "autograder.report", AID, "--results", str(results),
                                     "--notebooks", str(notebooks), "--out", str(tmp / "report.html")])
    name = f"report + answers to look at, {N_STUDENTS} notebooks of {AID}"
    if done.returncode != 0:
        return Row(name, float("nan"), "s", "< 10", f"failed: {done.stderr.strip()[-200:]}")
    return Row(name, wall, "s", "< 10", f"command end to end; CPU {cpu:.1f} s; {done.stdout.strip().split(': ')[-1]}")
