"""Gate 2, Out (issue 23): nothing learner-made reaches a person live, and no diagnosis is the learner's text.

The unit tests pin each part of the policy (autograder/sanitise.py, the checks' diagnosis as data, the
judge's verdict); the batch grades tests/adversarial/out_gate's attacks with an honest twin through
`python -m autograder grade` and reads what an instructor gets: the JSON, the class report and its
CSV, grades.csv and the course's autograded/ folder.
"""

import csv
import io
import json

import nbformat
import nbtools
import numpy as np
import pytest
from adversarial import ASSIGNMENT, grading, out_gate

from autograder import sanitise
from autograder.grading import course, grade
from autograder.grading.gate_beside import judge, rerun
from autograder.grading.scoring import gradebook, results
from autograder.report import class_report as report
from autograder.schema import CellResult, CellStatus, Diagnosis, Flag, NotebookResult, Run, StudentResult
from ffn_helpers import checks, ffn_forward, mistakes

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _no_formula(text):
    """Every cell of CSV `text` (the header included), parsed: none starts like a formula."""
    cells = [value for row in csv.reader(io.StringIO(text)) for value in row]
    assert cells
    bad = [value for value in cells if value.startswith(FORMULA_STARTS)]
    assert not bad, bad


# ---------------------------------------------------------------- diagnoses are data, not text


def _ffn_args():
    rng = np.random.default_rng(0)
    return rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(5, 4)), \
        rng.normal(size=4)


def test_a_check_attaches_the_mistakes_it_recognises_as_data():
    args = _ffn_args()
    x, W1, b1, W2, b2 = args
    with pytest.raises(AssertionError) as failed:
        checks.check(lambda *a: np.maximum(x @ W1, 0) @ W2 + b2, args, ffn_forward(*args),
                     mistakes=mistakes.for_exercise("ffn_forward"), name="ffn_forward")
    assert checks.named_mistakes(failed.value) == ("missing_b1",)
    explanation = mistakes.by_key("missing_b1")[0].explanation
    assert str(failed.value).endswith(f"\nLikely mistake (missing_b1): {explanation}")  # the text is as before
    assert type(failed.value) is AssertionError


def test_text_that_reads_like_a_diagnosis_names_no_mistake():
    fake = AssertionError("wrong\nLikely mistake (missing_b1): your output equals the FFN without b1.")
    assert checks.named_mistakes(fake) == ()
    with pytest.raises(AssertionError) as failed:  # a learner's exception, through the checks' call
        checks.check(lambda *a: (_ for _ in ()).throw(fake), _ffn_args(), np.zeros((3, 4)),
                     mistakes=mistakes.for_exercise("ffn_forward"), name="ffn_forward")
    assert "Likely mistake (missing_b1)" in str(failed.value) and checks.named_mistakes(failed.value) == ()
    odd = ValueError("x")
    odd.mistake_keys = ("missing_b1",)  # only the checks' AssertionError carries keys
    assert checks.named_mistakes(odd) == ()


def test_a_reworded_failure_keeps_its_keys():
    known = mistakes.for_exercise("ffn_forward")[0]
    first = checks.failure("bad", [known])
    again = checks.failure(f"Case: one\n{first}", keeps=first)
    assert checks.named_mistakes(again) == checks.named_mistakes(first) == (known.key,)
    assert str(again) == f"Case: one\n{first}"


def _verdict(keys):
    return {"tests": {"test_ffn_forward": {"points": 0.0, "message": "AssertionError: no", "mistakes": keys}}}


def test_the_judges_verdict_takes_only_keys_of_the_exercises_catalogue():
    tests = {"test_ffn_forward": ("ffn_forward", 2.0)}
    ok = judge.verdict(_verdict(["missing_b1", "missing_b1"]), tests, {"ffn_forward"})
    assert ok.tests["test_ffn_forward"].mistakes == ("missing_b1",)
    for bad in (["made_up"], ["-2-3"], [["missing_b1"]], "missing_b1", [1], ["dead_all"]):
        with pytest.raises(ValueError, match="catalogue"):
            judge.verdict(_verdict(bad), tests, {"ffn_forward"})


def test_a_cell_is_diagnosed_from_its_keys_with_the_catalogues_words():
    assert results.diagnoses("ffn_forward", ("missing_b1", "made_up")) == (
        Diagnosis("missing_b1", mistakes.by_key("missing_b1")[0].explanation),)
    assert results.diagnoses(None, ("missing_b1",)) == ()


def _clean(message, keys):
    return rerun.CleanRunResult(tests={"test_ffn_forward": rerun.TestResult("test_ffn_forward", "ffn_forward", 2.0,
                                                                            0.0, message, mistakes=keys)})


