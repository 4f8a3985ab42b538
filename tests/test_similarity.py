"""Answers to look at (autograder/report/similarity.py): copies are found, independent answers are not.

The copies are the published solutions and the alternative answers of tests/submissions/, renamed and laid
out anew by report_fixtures.renamed; the independent answers are those alternatives themselves.
"""

import ast
import csv
import importlib
import os

import pytest
from report_fixtures import (
    answer_cells,
    graded_cells,
    renamed,
    student_record,
    write_class,
    write_notebooks,
)

from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR, assignments
from autograder.report import class_report as report
from autograder.report import similarity
from autograder.report.results import course_layout

GRADED = [a for a in assignments() if importlib.util.find_spec(f"submissions.{a}") is not None]

# Alternative answers that are the published solution with one line changed: not independent of it.
FROM_THE_SOLUTION = {
    ("03_residual_layernorm", "layer_norm", "vectorised"): "the solution with x.var for the variance",
    ("04_activations", "gelu_tanh", "erf-exp"): "the solution's formula with the tanh argument named",
    ("05_position_wise", "ffn_per_token", "ndindex-each-token"): "the solution's loop with h inlined",
    ("06_parameter_budget", "param_bytes", "formulas"): "the solution with another error message",
    ("11_mixture_of_experts", "router_topk", "renormalised-dense-formula"):
        "the solution's selection (four of its six lines) with the gates renormalised from the full softmax",
    ("11_mixture_of_experts", "moe_param_count", "renormalised-dense-formula"): "the solution with one name changed",
}


def _body(code):
    """The code's definitions without docstrings, as an AST dump: equal for the same code laid out otherwise."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and isinstance(node.body[0], ast.Expr) and \
                isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)], []))


def _cells(aid):
    return answer_cells(SOLUTIONS_DIR / f"{aid}.ipynb"), answer_cells(NOTEBOOKS_DIR / f"{aid}.ipynb")


def _independent(aid, grade_id, solution):
    """{variant: code} of the alternatives to one cell that are not the solution's code, one per distinct code."""
    out, seen = {}, {_body(solution)}
    for name, cells in sorted(importlib.import_module(f"submissions.{aid}").CORRECT.items()):
        code = cells.get(grade_id)
        if code is None or (aid, grade_id, name) in FROM_THE_SOLUTION or _body(code) in seen:
            continue
        seen.add(_body(code))
        out[name] = code
    return out


@pytest.mark.parametrize("aid", GRADED)
def test_a_renamed_reformatted_copy_of_the_solution_is_reported(aid):
    solutions, starters = _cells(aid)
    reportable = 0
    for grade_id, solution in solutions.items():
        copy = renamed(solution, "x9")
        assert _body(copy) != _body(solution)  # really renamed
        matches, notes = similarity.compare_cell(grade_id, {"copier": copy}, solution, starters[grade_id])
        if not similarity.answer(solution).reportable:
            assert matches == []  # too short to say anything
            continue
        reportable += 1
        assert [(m.student, m.other) for m in matches] == [("copier", None)] and not notes, grade_id
        assert matches[0].score >= similarity.REPORT_AT and matches[0].code == copy
    assert reportable >= 1, f"{aid} has no answer cell long enough to compare"


@pytest.mark.parametrize("aid", GRADED)
def test_a_classmates_renamed_copy_is_reported_and_independent_answers_are_not(aid):
    solutions, starters = _cells(aid)
    pairs = 0
    for grade_id, solution in solutions.items():
        independent = _independent(aid, grade_id, solution)
        answers = dict(independent)
        matches, _ = similarity.compare_cell(grade_id, answers, solution, starters[grade_id])
        assert matches == [], [(m.student, m.other or "solution", round(m.score, 2)) for m in matches]
        for name, code in independent.items():
            if not similarity.answer(code).reportable:
                continue
            answers = dict(independent) | {"copier": renamed(code, "c4")}
            matches, _ = similarity.compare_cell(grade_id, answers, solution, starters[grade_id])
            assert [(m.student, m.other) for m in matches] == [(name, "copier")], (grade_id, name)
            pairs += 1
    assert pairs >= 1, f"{aid} has no independent alternative answer long enough to compare"


def test_the_def_line_docstring_comments_and_imports_do_not_count():
    a = similarity.normalise("import numpy as np\ndef f(a, b):\n    '''doc'''\n    # why\n    return a + b\n")[0]
    b = similarity.normalise("def g(x,\n      y=3):\n    return x \\\n        + y  # sum\n")[0]
    assert a == b == ("return", "N", "+", "N", ";")
    assert similarity.normalise("return np.einsum('ij', x)")[0] != similarity.normalise("return np.dot(x, y)")[0]


def test_short_answers_and_the_starter_are_never_reported():
    solutions, starters = _cells("01_relu_sign_cases")
    same = {f"s{i}": "def relu(z):\n    return np.maximum(z, 0)\n" for i in range(3)}
    same["starter-1"] = same["starter-2"] = starters["relu"]
    matches, _ = similarity.compare_cell("relu", same, solutions["relu"], starters["relu"])
    assert matches == []
    assert len(similarity.normalise(same["s0"])[0]) < similarity.MIN_TOKENS


