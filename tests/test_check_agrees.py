"""The notebook's check and the grader agree on the course functions an answer may call (issue 52, point 0).

On main, 10's `recall` written with `ffn_forward` (imported in the setup cell and used all through the notebook)
passed the notebook's check, while the grader gave it 0 and a flag: the notebook never said that an answer may call
no course function, and its check did not refuse one. Now every exercise's description says which it may call
(none by default; autograder/may_call.py), the setup cell hands the same lists to the notebook's checks
(`checks.may_call`), and the checks refuse the others with the grader's own words; `recall` may call `ffn_forward`.

For every graded notebook, right answers written with the course functions its notebook uses go through the
notebook's checks (the very test cells, run in this process as a notebook runs them) and through `python -m
autograder grade`, and every test cell gets the same verdict from both: the worked solutions with the course
functions their exercises list, a right `recall` through `ffn_forward`, and for every exercise the worked
solution that also calls, in turn, each course function its notebook's own cells call (by the name the
notebook calls it by; any arguments, inside a `try`: the rule is about the call).
"""

import ast
import functools

import matplotlib
import nbtools
import pytest

from autograder.grading.gate_beside import public
from ffn_helpers import checks

GRADED = nbtools.graded_assignments()

# Right answers written with a course function their notebook uses and lists for them.
INVITED = {
    "10_key_value_memory": {
        "recall": "import numpy as np\n\n"
                  "def recall(W1, b1, W2, b2, keys, values):\n"
                  "    Y = ffn_forward(np.asarray(keys, dtype=float), W1, b1, W2, b2)\n"
                  "    V = np.asarray(values, dtype=float)\n"
                  "    hits = 0\n"
                  "    for i, y in enumerate(Y):\n"
                  "        if np.linalg.norm(y) > 0:\n"
                  "            cos = (V @ y) / (np.linalg.norm(V, axis=1) * np.linalg.norm(y))\n"
                  "            hits += int(np.argmax(cos) == i)\n"
                  "    return hits / len(Y)\n",
    },
}


