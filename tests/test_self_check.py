"""`python -m autograder check`, as a learner runs it on their own notebook: what it prints and its exit status.

0 full marks, 1 points lost, 2 bad input (each with a message saying what it expected and what it
found), 3 run outside the course's environment. Without a sandbox it says so in a line and runs.
"""

import json
import subprocess
import sys

import nbformat
import nbtools
import pytest

from autograder import REPO_ROOT
from autograder import __main__ as cli
from autograder.grading import check
from autograder.grading.gate_in import sandbox

ASSIGNMENT = "02_forward_pass"


def _check(*args, python=(sys.executable,)):
    return subprocess.run([*python, "-m", "autograder", "check", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=nbtools.nbgrader_env(), timeout=600)


def _learner_copy(path):
    path.write_text(nbformat.writes(nbtools.learner(ASSIGNMENT)), encoding="utf-8")
    return path


# ---------------------------------------------------------------- bad input: exit 2, and what was expected


def test_a_missing_path_says_it_does_not_exist(tmp_path):
    run = _check(tmp_path / "02_forward_pass.ipynb")
    assert run.returncode == check.BAD_INPUT and run.stdout == ""
    assert "02_forward_pass.ipynb does not exist" in run.stderr and "file name should be" not in run.stderr


def test_a_folder_or_a_file_that_is_not_a_notebook(tmp_path):
    run = _check(tmp_path)
    assert run.returncode == check.BAD_INPUT and "is a folder" in run.stderr
    script = tmp_path / "02_forward_pass.py"
    script.write_text("x = 1\n")
    run = _check(script)
    assert run.returncode == check.BAD_INPUT
    assert "expected a Jupyter notebook (a .ipynb file), got '02_forward_pass.py'" in run.stderr


@pytest.mark.parametrize("text", ['{"cells": [', "{}", ""], ids=["cut short", "not a notebook", "empty"])
def test_a_malformed_notebook_is_bad_input_not_a_grade(tmp_path, text):
    path = tmp_path / "02_forward_pass.ipynb"
    path.write_text(text)
    run = _check(path)
    assert run.returncode == check.BAD_INPUT, run.stdout[-2000:]
    assert "is not a readable Jupyter notebook" in run.stderr


def test_a_name_it_cannot_map_says_what_it_expected_and_found(tmp_path):
    run = _check(_learner_copy(tmp_path / "homework.ipynb"))
    assert run.returncode == check.BAD_INPUT
    assert "cannot tell which assignment 'homework.ipynb' is" in run.stderr
    assert "02_forward_pass" in run.stderr and "--assignment" in run.stderr
    run = _check(tmp_path / "homework.ipynb", "--assignment", "99_nothing")
    assert run.returncode == check.BAD_INPUT and "got '99_nothing'" in run.stderr


@pytest.mark.parametrize("name", ["02_forward_pass.ipynb", "02_forward_pass-Copy1.ipynb",
                                  "02_forward_pass (1).ipynb", "02_forward_pass-mine.ipynb"])
def test_copies_jupyterlab_and_downloads_make_map_to_their_assignment(name):
    assert check.assignment_of(name) == ASSIGNMENT
    assert check.assignment_of("homework.ipynb", assignment=ASSIGNMENT) == ASSIGNMENT


def test_outside_the_environment_it_says_how_to_run_it(tmp_path):
    """A Python without the course's packages (here: site-packages switched off) gets one line, not a traceback."""
    run = _check(_learner_copy(tmp_path / "02_forward_pass.ipynb"), python=(sys.executable, "-S"))
    assert run.returncode == cli.NOT_INSTALLED
    assert "Traceback" not in run.stderr and "is not installed for this Python" in run.stderr
    assert "make setup" in run.stderr


# ---------------------------------------------------------------- graded: exit 0 or 1


def _command_00_shows():
    """The cell 00 tells learners to run, as an argv for `python -m autograder`."""
    text = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells)
    line = next(line.strip("# ") for line in text.splitlines() if "!python -m autograder check" in line)
    assert line.startswith("!python -m autograder check "), line
    return line.removeprefix("!python -m autograder ").split()


