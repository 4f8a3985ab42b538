"""A cell's role is decided in one place, autograder.cells, by nbgrader's own predicates (nbgrader/utils.py)."""

import ast
import itertools
from pathlib import Path

import nbformat
import pytest
from nbgrader import utils as nbgrader_utils

from autograder import cells

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("grade", "solution", "locked")
# Each flag absent, False or True, with and without a grade_id, and a cell with no nbgrader metadata at all.
COMBINATIONS = [None] + [{**{f: v for f, v in zip(FLAGS, values, strict=True) if v is not None}, **extra}
                         for values in itertools.product((None, False, True), repeat=3)
                         for extra in ({}, {"grade_id": "f"})]


@pytest.mark.parametrize("meta", COMBINATIONS, ids=str)
def test_the_predicates_are_nbgraders_own(meta):
    cell = nbformat.v4.new_code_cell("pass", metadata={} if meta is None else {"nbgrader": meta})
    for name in ("is_grade", "is_solution", "is_locked"):
        assert getattr(cells, name)(cell) == bool(getattr(nbgrader_utils, name)(cell)), name
        assert getattr(cells, name)(dict(cell)) == getattr(cells, name)(cell), f"{name} on a plain dict"


@pytest.mark.parametrize("meta", COMBINATIONS, ids=str)
def test_roles_follow_the_predicates(meta):
    cell = nbformat.v4.new_code_cell("pass", metadata={} if meta is None else {"nbgrader": meta})
    solution, grade, locked = (bool(getattr(nbgrader_utils, n)(cell)) for n in ("is_solution", "is_grade", "is_locked"))
    expected = ("answer" if solution else "test" if grade else
                "instructor" if locked and (meta or {}).get("grade_id") else "learner")
    assert cells.role_of(cell) == expected
    assert cells.role_of_metadata(meta or {}) == expected


# Modules that read the flags for another purpose than a cell's role: integrity compares what a submission's cells
# claim with the release's (any claim is a finding), sanitise keeps only the flags nbgrader knows, course writes them.
READS_FLAGS_FOR_ANOTHER_REASON = {"autograder/cells.py", "autograder/grading/scoring/integrity.py",
                                  "autograder/sanitise.py", "autograder/grading/course.py"}


def _flag_reads(tree):
    """Lines where code reads nbgrader's "grade", "solution" or "locked" key of a cell's metadata: meta.get("grade"),
    cell.metadata["nbgrader"]["solution"] (a receiver that names metadata; a CSV row's "grade" is another thing)."""
    for node in ast.walk(tree):
        key = receiver = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant):
            key, receiver = node.args[0].value, node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.ctx, ast.Load):
            key, receiver = node.slice.value, node.value
        text = "" if receiver is None else ast.unparse(receiver)
        if key in FLAGS and (text == "m" or "meta" in text or "nbgrader" in text):
            yield node.lineno


def test_no_other_module_reads_a_cells_role_from_its_flags():
    """The grader, check, the report, the feedback page, the build and the tests' helpers ask cells.role_of."""
    found = []
    for path in [*sorted((ROOT / "autograder").rglob("*.py")), ROOT / "tests" / "nbtools.py"]:
        rel = path.relative_to(ROOT).as_posix()
        if rel in READS_FLAGS_FOR_ANOTHER_REASON or rel.startswith("autograder/course/"):
            continue
        found += [f"{rel}:{line}" for line in _flag_reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def _answers(aid):
    return [m["grade_id"] for m in cells.source_metadata(ROOT / "autograder" / "course" / "source" / aid / f"{aid}.py")
            if cells.role_of_metadata(m) == "answer"]


def test_a_notebooks_answers_name_their_assignment_reading_only_its_source_when_it_is_the_one_expected(monkeypatch):
    """`check` names the assignment it expects: its own notebook costs one source read, not fourteen."""
    answers = _answers("03_residual_layernorm")
    assert cells.assignment_of_answers(answers) == "03_residual_layernorm"
    assert cells.assignment_of_answers(answers, expected="02_forward_pass") == "03_residual_layernorm"
    read = []
    real = cells.source_metadata
    monkeypatch.setattr(cells, "source_metadata", lambda path: read.append(Path(path).stem) or real(path))
    assert cells.assignment_of_answers(answers, expected="03_residual_layernorm") == "03_residual_layernorm"
    assert read == ["03_residual_layernorm"]


def test_answers_two_assignments_share_go_to_the_one_expected():
    """09 and 13 both have numerical_gradient and FeedForwardNetwork: a notebook of those alone is either's."""
    shared = sorted(set(_answers("09_ffn_module")) & set(_answers("13_training")))
    assert shared == ["FeedForwardNetwork", "numerical_gradient"]
    assert cells.assignment_of_answers(shared) == "09_ffn_module"  # the first in course order, with nothing expected
    assert cells.assignment_of_answers(shared, expected="13_training") == "13_training"
