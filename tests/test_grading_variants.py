"""The alternative answers of tests/submissions/<id>.py, graded by nbgrader itself and by the course's grader.

For each graded assignment, one scratch copy of the course runs
`nbgrader generate_assignment <id>` and then ONE `nbgrader autograde <id>` batch in
which every variant is a student (student id = variant name), next to two
reference students: the untouched learner notebook (must score 0 on every test cell)
and the worked solution (must get full marks). The same submissions then go through
`python -m autograder grade` (sandbox, notebook run and clean re-run), the pipeline
instructors use, which must give every one of them exactly plain nbgrader's points
per test cell, status `graded` and no flag: an honest answer, right or wrong, is
never charged more, nor called cheating. Through the grader the worked solution
earns full marks, the learner notebook 0, and the course's gradebook agrees; in
02_forward_pass's batch a correct answer that warns on stderr loses nothing there.
The batches run once per worker: the tests of one assignment share an xdist group
and a session-wide cache.

A submission is built as tests/submissions/__init__.py describes: the learner
notebook with every answer cell filled in from the worked solution, then the
variant's cells put in.

Each submission costs a kernel and a full run of the notebook (3 to 5 s of CPU), so
wrong variants of *different, independent* exercises share one student ("pack-<k>"):
a variant is packed only when nothing else in the notebook uses its function (no other
answer cell, no test cell but its own) and its cell binds no name another cell uses.
Each variant is still one test, reading the scores of its own test cells; a packed
student must moreover get full marks on every exercise answered by the reference, which
shows the packed mistakes stayed in their own cells. Set FFN_GRADE_EACH_VARIANT_ALONE=1
to give every variant a student of its own (student id = variant name).
"""

import ast
import importlib
import os
import re
import traceback

import nbtools
import pytest

from ffn_helpers import mistakes

LEARNER, SOLUTION = "learner-notebook", "reference-solution"  # the two reference students
# A correct answer that warns on stderr, a student of the grader's batch of WARNS_IN only: a warning costs nothing.
WARNS, WARNS_IN = "warns-on-stderr", "02_forward_pass"
WARNING_FROM_CORRECT_CODE = ("import warnings\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
                             "    warnings.warn('a warning from correct code', RuntimeWarning)\n"
                             "    z = np.asarray(x, dtype=float) @ W1 + b1\n"
                             "    return np.maximum(z, 0.0) @ W2 + b2\n")
STUDENT_ID = re.compile(r"[A-Za-z0-9-]+")
GRADED = nbtools.graded_assignments()


def load_variants(aid):
    """(the tests/submissions/<aid>.py module or None, the reason it could not be loaded)."""
    if not (nbtools.REPO_ROOT / "tests" / "submissions" / f"{aid}.py").exists():
        return None, f"tests/submissions/{aid}.py is missing"
    try:
        module = importlib.import_module(f"submissions.{aid}")
    except Exception:
        return None, f"tests/submissions/{aid}.py does not import:\n{traceback.format_exc()}"
    correct, wrong = getattr(module, "CORRECT", None), getattr(module, "WRONG", None)
    if not isinstance(correct, dict) or not isinstance(wrong, list | tuple):
        return None, f"tests/submissions/{aid}.py must define CORRECT (a dict) and WRONG (a list)"
    return module, ""


def variants(kind):
    """One pytest param per variant of every graded assignment; kind: "CORRECT" or "WRONG"."""
    params = []
    for aid in GRADED:
        module, _ = load_variants(aid)
        if module is None:
            continue  # test_alternative_answers_are_complete says why
        entries = getattr(module, kind)
        names = list(entries) if kind == "CORRECT" else [getattr(w, "name", repr(w)) for w in entries]
        params += [pytest.param(aid, name, id=f"{aid}-{name}", marks=pytest.mark.xdist_group(f"grade-{aid}"))
                   for name in names]
    return params


def per_assignment():
    return [pytest.param(aid, id=aid, marks=pytest.mark.xdist_group(f"grade-{aid}")) for aid in GRADED]


# ---------------------------------------------------------------- the batch