@pytest.mark.grading
def test_without_a_sandbox_it_says_so_in_a_line_and_grades_one_line_per_exercise(tmp_path, monkeypatch, capsys):
    """00's cell, in the learner's folder, on a machine without bubblewrap: the check runs anyway."""
    monkeypatch.setattr(sandbox, "probe", lambda limits=None: (False, "bwrap not found: install bubblewrap"))
    argv = _command_00_shows()
    assert argv == ["check", f"{ASSIGNMENT}.ipynb"]
    notebook = _learner_copy(tmp_path / argv[1])
    monkeypatch.chdir(tmp_path)
    status = cli.main(argv)
    out, err = capsys.readouterr()
    assert status == check.POINTS_LOST, out + err[-3000:]
    lines = out.splitlines()
    assert lines[0].startswith("No grading sandbox here (bwrap not found")
    assert "checking without it" in lines[0]
    assert lines[2] == f"{ASSIGNMENT}: 0 of 10 points ({notebook.name})"
    exercises = nbtools.answer_ids(nbtools.source(ASSIGNMENT))
    rows = lines[3:3 + len(exercises)]
    for exercise, row in zip(exercises, rows, strict=True):
        assert row.split()[0] == exercise and row.split()[1].startswith("0/"), row
        assert f"✘ {exercise} is not implemented yet" in row, row
    assert "SAWarning" not in out + err and "{" not in out  # no warnings, no JSON


@pytest.mark.grading
@pytest.mark.sandbox
def test_full_marks_exit_0_and_json_for_tools(tmp_path):
    run = _check(nbtools.SOLUTIONS_DIR / f"{ASSIGNMENT}.ipynb", "--json")
    assert run.returncode == check.FULL_MARKS, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["score"] == result["max_score"] == 10
    assert "SAWarning" not in run.stderr


@pytest.mark.grading
@pytest.mark.sandbox
def test_feedback_describes_each_figure_in_words_unless_asked_to_draw_it(tmp_path):
    """A graded run draws no figure: each one's place holds its text alternative, saying it was not drawn.
    --draw-figures keeps the images, with the same text alternatives as their alt attributes."""
    import html
    import re

    solution = nbtools.SOLUTIONS_DIR / f"{ASSIGNMENT}.ipynb"
    pages = {}
    for name, extra in (("text", ()), ("drawn", ("--draw-figures",))):
        run = _check(solution, "--feedback", tmp_path / f"{name}.html", *extra)
        assert run.returncode == check.FULL_MARKS, run.stderr[-3000:]
        pages[name] = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
    described = [html.unescape(a) for a in re.findall(r"\[Figure \(not drawn while grading\): (.*?)\]</pre>",
                                                         pages["text"], flags=re.S)]
    drawn = [html.unescape(a) for a in re.findall(r'<img alt="([^"]*)" src="data:image/png', pages["drawn"])]
    def words(texts):  # the page's alt attributes hold no quotes, and one space for a run of them
        return [re.sub(r"[\s'\"]+", " ", t) for t in texts]

    assert described and words(described) == words(drawn), (described, drawn)
    assert "<img" not in pages["text"] and "not drawn while grading" not in pages["drawn"]


@pytest.mark.parametrize("how", ["saved under 02's name", "named with --assignment"])
def test_a_notebook_of_another_assignment_is_one_line_naming_both(tmp_path, how):
    """03's notebook checked as 02: one line saying which assignment it holds and which was asked, exit 2."""
    solution = nbtools.SOLUTIONS_DIR / "03_residual_layernorm.ipynb"
    if how == "saved under 02's name":
        path = tmp_path / f"{ASSIGNMENT}.ipynb"
        path.write_bytes(solution.read_bytes())
        run = _check(path)
    else:
        run = _check(solution, "--assignment", ASSIGNMENT)
    assert run.returncode == check.BAD_INPUT, run.stdout[-2000:] + run.stderr[-2000:]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "holds the exercises of 03_residual_layernorm, not of 02_forward_pass" in lines[0], lines
    assert "--assignment 03_residual_layernorm" in lines[0] and run.stdout == ""


NO_B1 = ("import numpy as np\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
         "    return np.maximum(np.asarray(x, dtype=float) @ W1, 0.0) @ W2 + b2\n")


@pytest.mark.grading
def test_an_exercise_line_carries_the_first_likely_mistake_a_check_named(tmp_path):
    """b1 forgotten: ffn_forward's own line says so, in the catalogue's words; the right answers name none."""
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    learner = nbtools.with_answers(nbtools.completed_learner(ASSIGNMENT), {"ffn_forward": NO_B1})
    path.write_text(nbformat.writes(learner), encoding="utf-8")
    run = _check(path)
    assert run.returncode == check.POINTS_LOST, run.stderr[-3000:]
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.startswith("  ")}
    assert "✘ b1 is missing. " in rows["ffn_forward"], rows["ffn_forward"]  # the mistake first, then the fact
    assert rows["linear_torch"].endswith("✔") and rows["dead_fraction"].endswith("✔"), rows


