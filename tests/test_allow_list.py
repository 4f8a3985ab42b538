"""The judge beside the learner allows instead of forbids (issue 41, items 1 and 2).

While an exercise is graded in the clean re-run, the judge computes only the course
functions its answer cell lists (cell metadata `may_call`, autograder/may_call.py) and
those its test hands over (`checks.substitute`); every other one is refused, and the test
fails as for an unimplemented function. Every call the judge runs for the learner's code
runs under the deadline of the cell or test that made it.
"""

import copy
import time

import nbformat
import nbtools
import numpy as np
import pytest
from adversarial.beside import ANOTHER_FUNCTION, SLOW_CALL

from autograder import assignments, cells, may_call
from autograder.authoring import build
from autograder.grading.gate_beside import judge, public, rerun
from autograder.grading.gate_in import sandbox
from autograder.grading.scoring import integrity

# What the course's sources allow: an expert is an FFN, and a key-value memory answers through one (10's notebook
# computes its outputs with ffn_forward throughout).
COURSE_ALLOWS = {("11_mixture_of_experts", "moe_forward"): ("ffn_forward",),
                 ("10_key_value_memory", "recall"): ("ffn_forward",)}


def _course_cells(aid):
    return cells.code_cells(nbtools.source(aid))


def _judge(course):
    """A clean re-run's judge over `course`'s cells, whose learner's process is never started."""
    return rerun.CleanRun(course, None, 30.0, {}, course, student=object())


def _box(tmp_path):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    work.chmod(0o755)
    return sandbox.Sandbox(readonly=(str(work),), cwd=str(work), uid=sandbox.slot_uid(9),
                           limits=sandbox.Limits(memory=sandbox.parse_size("1G")))


def _clean_run(tmp_path, code, course, timeout=30.0):
    references = {c.exercise: integrity.reference_names(c.exercise) for c in code if c.role == "answer"}
    return rerun.CleanRun(code, _box(tmp_path), timeout, references, course).run()


def test_the_sources_allow_what_the_solutions_call_and_nothing_else():
    """Every allow-list of the course, read back from the sources: the one a new listing must be added to here."""
    found = {(aid, c.grade_id): c.may_call for aid in assignments() for c in _course_cells(aid) if c.may_call}
    assert found == COURSE_ALLOWS


@pytest.mark.parametrize("aid", assignments())
def test_every_course_function_is_refused_in_every_exercise_that_does_not_list_it(aid):
    """The walk over the public build's whole catalogue: refused before it computes anything (no argument is even
    given, which the function would reject), for each exercise of the notebook; what an exercise lists is served."""
    catalogue = sorted(public.stubbed())
    assert {"ffn_helpers.memory.recalled", "ffn_helpers.moe.softmax", "ffn_helpers.ffn.ffn_forward"} <= set(catalogue)
    judge = _judge(_course_cells(aid))
    for exercise in sorted(judge.exercises):
        judge._current_exercise = exercise
        listed = {may_call.resolve(name) for name in judge.allow.lists[exercise]}
        for dotted in catalogue:
            if public.resolve(dotted) in listed:
                assert judge.allow.allows(exercise, public.resolve(dotted))
                continue
            with pytest.raises(NotImplementedError, match=f"^{exercise} uses the course's .*unimplemented"):
                judge._on_reference(dotted, (), {})
        assert len(judge._refused) == len(catalogue) - len(listed), exercise
        judge._refused.clear()