def _bindings(tree):
    """Names a cell binds at its top level, with the statement binding each."""
    bound = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                bound[(alias.asname or alias.name).split(".")[0]] = stmt
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[stmt.name] = stmt
        else:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    bound[node.id] = stmt
    return bound


def shareable(nb, wrong):
    """Whether `wrong`, put into `nb`, can only change the scores of its own exercise's test cells."""
    exercises = nbtools.answer_ids(nb)
    own = {wrong.cell} | {gid for gid in nbtools.test_ids(nb) if (nbtools.exercise_of(gid, exercises) or ("",))[0]
                          == wrong.cell}
    try:
        bound = _bindings(ast.parse(nbtools.python_source(wrong.source)))
        setup = [ast.dump(s) for c in nb.cells if nbtools.grade_id(c) == "setup"
                 for s in ast.parse(nbtools.python_source(c.source)).body]
        others = set()  # every name the rest of the notebook uses or binds
        for cell in nb.cells:
            if cell.cell_type == "code" and nbtools.grade_id(cell) not in own:
                tree = ast.parse(nbtools.python_source(cell.source))
                others |= nbtools.names_used(cell.source) | set(_bindings(tree))
    except SyntaxError:
        return False
    if wrong.cell in others:  # another cell calls this exercise: its mistake would spread
        return False
    # Every other name it binds is new to the notebook, or re-imported exactly as the setup cell does.
    return all(name == wrong.cell or name not in others or ast.dump(stmt) in setup for name, stmt in bound.items())


def plan_students(module, base):
    """(student id -> answers to put into `base`, variant name -> student id, variant -> why it has no student)."""
    students, student_of, unbuilt = {}, {}, {}
    entries = [(name, cells, None) for name, cells in module.CORRECT.items()]
    entries += [(w.name, {w.cell: w.source}, w) for w in module.WRONG]
    alone = os.environ.get("FFN_GRADE_EACH_VARIANT_ALONE") == "1"
    packs = []  # answers of each pack, in order
    for name, cells, wrong in entries:
        if name in (LEARNER, SOLUTION) or name in student_of or not STUDENT_ID.fullmatch(name):
            unbuilt[name] = (f"{name!r} cannot be a student id (unique; letters, digits and '-'; "
                             f"not {LEARNER}/{SOLUTION})")
            continue
        try:
            nbtools.with_answers(base, cells)
        except KeyError as exc:
            unbuilt[name] = str(exc)
            continue
        if wrong is None or alone or not shareable(base, wrong):
            students[name], student_of[name] = cells, name
            continue
        for k, pack in enumerate(packs):
            candidate = nbtools.with_answers(base, {**pack, **cells})
            if wrong.cell not in pack and all(shareable(candidate, w) for w in module.WRONG
                                              if student_of.get(w.name) == f"pack-{k + 1}" or w is wrong):
                pack.update(cells)
                student_of[name] = f"pack-{k + 1}"
                break
        else:
            packs.append(dict(cells))
            student_of[name] = f"pack-{len(packs)}"
    students.update({f"pack-{k + 1}": pack for k, pack in enumerate(packs)})
    return students, student_of, unbuilt


def _grade(aid, root):
    """Generate `aid` in a scratch course under `root`, submit every variant and both references, autograde."""
    course = nbtools.scratch_course(root, aid)
    nbtools.generate(course, aid)
    base = nbtools.completed_learner(aid)
    submissions = {LEARNER: nbtools.learner(aid), SOLUTION: nbtools.solution(aid)}
    module, _ = load_variants(aid)
    students, student_of, unbuilt = plan_students(module, base) if module else ({}, {}, {})
    submissions.update({student: nbtools.with_answers(base, cells) for student, cells in students.items()})
    batch = nbtools.autograde(course, aid, submissions)
    batch.unbuilt, batch.student_of, batch.students = unbuilt, student_of, students
    if aid == WARNS_IN:  # the grader's alone: plain nbgrader gives 0 to a test cell that writes to stderr
        submissions[WARNS] = nbtools.with_answers(base, {"ffn_forward": WARNING_FROM_CORRECT_CODE})
    batch.pipeline, batch.pipeline_course = _grade_with_the_pipeline(aid, root, submissions)
    return batch