# ---------------------------------------------------------------- an exercise's line (issue 52, points 2 and 3)

NOT_CLOSE = ("AssertionError: ffn_forward(...) is not close to the expected value: 3 of 3 entries differ (tolerance: "
             "|got - expected| <= 1e-12 + 1e-07·|expected|).\n  largest absolute difference 0.41 at index (1,), "
             "largest relative difference 0.8\n  expected: [0.453 -0.512 0.698]\n  got:      [0.043 -0.1 0.3]\n"
             "Likely mistake (missing_b1): b1 is missing: the hidden units' pre-activation is x W1 + b1 (add b1 "
             "before σ).")
MISSING_B1 = {"key": "missing_b1", "explanation": "b1 is missing: the hidden units' pre-activation is x W1 + b1 (add "
                                                  "b1 before σ)."}


def _row(exercise, message, diagnosis=(), hidden=False, points=0):
    cell = {"exercise": exercise, "grade_id": f"test_{exercise}" + ("_hidden" if hidden else ""), "points": points,
            "max_points": 2, "status": "failed", "message": message, "diagnosis": list(diagnosis)}
    result = {"assignment": ASSIGNMENT, "score": 0, "max_score": 2, "status": "graded", "flags": [], "cells": [cell]}
    lines = check.summary(result, "n.ipynb").splitlines()
    assert len(lines[1]) <= 100, lines[1]  # about 100 columns
    return lines[1].split("✘ ", 1)[1]


def test_the_likely_mistake_comes_first_then_the_shortest_fact():
    """On main: "✘ ffn_forward(...) is not close to the expected value: 3 of 3 entries differ (tolerance: ...)."
    and the mistake last, after ".;"."""
    assert _row("ffn_forward", NOT_CLOSE, [MISSING_B1]) == "b1 is missing. 3 of 3 entries differ, by up to 0.41"


def test_a_dtype_note_stays_and_a_single_number_says_how_far_off_it_is():
    """02's dead_fraction by integer division: on main the line dropped the note the notebook's check had shown."""
    message = ("AssertionError: dead_fraction(...) is not close to the expected value: 1 of 1 entries differ "
               "(tolerance: |got - expected| <= 1e-12 + 1e-07·|expected|).\n  largest absolute difference 0.4375 at "
               "index (), largest relative difference 1\n  expected: 0.4375\n  got:      0\n"
               "  note: dtype is int64, expected float64")
    assert _row("dead_fraction", message, hidden=True) == ("off by 0.4375; dtype is int64, expected float64 "
                                                           "(hidden test)")


@pytest.mark.parametrize("message, joined", [
    ("AssertionError: quantize_int8(W) is not right:\nq is not close to the expected value: 12 of 12 entries "
     "differ (tolerance: |got - expected| <= 0 + 0·|expected|).\n  largest absolute difference 3 at index (0, 1), "
     "largest relative difference 0.5", "quantize_int8(W) is not right: q: 12 of 12 entries differ, by up to 3"),
    ("AssertionError: Case: tied logits, k = 2\nindices is not close to the expected value: 2 of 6 entries differ "
     "(tolerance: ...).\n  largest absolute difference 1 at index (0, 1), largest relative difference 1",
     "tied logits, k = 2: indices: 2 of 6 entries differ, by up to 1"),
], ids=["ends on a colon", "a case"])
def test_a_first_line_that_ends_on_a_colon_or_names_a_case_is_joined_to_what_follows(message, joined):
    """On main the line read "quantize_int8(W) is not right:" and "Case: tied logits, k = 2", and stopped there."""
    assert _row("quantize_int8", message) == joined


def test_a_long_line_is_cut_at_a_word_with_an_ellipsis():
    """On main: "...<= 1e-12 + 1e-07·|expecte (a hidden test)"."""
    refusal = ("NotImplementedError: recall uses the course's ffn_helpers.memory.kv_ffn (the course functions it may "
               "call: ffn_forward), which the grader does not run for recall: its test fails as for an unimplemented "
               "function")
    said = _row("recall", refusal, hidden=True)
    shown, _, rest = said.partition("…")
    assert rest == " (hidden test)" and shown and refusal.removeprefix("NotImplementedError: ").startswith(shown)
    full = refusal.removeprefix("NotImplementedError: ")
    assert full[len(shown)] in " ,;:(" or not full[len(shown) - 1].isalnum(), shown  # the cut falls between words