def _chain(node):
    """`a.b.c` for an expression of names and attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


@functools.cache
def course_functions_used(aid):
    """expression -> dotted name: the course functions the notebook's own cells call (neither answers nor tests),
    by the name they call them by; the figures and the mistakes catalogue left out (the same rule holds)."""
    matplotlib.use("Agg")
    nb = nbtools.source(aid)
    namespace = {"__name__": "__main__"}
    exec(compile(nbtools.python_source(nbtools.cells_by_id(nb)["setup"].source), "<setup>", "exec"), namespace)
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or nbtools.is_answer(cell) or nbtools.is_test(cell):
            continue
        for node in ast.walk(ast.parse(nbtools.python_source(cell.source))):
            text = _chain(node.func) if isinstance(node, ast.Call) else None
            if text is None or text.split(".")[0] not in namespace:
                continue
            value = namespace[text.split(".")[0]]
            for part in text.split(".")[1:]:
                value = getattr(value, part, None)
            dotted = public._home(value)  # what the grader's public build stubs
            if dotted and not dotted.startswith(("ffn_helpers.plots", "ffn_helpers.mistakes")):
                found.setdefault(text, dotted)
    return dict(sorted(found.items()))


def probe(source, exercise, expression):
    """The answer `source` whose `exercise` (a function, or a class's __init__) first calls `expression`()."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == exercise)
    if isinstance(node, ast.ClassDef):
        node = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    first = node.body[1] if ast.get_docstring(node) and len(node.body) > 1 else node.body[0]
    lines = source.splitlines()
    pad = " " * first.col_offset
    call = [f"{pad}try:", f"{pad}    {expression}()", f"{pad}except Exception:", f"{pad}    pass"]
    return "\n".join(lines[:first.lineno - 1] + call + lines[first.lineno - 1:]) + "\n"


def students(aid):
    """student -> answers (grade_id -> source) put into the worked solution."""
    solution = nbtools.cells_by_id(nbtools.solution(aid))
    exercises = nbtools.answer_ids(nbtools.solution(aid))
    used = list(course_functions_used(aid))
    found = {"invited": dict(INVITED.get(aid, {}))}
    for k, _ in enumerate(used):
        found[f"probe-{k}"] = {gid: probe(solution[gid].source, gid, used[(k + i) % len(used)])
                               for i, gid in enumerate(exercises)}
    return found


def notebook_verdicts(aid, answers):
    """test cell -> passed, by the notebook's own checks (every test cell, run in this process)."""
    raised = nbtools.run_in_process(aid, answers)
    return {gid: gid not in raised for gid in nbtools.test_ids(nbtools.solution(aid))}, raised


def test_the_probes_call_the_notebooks_course_functions_by_its_own_names():
    used = course_functions_used("10_key_value_memory")
    assert used["ffn_forward"] == "ffn_helpers.ffn.ffn_forward" and used["memory.kv_ffn"] == "ffn_helpers.memory.kv_ffn"
    assert course_functions_used("02_forward_pass")["ref.ffn_trace"] == "ffn_helpers.ffn.ffn_trace"
    source = probe("def f(x):\n    \"\"\"Doc.\"\"\"\n    return x\n", "f", "memory.keys")
    assert source == "def f(x):\n    \"\"\"Doc.\"\"\"\n    try:\n        memory.keys()\n    except Exception:\n" \
                     "        pass\n    return x\n"


def test_recall_through_ffn_forward_passes_the_notebooks_checks():
    """The learner's `recall` of issue 52: on main the notebook said ✔ and the grader 0 with a flag."""
    verdicts, raised = notebook_verdicts("10_key_value_memory", INVITED["10_key_value_memory"])
    assert all(verdicts.values()), {g: str(e)[:300] for g, e in raised.items()}


def test_a_course_function_the_exercise_may_not_call_fails_its_check_with_the_graders_words():
    """10's kv_ffn through the course's memory.kv_ffn: on main its checks passed (the grader gave 0 and a flag)."""
    answer = "def kv_ffn(keys, values, threshold=0.5):\n    return memory.kv_ffn(keys, values, threshold)\n"
    verdicts, raised = notebook_verdicts("10_key_value_memory", {"kv_ffn": answer})
    assert {g for g, ok in verdicts.items() if not ok} == {"test_kv_ffn", "test_kv_ffn_hidden"}
    assert str(raised["test_kv_ffn"]) == checks.refusal("kv_ffn", "ffn_helpers.memory.kv_ffn", ())


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("aid", [pytest.param(a, marks=pytest.mark.xdist_group(f"agree-{a}")) for a in GRADED])
def test_the_notebooks_checks_and_the_grader_agree_on_every_test_cell(aid, tmp_path):
    from adversarial import grading

    answers = students(aid)
    base = nbtools.solution(aid)
    submissions = {student: nbtools.with_answers(base, cells) for student, cells in answers.items()}
    course = grading.make_course(tmp_path / "course", aid)
    grading.write_submissions(tmp_path / "submitted", aid, submissions)
    timeout = 120.0 if aid == nbtools.CAPSTONE else 60.0
    results = grading.run_batch(aid, tmp_path / "submitted", tmp_path / "results", course,
                                cell_timeout=timeout, timeout=1800.0)
    disagree = {}
    for student, cells in answers.items():
        by_notebook, raised = notebook_verdicts(aid, cells)
        result = results[student]
        assert result["status"] in ("graded", "flagged"), (student, result["status"], result.get("error"))
        by_grader = {c["grade_id"]: c["points"] >= c["max_points"] for c in result["cells"]}
        assert set(by_grader) == set(by_notebook), student
        for gid, passed in by_notebook.items():
            if passed != by_grader[gid]:
                message = next(c["message"] for c in result["cells"] if c["grade_id"] == gid)
                disagree[student, gid] = (passed, by_grader[gid], str(raised.get(gid, ""))[:200], message[:200])
        if student == "invited":
            assert all(by_notebook.values()) and result["status"] == "graded", (student, raised)
    assert disagree == {}