def _grade_with_the_pipeline(aid, root, submissions):
    """(student -> result of `python -m autograder grade`, its course); one job: xdist already runs two
    assignments at once."""
    from adversarial import grading

    course = grading.make_course(root / "pipeline-course", aid)
    grading.write_submissions(root / "pipeline-submitted", aid, submissions)
    timeout = 120.0 if aid == nbtools.CAPSTONE else 60.0
    return grading.run_batch(aid, root / "pipeline-submitted", root / "pipeline-results", course, jobs=1,
                             cell_timeout=timeout, timeout=900.0), course


@pytest.fixture(scope="session")
def graded_batch(tmp_path_factory):
    """graded_batch(aid): the autograded batch of `aid`, computed once per worker."""
    cache = {}

    def get(aid):
        if aid not in cache:
            try:
                cache[aid] = _grade(aid, tmp_path_factory.mktemp(f"course-{aid}"))
            except Exception as exc:  # remembered, so the other tests of aid fail fast with the same reason
                cache[aid] = exc
        if isinstance(cache[aid], Exception):
            raise cache[aid]
        return cache[aid]

    return get


def scores_of(batch, name):
    """The scores of the student that carries `name` (a variant or a reference student)."""
    problem = batch.unbuilt.get(name, "")
    assert not problem, f"{batch.aid}: no submission for {name}: {problem}"
    student = batch.student_of.get(name, name)
    missing = batch.missing(student)
    assert not missing, missing
    tests = nbtools.test_ids(nbtools.source(batch.aid))
    scores = batch.scores[student]
    assert sorted(scores) == sorted(tests), f"{student} was graded on {sorted(scores)}, expected {sorted(tests)}"
    return scores


def feedback(batch, name, cell_ids):
    """The autograded outputs of `name`'s cells `cell_ids`, for failure messages and diagnosis checks."""
    cells = nbtools.cells_by_id(batch.autograded(batch.student_of.get(name, name)))
    return {gid: nbtools.output_text(cells[gid]) for gid in cell_ids if gid in cells}


def lost(scores):
    return {gid: f"{score:g}/{top:g}" for gid, (score, top) in scores.items() if score < top}


def show(texts, limit=1500):
    return "\n".join(f"--- {gid}:\n{text[-limit:]}" for gid, text in texts.items())


# ---------------------------------------------------------------- tests


@pytest.mark.grading
@pytest.mark.sandbox  # the graded batch goes through the course's grader too
@pytest.mark.parametrize("aid", per_assignment())
def test_learner_notebook_scores_zero(aid, graded_batch):
    batch = graded_batch(aid)
    scores = scores_of(batch, LEARNER)
    earned = {gid: score for gid, (score, _) in scores.items() if score != 0}
    assert not earned, f"{aid}: the untouched learner notebook earns points on {earned}"


@pytest.mark.grading
@pytest.mark.sandbox  # the graded batch goes through the course's grader too
@pytest.mark.parametrize("aid", per_assignment())
def test_solution_notebook_gets_full_marks(aid, graded_batch):
    batch = graded_batch(aid)
    short = lost(scores_of(batch, SOLUTION))
    assert not short, f"{aid}: the worked solution loses points {short}:\n{show(feedback(batch, SOLUTION, short))}"


@pytest.mark.grading
@pytest.mark.sandbox  # the graded batch goes through the course's grader too
@pytest.mark.parametrize(("aid", "name"), variants("CORRECT"))
def test_correct_variant_gets_full_marks(aid, name, graded_batch):
    batch = graded_batch(aid)
    short = lost(scores_of(batch, name))
    assert not short, f"{aid}: correct variant {name!r} loses points {short}:\n{show(feedback(batch, name, short))}"


