"""Answers to look at (autograder/report/similarity.py): copies are found, independent answers are not.

The copies are the published solutions and the alternative answers of tests/submissions/, renamed and laid
out anew by report_fixtures.renamed; the independent answers are those alternatives themselves.
"""

import contextlib
import csv
import importlib
import json
import os
import random
import sys
import time
import types

import numpy as np
import pytest
from disguises import (
    beside_a_decoy,
    body,
    graded_assignments,
    independent,
    looked_up_by_a_string,
    rates,
    through_a_free_cell,
    with_dead_code,
    with_parentheses,
    with_temporaries,
)
from report_fixtures import (
    answer_cells,
    graded_cells,
    renamed,
    student_record,
    write_class,
    write_notebooks,
)

from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR
from autograder.report import class_report as report
from autograder.report import similarity
from autograder.report.results import course_layout

GRADED = graded_assignments()
_body, _independent = body, independent  # the corpus's own (tests/disguises.py)


def _cells(aid):
    return answer_cells(SOLUTIONS_DIR / f"{aid}.ipynb"), answer_cells(NOTEBOOKS_DIR / f"{aid}.ipynb")


@pytest.mark.parametrize("aid", GRADED)
def test_a_renamed_reformatted_copy_of_the_solution_is_reported(aid):
    solutions, starters = _cells(aid)
    reportable = 0
    for grade_id, solution in solutions.items():
        copy = renamed(solution, "x9")
        assert _body(copy) != _body(solution)  # really renamed
        matches, notes = similarity.compare_cell(grade_id, {"copier": copy}, solution, starters[grade_id])
        if grade_id in similarity.DICTATED:
            assert (matches, notes) == ([], [f"{grade_id}: not compared: {similarity.DICTATED[grade_id]}"])
            continue
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
        if grade_id in similarity.DICTATED:
            continue  # never compared (the test above)
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


def test_a_dictated_cell_is_not_compared_because_an_independent_answer_scores_like_a_copy():
    """13's train: the matrix-style answer, written from the text's four numbered calls, shares REPORT_AT of its
    fingerprints with the solution, so a report on it would accuse honest learners (similarity.DICTATED)."""
    solutions, starters = _cells("13_training")
    starter = similarity.fingerprints(similarity.normalise(starters["train"])[0])
    sol = similarity.answer(solutions["train"], starter)
    scores = {name: similarity._score(similarity.answer(code, starter).fingerprints, sol.fingerprints)
              for name, code in _independent("13_training", "train", solutions["train"]).items()}
    assert max(scores.values()) >= similarity.REPORT_AT, scores
    assert set(similarity.DICTATED) == {"train"}


TARGETS = {  # share of disguised copies reported, at least (the issue's targets)
    "renamed and commented": 1.0,
    "reformatted, redundant parentheses": 1.0,
    "through a free cell": 1.0,
    "bound by assignment in a free cell": 1.0,
    "beside a decoy in a free cell": 1.0,  # issue 48: the whole cell the re-run runs is compared
    "looked up by a string": 1.0,  # issue 48: a lookup by a string reaches every cell the re-run runs
    "dead code": 0.9,
    "temporaries": 0.85,
    "classmate pairs": 0.95,
}


def test_disguised_copies_meet_their_targets_and_independent_answers_are_never_reported():
    r = rates()
    assert sorted(r.total) == sorted([*TARGETS, "independent answers"])
    comparable = sum(similarity.answer(s).reportable for a in GRADED for s in _cells(a)[0].values())
    assert comparable >= 33, "fewer published solutions are long enough to compare than before"
    for kind, target in TARGETS.items():
        assert r.total[kind] >= 60, (kind, r.total[kind])  # enough copies for the rate to mean something
        assert r.rate(kind) >= target, (kind, f"{r.reported[kind]}/{r.total[kind]}",
                                        [m for m in r.misses if m[0] == kind][:10])
    assert r.total["independent answers"] >= 100 and r.false_alarms == []


def test_layout_and_redundant_parentheses_change_nothing():
    a = "def f(x, W1, b1):\n    return np.maximum((x @ W1) + b1, 0.0)\n"
    b = "def f(x,W1,b1):\n    return (np.maximum(((x@W1)+b1),\n                      (0.0)))\n"
    assert similarity.normalise(a) == similarity.normalise(b)
    assert similarity.normalise(a)[0] != similarity.normalise(a.replace("(x @ W1) + b1", "x @ (W1 + b1)"))[0]