@pytest.mark.parametrize("code", [
    "def f(x):\n    y = x + 1\n    return '''never closed\n",  # a string that never ends
    "def f(x):\n        y = x + 1\n    return y\n",  # a dedent to no level
    "def f(x):\n    return (x + 1,\n",  # a bracket that never closes
])
def test_malformed_code_is_compared_as_words_never_a_crash(code):
    a = similarity.answer(code)
    assert a.tokens[:3] == ("def", "N", "(") and "compared as plain words" in a.note
    matches, notes = similarity.compare_cell("f", {"a": code * 5, "b": code * 5}, "", "")
    assert [(m.student, m.other) for m in matches] == [("a", "b")] and len(notes) == 2


def test_stray_characters_are_kept_not_a_crash():
    a = similarity.answer("def f(x):\n\treturn x\n        return 2\x00$?\n")
    assert {"return", "\x00", "$", "?"} <= set(a.tokens)


def test_the_code_is_never_run_and_long_cells_are_cut(tmp_path):
    sentinel = tmp_path / "ran"
    code = f"open({str(sentinel)!r}, 'w').write('x')\n__import__('os').system('touch {sentinel}')\n"
    similarity.compare_cell("f", {"a": code * 30, "b": code * 30}, code, "")
    assert not sentinel.exists()
    huge = similarity.answer("y = x + 1\n" * 100_000)
    assert len(huge.tokens) == similarity.MAX_TOKENS and "first 60,000 characters" in huge.note


# ---------------------------------------------------------------- in the class report

AID = "02_forward_pass"


def _class_with_copies(tmp_path):
    """Results and notebooks of 02_forward_pass: a solution copier, two classmates sharing an answer, others."""
    layout = course_layout(AID)
    solutions, _ = _cells(AID)
    loop = importlib.import_module(f"submissions.{AID}").CORRECT["loop"]
    einsum = importlib.import_module(f"submissions.{AID}").CORRECT["einsum"]
    vectorised = importlib.import_module(f"submissions.{AID}").CORRECT["vectorised"]
    shared = loop["dead_fraction"].replace("    zeros = total = 0\n",
                                           "    zeros = total = 0  # </pre><script>window.pwned=1</script>\n")
    answers = {
        "copier-1": {"ffn_forward": renamed(solutions["ffn_forward"], "q")},
        "pair-1": {"dead_fraction": shared},
        "pair-2": {"dead_fraction": renamed(shared, "z")},
        "own-1": vectorised, "own-2": einsum,
    }
    records = [student_record(s, AID, graded_cells(layout, {}))
               for s in [*answers, "linked-1", "filelink-1", "nobook-1"]]
    results = write_class(tmp_path / "results", records)
    notebooks = write_notebooks(tmp_path / "autograded", AID, answers)
    (notebooks / "linked-1").mkdir()  # a link to a classmate's folder is never followed
    os.symlink(notebooks / "own-1" / AID, notebooks / "linked-1" / AID)
    (notebooks / "filelink-1" / AID).mkdir(parents=True)
    os.symlink(notebooks / "own-1" / AID / f"{AID}.ipynb", notebooks / "filelink-1" / AID / f"{AID}.ipynb")
    return results, notebooks


def test_the_report_lists_the_copies_side_by_side_escaped_and_in_the_csv(tmp_path):
    results, notebooks = _class_with_copies(tmp_path)
    out, table = tmp_path / "report.html", tmp_path / "report.csv"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--csv", str(table),
                        "--notebooks", str(notebooks)]) == 0
    look = report.build([AID], results, notebooks=notebooks).looks[0]
    assert [(m.grade_id, m.student, m.other) for m in look.matches] == [
        ("ffn_forward", "copier-1", None), ("dead_fraction", "pair-1", "pair-2")]
    assert look.compared == 5, look.notes
    not_compared = f"students' notebooks of {AID} were not compared"
    assert sorted(look.notes) == [f"1 of 8 {not_compared}: a link, not a file",
                                  f"2 of 8 {not_compared}: no notebook folder (or a link)"]
    page = out.read_text(encoding="utf-8")
    section = page[page.index("<section id='look'>"):]
    assert "<script>" not in page and "&lt;/pre&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;" in section
    assert "02_forward_pass dead_fraction: answers to look at" in section and "the published solution" in section
    assert section.count("<div class='side'>") == 2
    assert "similarity" not in table.read_text(encoding="utf-8").splitlines()[0]  # one table per file
    with report.answers_path(table).open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["exercise"], r["student"], r["compared_with"]) for r in rows] == [
        ("ffn_forward", "copier-1", "the published solution"), ("dead_fraction", "pair-1", "pair-2")]
    assert all(float(r["similarity"]) >= similarity.REPORT_AT for r in rows)


def test_anonymised_the_section_and_the_csv_show_pseudonyms(tmp_path):
    results, notebooks = _class_with_copies(tmp_path)
    out, table = tmp_path / "report.html", tmp_path / "report.csv"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--csv", str(table), "--notebooks",
                        str(notebooks), "--anonymise", "--salt", "s3cret"]) == 0
    names = {s: report.pseudonym(s, "s3cret") for s in ("copier-1", "pair-1", "pair-2")}
    page, text = out.read_text(encoding="utf-8"), report.answers_path(table).read_text(encoding="utf-8")
    for student, name in names.items():
        assert student not in page and student not in text and name in page and name in text


def test_without_notebooks_the_section_says_where_it_looked(tmp_path):
    results, _ = _class_with_copies(tmp_path)
    page = report.build([AID], results, notebooks=tmp_path / "nowhere").html
    assert "No answer was compared: no folder" in page and "give --notebooks" in page
