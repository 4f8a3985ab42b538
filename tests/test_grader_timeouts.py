"""Time limits in a real sandboxed batch of 02_forward_pass: a looping answer, and a clean re-run that cannot finish.

- An answer that loops costs one cell timeout: its test ends as `timeout` (0 points, no
  review), the clean re-run does not run that test again, its hidden test gets the short
  limit (AFTER_TIMEOUT), and every other exercise keeps its points.
- A clean re-run that could not finish in the batch is graded again, alone, after the batch;
  the regrade's verdict is what counts. The first try is made to fail by a test double of
  the batch's pool (a loaded machine cannot be ordered up on cue); the regrade is real.
"""

import nbtools
import pytest
from adversarial import grading

from autograder.grading.dispatch import pool
from autograder.grading.gate_in.loop_budget import AFTER_TIMEOUT

pytestmark = [pytest.mark.grading, pytest.mark.sandbox, pytest.mark.xdist_group("grader-timeouts")]

AID = "02_forward_pass"
CELL_TIMEOUT = 5.0
LOOPING = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"
UNLUCKY = "unlucky"  # an honest, correct student whose clean re-run the double makes fail in the batch


@pytest.fixture(scope="module")
def batch(tmp_path_factory, request):
    base = tmp_path_factory.mktemp("timeouts")
    course_root = grading.make_course(base / "course", AID)
    solution = nbtools.solution(AID)
    students = {"honest": solution, UNLUCKY: solution,
                "looping": nbtools.with_answers(nbtools.completed_learner(AID), {"ffn_forward": LOOPING})}
    grading.write_submissions(base / "submitted", AID, students)
    real, pools, ticks = pool.run_pool, [], []

    def double(queue, setup, jobs, timeout, log_dir, model, **kwargs):
        queue = list(queue)
        pools.append(({s.student for s in queue}, jobs, kwargs.get("again", False)))
        ticks.append(kwargs.get("tick"))
        for submission, reply in real(queue, setup, jobs, timeout, log_dir, model, **kwargs):
            if submission.student == UNLUCKY and len(pools) == 1:
                reply = grading.clean_run_failed(reply, "test_ffn_forward")
            yield submission, reply

    patch = pytest.MonkeyPatch()
    patch.setattr(pool, "run_pool", double)
    request.addfinalizer(patch.undo)
    results = grading.run_batch(AID, base / "submitted", base / "results", course_root, cell_timeout=CELL_TIMEOUT)
    return results, pools, ticks


def _cells(result):
    return {c["grade_id"]: c for c in result["cells"]}


def test_a_looping_answer_is_a_timeout_on_its_tests_only(batch):
    results, _, _ = batch
    looping = results["looping"]
    cells = _cells(looping)
    for gid in ("test_ffn_forward", "test_ffn_forward_hidden"):
        assert (cells[gid]["points"], cells[gid]["status"]) == (0, "timeout"), cells[gid]
    by_exercise = grading.points_by_exercise(looping)
    for exercise in ("linear_torch", "dead_fraction"):
        assert by_exercise[exercise][0] == by_exercise[exercise][1] > 0, (exercise, looping["cells"])
    assert looping["status"] == "timeout" and looping["flags"] == [], looping["flags"]


def test_a_test_that_timed_out_in_the_notebook_run_is_not_run_again(batch):
    results, pools, _ = batch
    cells = _cells(results["looping"])
    visible, hidden = cells["test_ffn_forward"], cells["test_ffn_forward_hidden"]
    assert visible["clean_run"]["message"] == (f"timed out after {CELL_TIMEOUT:g} s in the notebook run "
                                               "(not run again in the clean re-run)"), visible
    assert hidden["clean_run"]["message"].startswith(f"timed out after {AFTER_TIMEOUT:g} s "), hidden
    assert all("looping" not in students for students, _, again in pools if again), pools  # no retry either


def test_a_clean_re_run_that_failed_in_the_batch_is_graded_again_alone_and_earns_its_points(batch):
    results, pools, _ = batch
    assert pools[0][2] is False and pools[1:] == [({UNLUCKY}, 1, True)], pools
    unlucky = results[UNLUCKY]
    assert unlucky["score"] == unlucky["max_score"] == results["honest"]["score"] > 0, unlucky["cells"]
    assert unlucky["status"] == "graded" and unlucky["flags"] == [], unlucky["flags"]
    assert all(c["status"] == "passed" for c in unlucky["cells"]), unlucky["cells"]


def test_the_regrade_alone_has_a_progress_line_of_its_own(batch):
    """A student stuck in the regrade is named as in the batch: its pool is given a progress line to tick."""
    _, _, ticks = batch
    assert len(ticks) == 2 and all(callable(t) for t in ticks), ticks
    assert ticks[0].__self__ is not ticks[1].__self__  # the regrade counts its own students, not the batch's
    assert (ticks[1].__self__.total, ticks[1].__self__.done) == (1, 1)