PADDED = '''def f(x, W1, b1, W2, b2):
    """my docstring"""
    unused = x.shape
    z = x @ W1 + b1
    if False:
        print("never")
    h = np.maximum(z, 0.0)
    print("checking", h.shape)
    out = h @ W2
    return out + b2
    x = 0
'''


def test_dead_code_and_single_use_temporaries_are_taken_out():
    plain = "def f(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1 + b1, 0.0) @ W2 + b2\n"
    assert similarity.normalise(PADDED) == similarity.normalise(plain)
    kept = "def f(x, W1):\n    z = x @ W1\n    np.maximum(z, 0, out=z)\n    z2 = z * 2\n    return z2 + z2\n"
    assert similarity.normal_form.canonical(kept) == (kept.rstrip("\n"), 0)  # a call on z between; z2 read twice


def test_a_temporary_read_in_a_loop_or_a_branch_stays():
    code = "def f(xs, w):\n    scale = w.sum()\n    out = []\n    for x in xs:\n        out.append(x * scale)\n" \
           "    return out\n"
    assert similarity.normal_form.canonical(code) == (code.rstrip("\n"), 0)
    code = "def f(x, w):\n    s = w.sum()\n    if x:\n        return s\n    return 0\n"
    assert similarity.normal_form.canonical(code) == (code.rstrip("\n"), 0)


def _same(a, b):
    return similarity.normalise(a)[0] == similarity.normalise(b)[0]


def test_a_parameter_bound_again_is_a_temporary_like_a_new_name():
    own = "def f(x, w):\n    x = np.asarray(x, dtype=float)\n    return np.maximum(x @ w, 0.0)\n"
    copy = "def f(x, w):\n    xs = np.asarray(x, dtype=float)\n    return np.maximum(xs @ w, 0.0)\n"
    assert _same(own, copy)
    looped = "def f(x, w):\n    for _ in w:\n        x = x * 2\n    return x\n"  # bound in a loop: left alone
    assert similarity.normal_form.canonical(looped) == (looped.rstrip("\n"), 0)


def test_a_temporary_without_calls_is_put_back_wherever_it_is_read():
    plain = "def f(X, W):\n    out = np.empty(X.shape[:-1])\n    for i in np.ndindex(X.shape[:-1]):\n" \
            "        out[i] = X[i] @ W\n    return out\n"
    named = "def f(X, W):\n    lead = X.shape[:-1]\n    out = np.empty(lead)\n    for i in np.ndindex(lead):\n" \
            "        out[i] = X[i] @ W\n    return out\n"
    assert _same(plain, named)
    branch = "def f(d):\n    half = ('a', 'b')\n    if d == 'c':\n        return 1\n    elif d in half:\n" \
             "        return 2\n"
    assert _same(branch, branch.replace("half", "('a', 'b')").replace("    ('a', 'b') = ('a', 'b')\n", ""))
    changed = "def f(x):\n    v = x[0]\n    x[0] = 2\n    return v + v\n"  # x changes: v is not x[0] after
    assert similarity.normal_form.canonical(changed) == (changed.rstrip("\n"), 0)


def test_a_comprehensions_first_iterable_a_listed_argument_and_an_empty_if_are_read_through():
    assert _same("def f(a, b):\n    ps = (a, b)\n    return sum([g(p) for p in ps if p])\n",
                 "def f(a, b):\n    return sum(g(p) for p in (a, b) if p)\n")
    assert _same("def f(a, b):\n    sizes = [g(p) for p in (a, b)]\n    return sum(sizes)\n",
                 "def f(a, b):\n    return sum(g(p) for p in (a, b))\n")  # the list, once put back
    assert _same("def f(z):\n    if z.size == 0:\n        pass\n    return g(z)\n", "def f(z):\n    return g(z)\n")
    kept = "def f(z):\n    if g(z):\n        pass\n    return z\n"  # the test calls: it stays
    assert similarity.normal_form.canonical(kept)[0] == kept.rstrip("\n")


LONG = "def f(x, w):\n    z = np.asarray(x, dtype=float) @ w\n    h = np.where(z > 0, z, 0.01 * z)\n" \
       "    return h.sum(axis=-1) / np.sqrt(len(w))\n"