@pytest.mark.grading
@pytest.mark.sandbox  # the graded batch goes through the course's grader too
@pytest.mark.parametrize(("aid", "name"), variants("WRONG"))
def test_wrong_variant_loses_points(aid, name, graded_batch):
    """It scores below the maximum on each cell it `loses`, and the feedback names its `diagnosis`."""
    batch = graded_batch(aid)
    wrong = next(w for w in load_variants(aid)[0].WRONG if w.name == name)
    scores = scores_of(batch, name)
    loses = (wrong.loses,) if isinstance(wrong.loses, str) else tuple(wrong.loses)
    unknown = sorted(set(loses) - set(scores))
    assert loses and not unknown, (
        f"{aid}: {name}.loses must name test cells ({unknown or 'it is empty'}); the cells: {sorted(scores)}")
    kept = [gid for gid in loses if scores[gid][0] >= scores[gid][1]]
    texts = feedback(batch, name, loses)
    assert not kept, f"{aid}: wrong variant {name!r} gets full marks on {kept}:\n{show(texts)}"
    if wrong.diagnosis:
        needle = f"Likely mistake ({wrong.diagnosis})"
        assert any(needle in text for text in texts.values()), (
            f"{aid}: the feedback to {name!r} on {list(loses)} does not say {needle!r}:\n{show(texts)}")
        result = batch.pipeline.get(batch.student_of[name]) or {"cells": []}
        named = {d["key"] for c in result["cells"] if c["grade_id"] in loses for d in c["diagnosis"]}
        assert wrong.diagnosis in named, (  # the results' diagnosis: keys the clean re-run's check attached
            f"{aid}: the grader's diagnosis of {name!r} on {list(loses)} is {sorted(named)}, not {wrong.diagnosis!r}")
    student = batch.student_of[name]
    if student != name:  # packed: the exercises answered by the reference must be untouched
        replaced = set(batch.students[student])
        exercises = nbtools.answer_ids(nbtools.source(aid))
        reference = {gid: s for gid, s in scores.items()
                     if (nbtools.exercise_of(gid, exercises) or ("",))[0] not in replaced}
        short = lost(reference)
        assert not short, (f"{aid}: in {student} (packed with {sorted(replaced)}), reference answers lose {short}: "
                           f"the packed mistakes interfere; grade with FFN_GRADE_EACH_VARIANT_ALONE=1\n"
                           + show(feedback(batch, name, short)))


def reference_students():
    return [pytest.param(aid, name, id=f"{aid}-{name}", marks=pytest.mark.xdist_group(f"grade-{aid}"))
            for aid in GRADED for name in (LEARNER, SOLUTION)]


@pytest.mark.grading
@pytest.mark.sandbox  # the graded batch goes through the course's grader too
@pytest.mark.parametrize(("aid", "name"), reference_students() + variants("CORRECT") + variants("WRONG"))
def test_the_grader_scores_as_plain_nbgrader(aid, name, graded_batch):
    batch = graded_batch(aid)
    plain = scores_of(batch, name)
    student = batch.student_of.get(name, name)
    result = batch.pipeline.get(student)
    assert result is not None, f"{aid}: the grader gave no result for {student}"
    ours = {c["grade_id"]: (c["points"], c["max_points"]) for c in result["cells"]}
    differ = {gid: f"nbgrader {plain[gid][0]:g}, grader {ours.get(gid, (None,))[0]}" for gid in plain
              if ours.get(gid) != (plain[gid][0], plain[gid][1])}
    messages = {c["grade_id"]: c["message"][:600] for c in result["cells"] if c["grade_id"] in differ}
    assert not differ, f"{aid}: {student} ({name}) is graded differently from plain nbgrader: {differ}\n{messages}"
    assert result["status"] == "graded" and result["flags"] == [], (
        f"{aid}: {student} ({name}) is {result['status']} with flags {result['flags']}")


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("aid", per_assignment())
def test_the_grader_gives_the_solution_full_marks_and_the_learner_zero(aid, graded_batch):
    """Through `python -m autograder grade`: the worked solution earns full marks on every test cell, the untouched
    learner notebook 0 on every one (each `failed`), neither raises a flag, and the course's gradebook, where
    formgrader and `nbgrader export` read, holds the same totals."""
    from autograder.grading.scoring.gradebook import cell_scores

    batch = graded_batch(aid)
    tests = nbtools.test_ids(nbtools.source(aid))
    solution, learner = batch.pipeline[SOLUTION], batch.pipeline[LEARNER]
    assert [c["grade_id"] for c in solution["cells"]] == tests
    for cell in solution["cells"]:
        assert cell["points"] == cell["max_points"] > 0, (cell["grade_id"], cell["message"][:2000])
    for cell in learner["cells"]:
        assert cell["points"] == 0, cell["grade_id"]
        assert cell["status"] == "failed", (cell["grade_id"], cell["status"])
    for result in (solution, learner):
        assert result["status"] == "graded" and result["flags"] == [], (result["student"], result["flags"])
    rows = {}
    for row in cell_scores(batch.pipeline_course / "gradebook.db"):
        rows[row.student] = rows.get(row.student, 0) + (row.auto_score or 0)  # None: a manually graded cell
    assert rows[SOLUTION] == solution["max_score"] and rows[LEARNER] == 0


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.xdist_group(f"grade-{WARNS_IN}")
def test_the_grader_charges_nothing_for_a_warning_from_a_correct_answer(graded_batch):
    warns = graded_batch(WARNS_IN).pipeline[WARNS]
    assert warns["score"] == warns["max_score"] and warns["flags"] == [], warns["cells"]