def test_combine_reads_no_diagnosis_from_a_message(released_model):
    fake = "AssertionError: ffn_forward raised ValueError: x\nLikely mistake (missing_b1): made up"
    out, _ = results.combine(released_model, None, {}, _clean(fake, ()), [])
    cell = next(c for c in out.cells if c.grade_id == "test_ffn_forward")
    assert cell.message == fake and cell.diagnosis == ()
    out, _ = results.combine(released_model, None, {}, _clean("AssertionError: no", ("missing_b1",)), [])
    cell = next(c for c in out.cells if c.grade_id == "test_ffn_forward")
    assert cell.mistakes == ("missing_b1",) and cell.explanations[0][1] == mistakes.by_key("missing_b1")[0].explanation


@pytest.fixture(scope="module")
def released_model():
    from test_grader_units import _model

    return _model(nbtools.source(ASSIGNMENT))


# ---------------------------------------------------------------- plain text and CSV cells


def test_json_records_hold_plain_text_only():
    message = "\x1b[31mred\x1b[0m \x1b]8;;javascript:x\x07link\x1b]8;;\x07 \ud800 \u202eevil\x00"
    cell = CellResult("t", "ffn_forward", 0.0, 1.0, CellStatus.FAILED, message, (), Run(0.0, message), Run(0.0))
    record = StudentResult("s", ASSIGNMENT, "graded", 0.0, 1.0,
                           [NotebookResult(ASSIGNMENT, "graded", 0.0, 1.0, [cell], [Flag("review", None, message)])])
    text = json.dumps(record.to_dict(), ensure_ascii=False)
    text.encode("utf-8")  # no lone surrogate: the file can be written
    for bad in ("\x1b", "\u202e", "\x00", "\ud800", "\\u001b", "\\u0000"):
        assert bad not in text, bad
    assert "red link" in text and "evil" in text


def test_report_csv_neutralises_formulas(tmp_path):
    row = report.ExerciseRow(FORMULA := '=HYPERLINK("http://evil.example/","x")', 1.0)
    row.mistakes.append(report.MistakeRow("-2-3", 1, 1, "@SUM(1+1)", False))
    rep = report.AssignmentReport("+cmd", [], 1.0, [], [row], True)
    report.write_csv([rep], tmp_path / "report.csv")
    text = (tmp_path / "report.csv").read_text(encoding="utf-8")
    _no_formula(text)
    assert f"'{FORMULA}" in next(csv.reader(io.StringIO(text.splitlines()[1])))


def test_grades_csv_neutralises_formulas(tmp_path):
    root = grading.make_course(tmp_path / "course", ASSIGNMENT)
    config = course.load_config(root)
    with gradebook.open_gradebook(config) as gb:
        gb.update_or_create_student("s1", last_name='=HYPERLINK("http://evil.example/","x")', first_name="+1",
                                    email="@evil")
    grade._write_class_csv(config, ASSIGNMENT, tmp_path)  # what `grade` writes as grades.csv
    text = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    _no_formula(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1 and rows[0]["student_id"] == "s1"
    assert rows[0]["first_name"] == "'+1" and rows[0]["email"] == "'@evil"
    assert rows[0]["last_name"] == "'=HYPERLINK(\"http://evil.example/\",\"x\")"


# ---------------------------------------------------------------- the notebook formgrader shows


def test_the_autograded_notebook_keeps_text_and_pngs_only():
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": "<script>"}, "title": "<script>"})
    code = nbformat.v4.new_code_cell("print(1)", metadata={"tags": ['"><img>'], "nbgrader": {
        "grade_id": 'x"><img src=x>', "grade": True}})
    code.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<img src=x onerror=alert(1)>",
                                                                 "text/plain": "shown"},
                                           metadata={"image/png": {"width": '1" onerror="alert(1)'}})]
    graded = nbformat.v4.new_code_cell("ok()", metadata={"nbgrader": {"grade_id": "test_ffn_forward", "grade": True,
                                                                      "points": 2, "locked": True, "extra": "<x>"}})
    raw = nbformat.v4.new_raw_cell("<img src=x onerror=alert(1)>", metadata={"format": "text/html"})
    course_text = "The course's own $x W_1 + b_1$ <b>prose</b>"
    nb.cells = [code, graded, raw, nbformat.v4.new_markdown_cell("<img src=x onerror=alert(1)>"),
                nbformat.v4.new_markdown_cell(course_text)]
    out = sanitise.notebook(nb, {course_text})
    nbformat.validate(out)
    assert dict(out.metadata) == {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                 "language": "python"}, "language_info": {"name": "python"}}
    assert out.cells[0].metadata == {} and out.cells[0].outputs[0].data == {"text/plain": "shown"}
    assert out.cells[0].outputs[0].metadata == {}
    assert out.cells[1].metadata == {"nbgrader": {"grade_id": "test_ffn_forward", "grade": True, "points": 2,
                                                  "locked": True}}
    assert out.cells[2].cell_type == "markdown" and "<img" not in out.cells[2].source
    assert "onerror" not in out.cells[3].source.replace("onerror=alert(1)&gt;", "")
    assert "<img" not in out.cells[3].source and out.cells[4].source == course_text
    assert nb.cells[0].outputs[0].data["text/html"]  # the original is left as it was
    # nbgrader's generate_feedback reads this notebook and sanitises it again (feedback.HideHiddenTests): a
    # learner's markdown stays the same block, not its HTML shown as text.
    assert sanitise.notebook(out).cells[3].source == out.cells[3].source.replace(course_text, "")
    assert sanitise.notebook(out).cells[3].source.startswith('<div class="learner-markdown"><p>')