def test_lines_the_whole_class_shares_count_against_no_copy():
    """An idiom (more than COMMON students have it) is left out of a pair's share: a copy of an answer
    whose other half is the class's idiom is listed, on the half that is its own."""
    own_half = "    y = np.cumsum(np.sort(h, axis=0)[::-1], axis=0) / np.arange(1, len(h) + 1)[:, None]\n" \
               "    return float(np.max(y[-1] - y[0]) * np.log1p(abs(y.min())))\n"
    other = LONG.replace("    return h.sum(axis=-1) / np.sqrt(len(w))\n", own_half)
    answers = {f"s{i}": renamed(LONG, f"s{i}") for i in range(similarity.COMMON + 5)}
    answers |= {"own": other, "copier": renamed(other, "c")}
    matches, _ = similarity.compare_cell("f", answers, "")
    assert [(m.student, m.other) for m in matches] == [("own", "copier")]


def test_two_answers_matching_the_solution_are_a_pair_when_they_share_more_with_each_other():
    close = LONG.replace("np.sqrt(len(w))", "len(w) ** 0.5")
    matches, _ = similarity.compare_cell("f", {"a": close, "b": renamed(close, "b"), "c": LONG}, LONG)
    scores = {(m.student, m.other): m.score for m in matches}
    assert similarity.REPORT_AT <= scores[("a", None)] < scores[("a", "b")] == 1.0
    assert ("a", "c") not in scores and ("b", "c") not in scores  # c is the solution itself: nothing more


@pytest.mark.parametrize("code", [
    "x = " + "-" * 200_000 + "1\n",  # MemoryError in the parser
    "def f(x):\n    return " + "+".join(["x"] * 20_000) + "\n",  # RecursionError building the tree
    "def f(x):\n    return " + "+".join(["x"] * 2_000) + "\n",  # parses; too deep to write back (unparse)
])
def test_code_too_deep_for_the_syntax_tree_is_compared_as_tokens(code):
    a = similarity.answer(code)
    assert a.reportable and a.tokens[0] in ("N", "return") and a.fingerprints
    matches, _ = similarity.compare_cell("f", {"a": code, "b": code}, "", "")
    assert [(m.student, m.other) for m in matches] == [("a", "b")]


def test_the_free_cells_an_answer_needs_are_added_whole_however_they_bind_its_names():
    """What the clean re-run's resolver runs for the answer, in notebook order: each cell that binds a name it
    reads, by a `def` (decorated too), an alias, tuple unpacking or a lambda, then those that bind what such a
    cell reads, each whole, scratch work and all, as the re-run runs it. Not a cell that binds nothing it reads
    (an earlier draft of its own function, a call), not a cell that does not parse."""
    answer = "def ffn_forward(x):\n    return run(x) + _c(x)\n"
    free = ["def mine(x):\n    return helper(x) + 1\nscratch = [1, 2, 3]; run = mine  # an alias\n",
            "def helper(x):\n    return x * h\ndef unrelated():\n    pass\n",
            "h = 3\n_a, (_b, _c) = len, (abs, lambda v: helper(v))\n",
            "def ffn_forward(x):\n    return 'a draft'\n", "print(ffn_forward(2))\n",
            "@lambda f: f\ndef mine(x):\n    return helper(x) * 2\n", "this is (not"]
    code = similarity.code_it_runs(answer, free)
    assert code == "\n".join([answer, *(free[i] for i in (0, 1, 2, 5))])
    assert similarity.code_it_runs(answer, []) == answer
    padding = ["x = 1\n" * 10_000] * 5  # 300,000 characters of free cells first: the definition after is not read
    assert similarity.code_it_runs(answer, [*padding, free[0]]) == answer


DECOY = "_ready = True\nclass _V:\n    def __call__(self, x):\n        return 2 * x\n_v = _V()\n"


@pytest.mark.parametrize("lookup", [
    "_w = globals()['_v']", "_w = globals().get('_v')", "_w = getattr(sys.modules[__name__], '_v')",
    "_w = vars()['_v']", "_w = locals()['_v']", "_w = eval('_v')", "exec('_w = _v')",
    "import __main__; _w = __main__._v", "_w = (lambda: 0).__globals__['_v']", "_w = get_ipython().user_ns['_v']",
    "_w = next(c for c in object.__subclasses__() if c.__name__ == '_V')()",  # only the string names it
])
def test_an_answer_that_looks_a_name_up_by_a_string_brings_every_cell_the_re_run_runs(lookup):
    """Issue 48: cells.needed follows names, so an answer that reaches a global by a string (the decoy's copy,
    `_v`) is compared with every free cell the clean re-run runs for the notebook's answers: here the decoy's,
    which another answer reads. Not a cell the re-run does not run, nor those cells for an answer without one."""
    answer = f"{lookup}\ndef f(x):\n    return _w(x)\n"
    other, scratch = "def g(x):\n    return x if _ready else None\n", "scratch = 1\n"
    notebook = similarity.other_cells([scratch, DECOY], answers=[answer, other])
    assert similarity.code_it_runs(answer, notebook) == answer + "\n" + DECOY
    assert similarity.code_it_runs(answer, similarity.other_cells([scratch, DECOY], answers=[answer])) == answer
    plain = "_w = 2\ndef f(x):\n    return _w * x\n"
    assert similarity.code_it_runs(plain, similarity.other_cells([scratch, DECOY], answers=[plain, other])) == plain


