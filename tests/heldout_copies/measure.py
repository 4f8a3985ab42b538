"""Rates of the held-out pairs through the class report itself: notebooks written, `build` run, matches read.

Each notebook's pairs make one class: pair i is students a<i> (its `first`) and b<i> (its `second`, with
its free cell, if any, inserted as a code cell before the answer cell), each with that one answer cell
filled in and the rest as the learner got them. A copy is listed when the report links b<i> with a<i>,
or lists both against the published solution (a copy of the solution; or a copy of a classmate's answer
the report takes for the solution's, when the reader sees both beside the same code).

A match between two students (or a student and the solution) whose answers come from different sources is
a false alarm: one with an independent answer counts against the target (none listed); a classmate's own
answer (the original of a copy) listed against the solution is counted apart, as it is not written to
differ from the solution.

A copy counts toward its kind's rate only when its original is long enough for the report to list at all
(similarity.MIN_TOKENS): shorter formulas are alike by nature, and the report says so.
"""

import copy
import importlib
import json
import pkgutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import SOLUTIONS_DIR
from heldout_copies import COPY_KINDS, SOLUTION


@dataclass
class Rates:
    listed: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    short: Counter = field(default_factory=Counter)  # copies of an original too short to list, per kind
    misses: list = field(default_factory=list)  # (kind, notebook, cell, pair index)
    false_alarms: list = field(default_factory=list)  # an independent answer listed: (notebook, cell, student, other)
    independent: int = 0  # independent answers, which must not be listed
    classmates_listed: list = field(default_factory=list)  # a classmate's own answer listed against the solution
    classmates: int = 0  # classmates' own answers (the originals of copies), compared with the solution too

    def rate(self, kind):
        return self.listed[kind] / self.total[kind] if self.total[kind] else float("nan")


def notebooks():
    """{notebook: its pairs}, every module of heldout_copies."""
    import heldout_copies

    out = {}
    for info in pkgutil.iter_modules(heldout_copies.__path__):
        module = importlib.import_module(f"heldout_copies.{info.name}")
        if hasattr(module, "PAIRS"):
            out[module.NOTEBOOK] = module.PAIRS
    return out


def measure():
    """Rates over every held-out pair, each notebook's pairs as one class through class_report.build."""
    out = Rates()
    with tempfile.TemporaryDirectory(prefix="ffn-heldout-") as tmp:
        for notebook, pairs in sorted(notebooks().items()):
            _measure_notebook(Path(tmp) / notebook, notebook, pairs, out)
    return out


def _measure_notebook(tmp, notebook, pairs, out):
    from report_fixtures import answer_cells, graded_cells, student_record, write_class, write_notebooks

    from autograder.report import class_report, similarity
    from autograder.report.results import course_layout

    solutions = answer_cells(SOLUTIONS_DIR / f"{notebook}.ipynb")
    answers, source = {}, {}
    for i, p in enumerate(pairs):
        first = solutions[p.cell] if p.first is SOLUTION else p.first
        answers[f"a{i:03d}"] = {p.cell: first}
        answers[f"b{i:03d}"] = {p.cell: p.second}
        source[f"a{i:03d}"] = "solution" if p.first is SOLUTION else first
        source[f"b{i:03d}"] = source[f"a{i:03d}"] if p.kind in COPY_KINDS else f"own {i}"
    folder = write_notebooks(tmp / "autograded", notebook, answers)
    for i, p in enumerate(pairs):
        if p.free:
            _insert_free_cell(folder / f"b{i:03d}" / notebook / f"{notebook}.ipynb", p.cell, p.free)
    layout = course_layout(notebook)
    results = write_class(tmp / "results", [student_record(s, notebook, graded_cells(layout, {})) for s in answers])
    look = class_report.build([notebook], results, notebooks=folder).looks[0]
    assert look.compared == len(answers), look.notes
    links = set()
    for m in look.matches:
        links |= {(m.grade_id, m.student, m.other), (m.grade_id, m.other, m.student)}
        if source[m.student] != source.get(m.other, "solution"):
            alarm = (notebook, m.grade_id, m.student, m.other or "solution")
            own = any(source.get(s, "").startswith("own ") for s in (m.student, m.other))
            (out.false_alarms if own else out.classmates_listed).append(alarm)
    for i, p in enumerate(pairs):
        a, b = f"a{i:03d}", f"b{i:03d}"
        out.classmates += p.first is not SOLUTION
        if p.kind not in COPY_KINDS:
            out.independent += 1
            continue
        if not similarity.answer(answers[a][p.cell]).reportable:
            out.short[p.kind] += 1
            continue
        out.total[p.kind] += 1
        if (p.cell, a, b) in links or ((p.cell, b, None) in links and (p.cell, a, None) in links):
            out.listed[p.kind] += 1
        else:
            out.misses.append((p.kind, notebook, p.cell, i))


def _insert_free_cell(path, grade_id, code):
    """Put a free code cell holding `code` just before the answer cell `grade_id` of the notebook at `path`."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    at = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    free = {"cell_type": "code", "metadata": {}, "source": code, "outputs": [], "execution_count": None}
    nb["cells"].insert(at, copy.deepcopy(free))
    path.write_text(json.dumps(nb), encoding="utf-8")


if __name__ == "__main__":
    r = measure()
    for kind in COPY_KINDS:
        print(f"{kind:12} {r.listed[kind]:3}/{r.total[kind]:3} listed ({r.short[kind]} too short to list)")
    print(f"independent answers listed: {len(r.false_alarms)} of {r.independent}", r.false_alarms)
    print(f"classmates' own answers (and copies) listed against the solution: {len(r.classmates_listed)} "
          f"(of {r.classmates} pairs from a classmate)", r.classmates_listed)
    for miss in r.misses:
        print("missed", *miss)