def test_an_allowed_function_is_computed_and_a_substituted_one_only_inside_its_block():
    judge = _judge(_course_cells("11_mixture_of_experts"))
    judge._current_exercise = "moe_forward"
    x, W1, b1 = [[1.0, -2.0]], [[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0]
    assert judge._on_reference("ffn_helpers.ffn.ffn_forward", (x, W1, b1, W1, b1), {}).tolist() == [[1.0, 0.0]]
    topk = "ffn_helpers.moe.router_topk"
    with pytest.raises(NotImplementedError):
        judge._on_reference(topk, ([1.0, 2.0], [[1.0, 0.0], [0.0, 1.0]], 1), {})
    judge._handed.append([topk])  # as rerun.CleanRun._substitute does for `checks.substitute(router_topk=...)`
    indices, gates = judge._on_reference(topk, (np.array([1.0, 2.0]), np.eye(2), 1), {})
    assert (indices.tolist(), gates.tolist()) == ([1], [1.0])
    judge._handed.pop()
    with pytest.raises(NotImplementedError):
        judge._on_reference(topk, (np.array([1.0, 2.0]), np.eye(2), 1), {})


@pytest.mark.parametrize("attack", ANOTHER_FUNCTION, ids=[a.name for a in ANOTHER_FUNCTION])
def test_another_course_function_that_computes_the_answer_earns_nothing(tmp_path, attack):
    """On main each scored full marks with no flag; the rest of the notebook keeps its points."""
    solution = nbtools.with_answers(nbtools.solution(attack.assignment), {attack.exercise: attack.source})
    course = _course_cells(attack.assignment)
    result = _clean_run(tmp_path, cells.code_cells(solution), course)
    scored = {gid: (t.points, t.max_points, t.message[:300]) for gid, t in result.tests.items()}
    for test in result.tests.values():
        if test.exercise == attack.exercise:
            assert test.points == 0 and test.message.startswith(
                f"NotImplementedError: {attack.exercise} uses the course's {attack.called} "), scored
            assert not (test.timed_out or test.incomplete), scored
        else:
            assert test.points == test.max_points, scored
    assert ("reference", attack.called) in {(n.kind, n.detail) for n in result.notes if n.exercise == attack.exercise}


def _slow_notebook():
    """An exercise whose answer may call memory.mean_recall, and does for half an hour; one beside it, answered."""
    nb = nbformat.v4.new_notebook()
    setup = nbformat.v4.new_code_cell("import numpy as np\nfrom ffn_helpers import checks, memory")
    setup.metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "grade": False, "solution": False}
    slow = nbformat.v4.new_code_cell("def capacity(d):\n"
                                     "    return memory.mean_recall(d, 512, 0.5, seeds=list(range(50_000)))\n")
    slow.metadata.update(nbgrader={"grade_id": "capacity", "solution": True, "grade": False, "locked": False},
                         may_call=["memory.mean_recall"])
    honest = nbformat.v4.new_code_cell("def double(x):\n    return 2 * x\n")
    honest.metadata["nbgrader"] = {"grade_id": "double", "solution": True, "grade": False, "locked": False}
    nb.cells = [setup, slow, _test("capacity", "assert 0 <= capacity(128) <= 1"), honest,
                _test("double", "assert double(2) == 4")]
    return cells.code_cells(nb)


@pytest.mark.parametrize("where", ["here", "judge"])
def test_a_slow_allowed_call_is_the_tests_timeout(tmp_path, where):
    """A course function the exercise may call, made slow by its arguments: stopped at the test's deadline, which
    its time counts toward; the exercise beside it keeps its point. Also in the worker's confined child (judge.py),
    where the alarm is the forked child's own."""
    code = _slow_notebook()
    started = time.monotonic()
    if where == "here":
        result = _clean_run(tmp_path, code, code, timeout=3.0)
    else:
        box, references = _box(tmp_path), {c.exercise: integrity.reference_names(c.exercise) for c in code}
        data = judge.run(lambda student: rerun.CleanRun(code, box, 3.0, references, code, student=student).run(),
                         rerun.StudentProcess(box), uid=sandbox.slot_uid(100, sandbox.uid_base()),
                         memory=judge.MEMORY, timeout=120, isolate=True)
        result = judge.verdict(data, {c.grade_id: (c.exercise, c.points) for c in code if c.role == "test"},
                               {"capacity", "double"})
    took = time.monotonic() - started
    test = result.tests["test_capacity"]
    assert (test.points, test.timed_out, test.message) == (0.0, True, "timed out after 3 s"), test
    assert result.tests["test_double"].points == 1.0, result.tests
    assert took < 40, took  # the call alone runs for half an hour


def _test(exercise, source):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": f"test_{exercise}", "grade": True, "locked": True, "points": 1,
                                 "solution": False}
    return cell


def test_a_slow_call_in_a_cell_the_answers_need_stops_at_the_cells_deadline(tmp_path):
    """Outside any exercise's test (a free cell that an answer reads) every course function is served, each under
    the running cell's deadline: here it overruns, and the grading goes on at once, every test keeping its points."""
    aid = "10_key_value_memory"
    solution = copy.deepcopy(nbtools.solution(aid))
    recall = next(i for i, c in enumerate(solution.cells) if nbtools.grade_id(c) == "recall")
    solution.cells.insert(recall, nbformat.v4.new_code_cell("_SCALE = 1.0\n" + SLOW_CALL))
    answer = nbtools.cells_by_id(solution)["recall"].source + "\n\n_scale = lambda: _SCALE  # reads the free cell\n"
    solution = nbtools.with_answers(solution, {"recall": answer})
    started = time.monotonic()
    result = _clean_run(tmp_path, cells.code_cells(solution), _course_cells(aid), timeout=5.0)
    took = time.monotonic() - started
    assert [message for _, message in result.cell_errors] == ["timed out after 5 s"], result.cell_errors
    assert took < 90, took  # the call alone runs for minutes
    assert {gid: t.points for gid, t in result.tests.items()} == {
        gid: t.max_points for gid, t in result.tests.items()}, result.tests


