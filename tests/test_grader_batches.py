"""Every graded assignment through `python -m autograder grade`: the worked solution earns full marks on
every test cell, the untouched learner notebook earns 0 on every one, and neither raises a flag.

One batch per assignment, with both students (and, for 02_forward_pass, a correct answer
that warns on stderr: a warning must not cost points). The results must also be in
the course gradebook, where formgrader and `nbgrader export` read them.
"""

import nbtools
import pytest
from adversarial import grading

from autograder import assignments
from autograder.grading.gradebook import cell_scores

GRADED = [aid for aid in assignments() if nbtools.test_ids(nbtools.source(aid))]
NOISY = ("import warnings\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
         "    warnings.warn('a warning from correct code', RuntimeWarning)\n"
         "    z = np.asarray(x, dtype=float) @ W1 + b1\n"
         "    return np.maximum(z, 0.0) @ W2 + b2\n")


def _batch(aid, tmp_path):
    course_root = grading.make_course(tmp_path / "course", aid)
    students = {"solution": nbtools.solution(aid), "learner": nbtools.learner(aid)}
    if aid == "02_forward_pass":
        students["warns"] = nbtools.with_answers(nbtools.completed_learner(aid), {"ffn_forward": NOISY})
    grading.write_submissions(tmp_path / "submitted", aid, students)
    timeout = 120.0 if aid == nbtools.CAPSTONE else 60.0
    return grading.run_batch(aid, tmp_path / "submitted", tmp_path / "results", course_root, cell_timeout=timeout,
                             memory="2G"), course_root


@pytest.mark.grading
@pytest.mark.parametrize("aid", [pytest.param(a, marks=pytest.mark.xdist_group(f"grader-batch-{a}")) for a in GRADED])
def test_solution_full_marks_learner_zero(aid, tmp_path):
    results, course_root = _batch(aid, tmp_path)
    tests = nbtools.test_ids(nbtools.source(aid))
    solution, learner = results["solution"], results["learner"]
    assert [c["grade_id"] for c in solution["cells"]] == tests
    for cell in solution["cells"]:
        assert cell["points"] == cell["max_points"] > 0, (cell["grade_id"], cell["message"][:2000])
    for cell in learner["cells"]:
        assert cell["points"] == 0, cell["grade_id"]
        assert cell["status"] == "failed", (cell["grade_id"], cell["status"])
    for result in (solution, learner):
        assert result["status"] == "graded" and result["flags"] == [], (result["student"], result["flags"])
    if "warns" in results:
        warns = results["warns"]
        assert warns["score"] == warns["max_score"] and warns["flags"] == [], warns["cells"]
    rows = {}
    for row in cell_scores(course_root / "gradebook.db"):
        rows[row.student] = rows.get(row.student, 0) + (row.auto_score or 0)  # None: a manually graded cell
    assert rows["solution"] == solution["max_score"] and rows["learner"] == 0