def test_a_lookup_by_a_string_in_a_cell_the_answer_reads_counts_as_the_answers():
    answer, other = "def f(x):\n    return _get('_v')(x)\n", "def g(x):\n    return x if _ready else None\n"
    helper = "def _get(name):\n    return globals()[name]\n"
    notebook = similarity.other_cells([DECOY, "scratch = 1\n", helper], answers=[answer, other])
    assert similarity.code_it_runs(answer, notebook) == "\n".join([answer, DECOY, helper])


def test_a_cell_magic_is_read_as_ipython_runs_it_and_the_courses_cells_resolve_but_are_not_shown():
    answer = "def ffn_forward(x):\n    return run(x)\n"
    magic, course = "%%capture\nrun = lambda x: np.maximum(x @ W, 0)\n", "import numpy as np\nW = np.eye(2)\n"
    code = similarity.code_it_runs(answer, similarity.other_cells([magic], [course]))
    assert code == answer + "\nrun = lambda x: np.maximum(x @ W, 0)\n"
    as_learners = similarity.code_it_runs(answer, similarity.other_cells([magic, course]))
    assert as_learners == code + "\n" + course


def test_endless_free_cells_cost_bounded_time():
    """Four cells of MAX_CHARS each, one statement a line, and an alias chain through them all: seconds."""
    lines = [f"a{i} = a{i + 1}\n" for i in range(4 * similarity.MAX_CHARS // 16)]
    per_cell = similarity.MAX_CHARS // 16
    free = ["".join(lines[i:i + per_cell]) for i in range(0, len(lines), per_cell)]
    free += ["b\n" * (similarity.MAX_CHARS // 2)] * 4  # past the budget: not read
    answers = [f"def f{i}(x):\n    return a0(x)\n" for i in range(12)]
    started = time.process_time()
    notebook = similarity.other_cells(free, answers=answers)
    codes = [similarity.code_it_runs(a, notebook) for a in answers]
    assert time.process_time() - started < 5.0
    assert len(notebook.cells) == 4 and all(similarity.MAX_CHARS <= len(c) < 2 * similarity.MAX_CHARS
                                            for c in codes)


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


def test_an_answer_cell_that_calls_the_solution_pasted_in_a_free_cell_is_reported(tmp_path):
    solutions, _ = _cells(AID)
    answer, free = through_a_free_cell(solutions["ffn_forward"])
    einsum = importlib.import_module(f"submissions.{AID}").CORRECT["einsum"]
    notebooks = write_notebooks(tmp_path / "autograded", AID,
                                {"indirect-1": {"ffn_forward": renamed(answer, "k")}, "own-1": einsum})
    path = notebooks / "indirect-1" / AID / f"{AID}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    at = next(i for i, c in enumerate(nb["cells"])
              if c["metadata"].get("nbgrader", {}).get("grade_id") == "ffn_forward")
    nb["cells"].insert(at - 1, {"cell_type": "code", "metadata": {}, "source": renamed(free, "k"), "outputs": [],
                                "execution_count": None})
    path.write_text(json.dumps(nb), encoding="utf-8")
    layout = course_layout(AID)
    results = write_class(tmp_path / "results", [student_record(s, AID, graded_cells(layout, {}))
                                                 for s in ("indirect-1", "own-1")])
    look = report.build([AID], results, notebooks=notebooks).looks[0]
    assert [(m.grade_id, m.student, m.other) for m in look.matches] == [("ffn_forward", "indirect-1", None)]
    assert "def my_ffn_forward_k" in look.matches[0].code  # the free cell is shown with the answer


def _put_free_cell(notebooks, student, source, metadata=None):
    """A free code cell holding `source` at the top of the student's notebook, before every answer."""
    path = notebooks / student / AID / f"{AID}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"].insert(1, {"cell_type": "code", "metadata": metadata or {}, "source": source, "outputs": [],
                           "execution_count": None})
    path.write_text(json.dumps(nb), encoding="utf-8")


_ANSWERED = ("ffn_forward", "linear_torch", "dead_fraction")
_BOUND = ("_f = ffn_forward{v}\n_g = _f\n_lt, _df = linear_torch{v}, dead_fraction{v}\n"
          "_d = lambda *args: _df(*args)\n")  # by assignment, an alias, tuple unpacking and a lambda
_CALLS = {"ffn_forward": "def ffn_forward(x, W1, b1, W2, b2): return _g(x, W1, b1, W2, b2)\n",
          "linear_torch": "def linear_torch(x, weight, bias): return _lt(x, weight, bias)\n",
          "dead_fraction": "def dead_fraction(x, W1, b1): return _d(x, W1, b1)\n"}


def test_answers_that_call_copies_bound_by_assignment_in_a_free_cell_are_reported(tmp_path):
    """Issue 41's attack: the published answers verbatim in a free cell, bound to other names there, each answer
    cell a one-line call; a second student does the same with a classmate's answers, renamed; a third marks the
    free cell as the course's own (locked). All are listed against what they copied; the classmates who wrote
    their own are not."""
    solutions, _ = _cells(AID)
    correct = importlib.import_module(f"submissions.{AID}").CORRECT
    published = "\n".join([*(solutions[g] for g in _ANSWERED), _BOUND.format(v="")])
    classmates = "\n".join([*(correct["loop"][g].replace(f"def {g}(", f"def {g}_v(") for g in _ANSWERED),
                            _BOUND.format(v="_v")])
    notebooks = write_notebooks(tmp_path / "autograded", AID, {
        "aliased-1": _CALLS, "aliased-2": _CALLS, "locked-1": _CALLS, "own-1": correct["loop"],
        "own-2": correct["einsum"]})
    _put_free_cell(notebooks, "aliased-1", published)
    _put_free_cell(notebooks, "aliased-2", classmates)
    _put_free_cell(notebooks, "locked-1", published, {"nbgrader": {
        "grade_id": "setup_more", "locked": True, "grade": False, "solution": False}})
    layout = course_layout(AID)
    students = ("aliased-1", "aliased-2", "locked-1", "own-1", "own-2")
    results = write_class(tmp_path / "results", [student_record(s, AID, graded_cells(layout, {})) for s in students])
    look = report.build([AID], results, notebooks=notebooks).looks[0]
    listed = {(m.grade_id, frozenset([m.student, m.other])) for m in look.matches}
    assert listed == {(g, frozenset(pair)) for g in _ANSWERED
                      for pair in (("aliased-1", None), ("locked-1", None), ("aliased-2", "own-1"))}, listed
    # they are answers that work: the free cell, then the answer cells, compute what the solution does
    args = [np.random.default_rng(0).normal(size=s) for s in ((2, 3), (3, 4), (4,), (4, 3), (3,))]
    for free in (published, classmates):
        env = {"np": np}
        for code in (free, *_CALLS.values()):
            exec(code, env)  # the course's solution, a course alternative, and the calls above
        assert np.allclose(env["ffn_forward"](*args), _run(solutions["ffn_forward"], args))


_PARAMS = {"ffn_forward": "x, W1, b1, W2, b2", "linear_torch": "x, weight, bias", "dead_fraction": "x, W1, b1"}
_LOOKUPS = {  # issue 48: each answer cell reaches the published answer, pasted in a free cell, by a string
    "decoy-1": {g: f"def {g}({p}):\n    return globals()['_v_{g}']({p}) if _ready else None\n"
                for g, p in _PARAMS.items()},
    "modules-1": {g: f"def {g}({p}):\n    return getattr(sys.modules[__name__], '_v_{g}')({p})\n"
                  for g, p in _PARAMS.items()},
    "lookup-1": {  # only dead_fraction reads a name of the free cell: the re-run runs it for that answer
        "ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n    import sys\n"
                       "    return getattr(sys.modules[__name__], '_v_ffn_forward')(x, W1, b1, W2, b2)\n",
        "linear_torch": "def linear_torch(x, weight, bias):\n    return eval('_v_linear_torch')(x, weight, bias)\n",
        "dead_fraction": "def dead_fraction(x, W1, b1):\n"
                         "    return globals().get('_v_dead_fraction')(x, W1, b1) if _ready else None\n"},
}


def test_answers_that_look_the_published_answers_up_by_a_string_are_reported(tmp_path):
    """Issue 48's attack: the published answers in a free cell beside a decoy (`_ready = True`, or `import sys`)
    that the answer cells read, each answer cell reaching its copy by a string (globals()[...], getattr on
    sys.modules, eval). The clean re-run runs the whole free cell, so the report compares it: all are listed
    against the solution, and the classmates who wrote their own are not."""
    solutions, _ = _cells(AID)
    correct = importlib.import_module(f"submissions.{AID}").CORRECT
    published = "\n".join(solutions[g].replace(f"def {g}(", f"def _v_{g}(") for g in _ANSWERED)
    free = {"decoy-1": "_ready = True\n" + published, "modules-1": "import sys\n" + published,
            "lookup-1": "_ready = True\n" + published}
    notebooks = write_notebooks(tmp_path / "autograded", AID,
                                {**_LOOKUPS, "own-1": correct["loop"], "own-2": correct["einsum"]})
    for student, source in free.items():
        _put_free_cell(notebooks, student, source)
    layout = course_layout(AID)
    students = (*_LOOKUPS, "own-1", "own-2")
    results = write_class(tmp_path / "results", [student_record(s, AID, graded_cells(layout, {})) for s in students])
    look = report.build([AID], results, notebooks=notebooks).looks[0]
    against_solution = {(m.grade_id, m.student) for m in look.matches if m.other is None}
    assert against_solution == {(g, s) for g in _ANSWERED for s in _LOOKUPS}, against_solution
    assert not [m for m in look.matches if {m.student, m.other} & {"own-1", "own-2"}], look.matches
    # they are answers that work: the free cell, then the answer cells, compute what the solution does
    args = [np.random.default_rng(0).normal(size=s) for s in ((2, 3), (3, 4), (4,), (4, 3), (3,))]
    for student, answers in _LOOKUPS.items():
        with _in_a_notebook([free[student], *answers.values()]) as notebook:
            assert np.allclose(notebook["ffn_forward"](*args), _run(solutions["ffn_forward"], args)), student


@contextlib.contextmanager
def _in_a_notebook(cells):
    """The namespace of `cells` run one after the other in a module (as IPython's __main__ is one, so that
    sys.modules[__name__] is the notebook), with numpy as `np`."""
    module = types.ModuleType("notebook_under_test")
    module.np = np
    sys.modules[module.__name__] = module
    try:
        for code in cells:
            exec(code, vars(module))  # the course's solution, the corpus's edit of it, the lookups above
        yield vars(module)
    finally:
        del sys.modules[module.__name__]


def test_the_corpus_dead_code_and_temporaries_keep_the_answer():
    """The disguises are copies, not other answers: the disguised solution computes the same values."""
    solutions, _ = _cells(AID)
    rng = random.Random(3)
    args = [np.random.default_rng(0).normal(size=s) for s in ((2, 3), (3, 4), (4,), (4, 3), (3,))]
    want = _run(solutions["ffn_forward"], args)
    for disguise in (with_dead_code, with_temporaries, with_parentheses):
        copy = disguise(solutions["ffn_forward"], rng)
        assert copy != solutions["ffn_forward"] and np.array_equal(_run(copy, args), want), disguise.__name__


def test_the_corpus_lookups_by_a_string_keep_the_answer():
    """The copies beside a decoy and looked up by a string are answers that work, as the notebook runs them."""
    solutions, _ = _cells(AID)
    args = [np.random.default_rng(0).normal(size=s) for s in ((2, 3), (3, 4), (4,), (4, 3), (3,))]
    answer, free = beside_a_decoy(solutions["ffn_forward"], "d0")
    answer2, free2, other = looked_up_by_a_string(solutions["ffn_forward"], "s0")
    for cells in ([free, answer], [free2, other, answer2]):
        with _in_a_notebook(cells) as notebook:
            assert np.allclose(notebook["ffn_forward"](*args), _run(solutions["ffn_forward"], args))


def _run(code, args):
    env = {"np": np}
    exec(code, env)  # the course's own solution, or the corpus's edit of it
    return env["ffn_forward"](*args)


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


@pytest.mark.parametrize("tail", ["0", "a1999"])
def test_a_long_chain_of_temporaries_or_dead_code_costs_bounded_time(tail):
    code = "def f(a0):\n" + "".join(f"    a{i} = a{i - 1} * 2 + 1\n" for i in range(1, 2000)) + f"    return {tail}\n"
    started = time.process_time()
    a = similarity.answer(code)
    assert time.process_time() - started < 2.0 and len(a.tokens) == similarity.MAX_TOKENS  # seconds, not minutes