def test_the_build_refuses_a_name_that_is_no_course_function():
    nb = copy.deepcopy(nbtools.source("11_mixture_of_experts"))
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "moe_forward")
    for wrong, why in [(["ffn_forwrd"], "'ffn_forwrd', which is not there"),
                       (["_fast.ffn_rows_in_threads"], "got '_fast.ffn_rows_in_threads'"),
                       (["checks"], "'checks', which is no public function of ffn_helpers"),
                       ("ffn_forward", "should be a list of distinct names")]:
        answer.metadata["may_call"] = wrong
        problems = build._may_call_problems("11_mixture_of_experts", nb)
        assert len(problems) == 1 and why in problems[0], problems
    answer.metadata["may_call"] = ["ffn_forward"]
    assert build._may_call_problems("11_mixture_of_experts", nb) == []


def test_the_learner_reads_the_allow_list_above_the_answer():
    """The sentence comes from the same metadata as the rule (build._tell_may_call): above every exercise, "none" for
    an exercise that lists nothing."""
    for aid in assignments():
        nb = nbtools.learner(aid)
        for before, cell in zip(nb.cells, nb.cells[1:], strict=False):
            told = "**Course functions you may call here:**" in before.source
            assert told == nbtools.is_answer(cell), (aid, cell.id)
            if told:
                origin = lambda name, aid=aid: build._written_in(name.rpartition(".")[2], aid)  # noqa: E731
                names = cell.metadata.get("may_call", [])
                assert before.source.endswith(may_call.sentence(names, cell.id, origin))
                assert ("** none:" in before.source) == (not names), (aid, cell.id)
    assert "`ffn_forward` (02's exercise), from `ffn_helpers`" in may_call.sentence(
        ["ffn_forward"], "moe_forward", lambda name: build._written_in(name, "11_mixture_of_experts"))


def test_the_setup_cell_hands_the_same_lists_to_the_notebooks_checks():
    """Every graded notebook's setup cell ends with checks.may_call(...) of every exercise's list, read back by
    running it: the checks refuse what the judge refuses (tests/test_check_agrees.py runs both)."""
    for aid in assignments():
        nb = nbtools.learner(aid)
        answers = {nbtools.grade_id(c): c.metadata.get("may_call", []) for c in nb.cells if nbtools.is_answer(c)}
        setup = nbtools.cells_by_id(nb)["setup"].source
        if not answers:
            assert "checks.may_call(" not in setup, aid
            continue
        namespace = {}
        exec(compile(nbtools.python_source(setup), f"<{aid} setup>", "exec"), namespace)
        assert namespace["__course_may_call__"] == {gid: tuple(names) for gid, names in answers.items()}, aid


@pytest.mark.parametrize("aid", nbtools.graded_assignments())
def test_the_notebooks_checks_refuse_exactly_what_the_judge_refuses(aid):
    """Every function of the public build's catalogue, for each exercise of the notebook: the checks' rule (the
    setup cell's checks.may_call, ffn_helpers._checks.rule._Rule) refuses it exactly when the judge does."""
    from ffn_helpers._checks import rule as checks_rule

    namespace = {"__name__": "__main__"}
    exec(compile(nbtools.python_source(nbtools.cells_by_id(nbtools.learner(aid))["setup"].source), "<setup>", "exec"),
         namespace)
    judge = _judge(_course_cells(aid))
    for exercise in sorted(judge.exercises):
        judge._current_exercise = exercise
        rule = checks_rule._Rule(namespace, exercise, namespace["__course_may_call__"][exercise])
        for dotted in sorted(public.stubbed()):
            function = public.resolve(dotted)
            refused_here = rule._guarded(function) is not function
            assert refused_here == (not judge.allow.allows(exercise, function)), (exercise, dotted)


def test_the_build_refuses_an_exercise_with_nowhere_to_state_its_rule():
    """The rule is stated above every answer, and applied by the checks the setup cell imports."""
    nb = copy.deepcopy(nbtools.source("10_key_value_memory"))
    assert build._may_call_problems("10_key_value_memory", nb) == []
    at = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == "recall")
    nb.cells.insert(at, nbformat.v4.new_code_cell("pass"))
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    setup.source = setup.source.replace("checks, ", "")
    problems = build._may_call_problems("10_key_value_memory", nb)
    assert len(problems) == 2 and "answer cell recall has no markdown cell right above it" in problems[0]
    assert "its setup cell should import checks" in problems[1]