def _normalised(source):
    """The code without comments and formatting, to tell genuinely different implementations apart."""
    try:
        return ast.dump(ast.parse(source))
    except SyntaxError:
        return source


@pytest.mark.parametrize("aid", GRADED)
def test_alternative_answers_are_complete(aid):
    """Per exercise: at least two different correct and two wrong implementations, all well-formed."""
    module, problem = load_variants(aid)
    assert module is not None, problem
    nb = nbtools.source(aid)
    exercises, tests = nbtools.answer_ids(nb), set(nbtools.test_ids(nb))
    problems = []
    names = list(module.CORRECT) + [getattr(w, "name", None) for w in module.WRONG]
    for name in names:
        if not isinstance(name, str) or not STUDENT_ID.fullmatch(name) or name in (LEARNER, SOLUTION):
            problems.append(f"variant name {name!r}: use letters, digits and '-' (not {LEARNER}/{SOLUTION})")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        problems.append(f"variant names used twice: {duplicated}")
    for name, cells in module.CORRECT.items():
        if not isinstance(cells, dict) or not cells or set(cells) - set(exercises):
            problems.append(f"CORRECT[{name!r}] must map answer cell ids {exercises} to sources")
    for wrong in module.WRONG:
        if wrong.cell not in exercises:
            problems.append(f"{wrong.name}: cell {wrong.cell!r} is not an answer cell {exercises}")
        loses = (wrong.loses,) if isinstance(wrong.loses, str) else tuple(wrong.loses)
        if not loses or set(loses) - tests:
            problems.append(f"{wrong.name}: loses={wrong.loses!r} must name test cells among {sorted(tests)}")
        catalogued = {m.key for m in mistakes.CATALOGUE.get(wrong.cell, ())}
        if wrong.diagnosis and wrong.diagnosis not in catalogued:
            problems.append(f"{wrong.name}: diagnosis {wrong.diagnosis!r} is not a mistake of {wrong.cell} "
                            f"in ffn_helpers.mistakes.CATALOGUE: {sorted(catalogued)}")
    for fn in exercises:
        correct = {_normalised(cells[fn]) for cells in module.CORRECT.values() if fn in cells}
        wrong = {_normalised(w.source) for w in module.WRONG if w.cell == fn}
        if len(correct) < 2:
            problems.append(f"{fn}: {len(correct)} different correct implementation(s), expected at least 2")
        if len(wrong) < 2:
            problems.append(f"{fn}: {len(wrong)} different wrong implementation(s), expected at least 2")
    assert not problems, f"tests/submissions/{aid}.py:\n" + "\n".join(problems)


def test_every_submissions_module_has_a_graded_assignment():
    """A tests/submissions/<id>.py whose notebook has no graded exercise is stale: nothing grades it."""
    modules = sorted(p.stem for p in (nbtools.REPO_ROOT / "tests" / "submissions").glob("*.py")
                     if p.stem != "__init__")
    stray = [m for m in modules if m not in GRADED]
    assert not stray, f"tests/submissions/ has modules for no graded assignment: {stray} (graded: {GRADED})"