# ---------------------------------------------------------------- the batch


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    course_root, out, graded = out_gate.graded(tmp_path_factory.mktemp("out-gate"))
    return {"course": course_root, "out": out, "graded": graded}


@pytest.mark.grading
@pytest.mark.sandbox
def test_fake_diagnoses_add_nothing_to_the_json(batch):
    fake, twin = batch["graded"]["fake-diagnosis"], batch["graded"][out_gate.HONEST_TWIN]
    assert [c["diagnosis"] for c in fake["cells"]] == [[] for _ in fake["cells"]]
    assert any("Likely mistake (missing_b1)" in c["message"] for c in fake["cells"])  # the text is shown, as text
    saved = json.loads((batch["out"] / "fake-diagnosis.json").read_text(encoding="utf-8"))
    assert all(c["diagnosis"] == [] for c in saved["cells"])
    honest = {d["key"] for c in twin["cells"] if c["exercise"] == "ffn_forward" for d in c["diagnosis"]}
    assert honest == {"missing_b1"}


@pytest.mark.grading
@pytest.mark.sandbox
def test_fake_diagnoses_add_nothing_to_the_class_report(batch, tmp_path):
    csv_path = tmp_path / "report.csv"
    assert report.main([ASSIGNMENT, "--results", str(batch["out"]), "--out", str(tmp_path / "report.html"),
                        "--csv", str(csv_path)]) == 0
    built = report.build([ASSIGNMENT], batch["out"], notebooks=tmp_path / "none")
    named = {(e.exercise, m.key): m.students for e in built.reports[0].exercises for m in e.mistakes}
    assert named == {("ffn_forward", "missing_b1"): 1}, named  # the honest twin's, and nobody else's
    text = csv_path.read_text(encoding="utf-8")
    _no_formula(text)
    assert "made_up" not in text and "-2-3" not in text and "HYPERLINK" not in text
    assert "made_up" not in (tmp_path / "report.html").read_text(encoding="utf-8")


@pytest.mark.grading
@pytest.mark.sandbox
def test_grades_csv_of_the_batch_has_no_formula(batch):
    _no_formula((batch["out"] / "grades.csv").read_text(encoding="utf-8"))


@pytest.mark.grading
@pytest.mark.sandbox
def test_autograded_holds_only_the_sanitised_notebook(batch):
    folder = batch["course"] / "autograded" / "markup" / ASSIGNMENT
    assert sorted(p.name for p in folder.iterdir()) in ([f"{ASSIGNMENT}.ipynb"],
                                                       [f"{ASSIGNMENT}.ipynb", "timestamp.txt"])
    nb = nbformat.read(folder / f"{ASSIGNMENT}.ipynb", as_version=4)
    kinds = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})}
    assert kinds <= {"text/plain", "image/png"}, kinds
    assert "widgets" not in nb.metadata and "title" not in nb.metadata
    assert all("tags" not in c.metadata and "attachments" not in c for c in nb.cells)
    assert not [c for c in nb.cells if c.cell_type == "raw"]
    assert any("pwned" in o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert not [c.source for c in nb.cells if c.cell_type == "markdown" and "<img src=x" in c.source]


# ---------------------------------------------------------------- every catalogued wrong answer, in process


def _keys_raised(aid, wrong):
    """The solution notebook run in this process with `wrong`'s answer: test cell -> keys its failure carried."""
    loses = (wrong.loses,) if isinstance(wrong.loses, str) else tuple(wrong.loses)
    raised = nbtools.run_in_process(aid, {wrong.cell: wrong.source})
    return {gid: checks.named_mistakes(exc) for gid, exc in raised.items() if gid in loses}


# The notebooks whose own test helpers name mistakes, and 02, where checks.check alone does.
@pytest.mark.parametrize("aid", ["01_relu_sign_cases", "02_forward_pass", "05_position_wise", "06_parameter_budget",
                                 "07_collapse_to_linear", "08_limiting_behaviour", "11_mixture_of_experts",
                                 "12_low_precision"])
def test_every_catalogued_wrong_answer_gets_its_key_as_data(aid):
    """The notebooks' own helpers (01's check_labels, 06's check_int...) attach the keys, as checks.check does."""
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    wrongs = [w for w in importlib.import_module(f"submissions.{aid}").WRONG if getattr(w, "diagnosis", None)]
    assert wrongs
    for wrong in wrongs:
        found = _keys_raised(aid, wrong)
        assert wrong.diagnosis in {k for keys in found.values() for k in keys}, (aid, wrong.name, found)
