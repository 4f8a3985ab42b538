"""One student's result: each test cell's points from both runs, the flags, and one overall status.

A test cell earns min(notebook run, clean re-run) points, and nothing when
its exercise is flagged. The notebook run of a cell with hidden tests runs only
its visible part (course.keep_hidden_tests_out): the hidden tests count from
the clean re-run alone. The overall status is the most serious of the notebook's
(schema.Status, in order of seriousness). The records are schema.py's.
"""


from dataclasses import dataclass, replace

from ...limits import MAX_TEST_MESSAGE_CHARS
from ...schema import CellResult, CellStatus, Diagnosis, Flag, NotebookResult, Run, Status, StudentResult


def diagnoses(exercise, keys):
    """Diagnosis records of the catalogue keys a check named (judge.verdict checked them), explained by the
    catalogue: no text of a diagnosis comes from a message, which quotes the learner's code."""
    from ffn_helpers.mistakes import CATALOGUE

    explanations = {m.key: m.explanation for m in CATALOGUE.get(exercise, ())}
    return tuple(Diagnosis(key, explanations[key]) for key in dict.fromkeys(keys) if key in explanations)


def notebook_run_score(cell, max_points):
    """(points, message) of a test cell as the notebook run left it; stderr (warnings) costs nothing."""
    outputs = cell.get("outputs", [])
    if cell.get("execution_count") is None and not outputs:
        return 0.0, "not run"
    for out in outputs:
        if out.get("output_type") == "error":
            return 0.0, f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"[:MAX_TEST_MESSAGE_CHARS]
    for out in outputs:
        if out.get("output_type") == "execute_result":
            text = out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            try:
                return max(0.0, min(float(text), max_points)), ""
            except ValueError:
                return 0.0, "the test cell displayed a value that is not a score (a hijacked display?)"
    return float(max_points), ""


@dataclass(frozen=True)
class _TwoRuns:
    """One test cell's verdicts from the notebook run and from the clean re-run."""

    grade_id: str
    exercise: str | None
    max_points: float
    notebook: Run
    clean: Run
    clean_timed_out: bool
    clean_finished: bool  # False: the clean re-run gave no verdict (overran, died, or did not run at all)
    hidden_tests: bool  # the notebook run held only the cell's visible part
    mistakes: tuple = ()  # catalogue keys the clean re-run's check named
    public: str | None = None  # the clean re-run's message as the student reads it, when it holds hidden data

    @property
    def withheld(self):
        """Passed in the notebook, with no clean verdict: its points wait for a regrade by hand."""
        return not self.clean_finished and self.notebook.points > self.clean.points

    def findings(self, clean_ran, again=False):
        """A disagreement (two verdicts on the same test), or a withheld test to review (`again`: on a regrade)."""
        where = f"cell {self.grade_id}"
        if (self.clean_finished and not self.hidden_tests and clean_ran and not self.clean_timed_out
                and 0 < self.notebook.points and self.clean.points < self.notebook.points):
            first = self.clean.message.splitlines()[0] if self.clean.message else ""
            return [Flag("disagreement", self.exercise, f"{self.grade_id} passes in the notebook run but not in the "
                         "clean re-run, where the grader runs the test with its own objects: " + first, where)]
        if self.withheld and clean_ran:
            why = self.clean.message.splitlines()[0] if self.clean.message else "no verdict"
            again = ", also when graded once more, alone" if again else ""
            return [Flag("review", self.exercise, f"{self.grade_id}: the clean re-run could not finish this test "
                         f"({why}){again}, so its points are withheld; regrade it by hand", where)]
        return []

    def scored(self, flagged, timed_out, notebook_name):
        """The cell's result: min of both runs, nothing when its exercise is flagged."""
        points = 0.0 if flagged else min(self.notebook.points, self.clean.points)
        use_clean = self.clean.points < self.max_points and self.clean.message
        # The student's message; the clean run's own (`clean_run`, the instructor's copy) keeps a private
        # offering's hidden data (disclosure.for_student).
        message = (self.public or self.clean.message) if use_clean else self.notebook.message
        if flagged:
            status = CellStatus.FLAGGED
        elif points >= self.max_points:
            status = CellStatus.PASSED
        elif self.withheld:
            status = CellStatus.RERUN_INCOMPLETE
        elif timed_out or self.clean_timed_out:
            status = CellStatus.TIMEOUT
        elif message.startswith(("NotRun", "not run")):
            status = CellStatus.NOT_RUN
        else:
            status = CellStatus.PARTIAL if points > 0 else CellStatus.FAILED
        named = diagnoses(self.exercise, self.mistakes) if use_clean and points < self.max_points else ()
        if points >= self.max_points:
            message = ""
        return CellResult(self.grade_id, self.exercise, points, self.max_points, status, message, named,
                          self.notebook, self.clean, notebook_name)


def _two_runs(source_cell, exercise, executed_cell, clean):
    top = float(source_cell.points)
    notebook = Run(*notebook_run_score(executed_cell, top)) if executed_cell is not None else Run(0.0, "not run")
    test = clean.tests.get(source_cell.name) if clean is not None else None
    if test is None:
        return _TwoRuns(source_cell.name, exercise, top, notebook, Run(0.0, "the clean re-run did not run"),
                        False, False, source_cell.hidden_tests)
    return _TwoRuns(source_cell.name, exercise, top, notebook, Run(test.points, test.message), test.timed_out,
                    not test.incomplete, source_cell.hidden_tests, test.mistakes, test.public)


def _notebook_statuses(findings, run_info, runs):
    statuses = [Status.FLAGGED] if any(f.costs_points for f in findings) else []
    dead = (run_info or {}).get("dead") or {}
    if run_info and (run_info.get("memory_errors") or any("MemoryError" in (r.clean.message or "") for r in runs)):
        statuses.append(Status.OUT_OF_MEMORY)
    if run_info and (run_info.get("timeouts") or dead.get("why", "").startswith("the kernel did not")):
        statuses.append(Status.TIMEOUT)
    if "died" in dead.get("why", ""):
        statuses.append(Status.KERNEL_DIED)
    return statuses


def combine(model, autograded, run_info, clean, findings, again=False):
    """The NotebookResult of one notebook, and the findings (Flags) with disagreements added.

    model: course.NotebookModel; autograded: the executed notebook (or None);
    run_info: that run's record (execute.Recorder.runs); clean: rerun.CleanRunResult (or None);
    again: this is the regrade, alone after the batch, of a clean re-run that could not finish.
    """
    findings = list(findings)
    if clean is not None:
        findings += [Flag("monkeypatch" if n.kind == "patched" else n.kind, n.exercise, _note_text(n.kind, n.detail),
                          "clean re-run") for n in clean.notes]
    run_cells = autograded.cells if autograded is not None else []
    grade_ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in run_cells]
    executed = {gid: cell for gid, cell in zip(grade_ids, run_cells, strict=True) if gid}
    tests = [c for c in model.cells if c.grade and not c.solution]
    runs = [_two_runs(c, model.exercise_of.get(c.name), executed.get(c.name), clean) for c in tests]
    findings = list(dict.fromkeys(findings + [f for r in runs for f in r.findings(clean is not None, again)]))
    flagged = {f.exercise for f in findings if f.costs_points}
    timed_out = notebook_run_timeouts(autograded, run_info)
    cells = [r.scored(r.exercise in flagged, r.grade_id in timed_out, model.name) for r in runs]
    return NotebookResult(model.name, Status.worst(_notebook_statuses(findings, run_info, runs)),
                          sum(c.points for c in cells), sum(c.max_points for c in cells), cells,
                          [replace(f, notebook=model.name) for f in findings]), findings


def notebook_run_timeouts(autograded, run_info):
    """The grade ids of the cells that timed out in the notebook run (run_info: the Recorder's record of it)."""
    run_cells = autograded.cells if autograded is not None else []
    grade_ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in run_cells]
    return {grade_ids[i] for i in (run_info or {}).get("timeouts", [])
            if isinstance(i, int) and 0 <= i < len(grade_ids) and grade_ids[i]}


def _note_text(kind, detail):
    return {"patched": f"changed {detail} while running",
            "reference": f"called the course's {detail}, which the grader does not run for this exercise",
            "lying": f"returned {detail}", "channel": detail}.get(kind, detail)


def empty_notebook(model, status, message):
    """The result of a notebook that could not be graded at all (missing or unreadable)."""
    run = Run(0.0, message)
    cells = [CellResult(c.name, model.exercise_of.get(c.name), 0.0, float(c.points), CellStatus.NOT_RUN, message,
                        (), run, run, model.name) for c in model.cells if c.grade and not c.solution]
    return NotebookResult(model.name, Status(status), 0.0, model.max_score, cells)


def student_result(student, assignment, notebooks, timestamp=None, error=None):
    """One student's result: its notebooks, all their flags, and the overall status and score."""
    return StudentResult(student, assignment, Status.worst(nb.status for nb in notebooks),
                         sum(nb.score for nb in notebooks), sum(nb.max_score for nb in notebooks), list(notebooks),
                         [f for nb in notebooks for f in nb.flags], timestamp, error)


def failed(model, student, status, message):
    """The result (as a dict) of a student none of whose notebooks could be graded: a crash, a timeout, a refusal."""
    notebooks = [empty_notebook(n, status, message) for n in model.notebooks]
    return student_result(student, model.name, notebooks, error=message).to_dict()
