"""The clean re-run of one notebook: rerun.CleanRun in a confined judge (judge.py), a second try if it cannot
finish, and the notebook's result from both runs (results.combine)."""

import shutil
import sys
import time

from ..dispatch import position
from ..gate_beside.course_namespace import CourseNamespace


class CleanRerun:
    """The clean re-runs of one worker: the course's cells (`course_cells`, {notebook: code cells}), the seconds
    each cell may run, the offering's seed (only the judge draws with it), in `folders` and `sandboxes`, timed in
    `timing`, told to `where`."""

    def __init__(self, course_cells, cell_timeout, offering_seed, folders, sandboxes, timing, where):
        self.course_cells, self.cell_timeout, self.offering_seed = course_cells, cell_timeout, offering_seed
        self.folders, self.sandboxes, self.timing, self.where = folders, sandboxes, timing, where
        self._namespaces = {}  # notebook name -> its CourseNamespace, built at its first student (its module doc)

    def judge(self, student, nbm, executed, notebook, run_info, findings, error, again=False):
        """The result of notebook `nbm`: `executed`, what the notebook run left (or None), `notebook` what is shown,
        `run_info` what execute.py recorded of its run; `again`: graded again, alone, after the batch."""
        from ... import cells
        from ...schema import Status
        from ..scoring import integrity, results

        code = cells.code_cells(notebook)
        course_cells = self.course_cells.get(nbm.name, [])
        findings = list(findings) + integrity.static_findings(code, course_cells)
        references = {c.exercise: integrity.reference_names(c.exercise) for c in code if c.role == "answer"}
        rerun_dir = self.folders.workdir(student, "rerun")
        sandbox = self.sandboxes.sandbox(rerun_dir, readonly=(rerun_dir,), writable=()).with_(
            cgroup=self.sandboxes.new_group())
        started = time.monotonic()
        # A test that timed out in the notebook run has nothing to gain here (it earns the minimum of both runs).
        # One the clean re-run cannot finish (a busy machine) is left to `grade`, which grades its student again,
        # alone, after the batch (`again`).
        looped = results.notebook_run_timeouts(executed, run_info) if executed is not None else set()
        self.where.phase(position.CLEAN_RERUN, nbm.name)  # before its process starts
        if nbm.name not in self._namespaces:
            self._namespaces[nbm.name] = CourseNamespace.build(course_cells)
        clean = self.run(code, sandbox, references, course_cells, looped, self.where.clean_positions(nbm, code),
                         course_namespace=self._namespaces[nbm.name])
        self._killed_for_memory(clean)
        self.timing.since("clean re-run", started)
        shutil.rmtree(rerun_dir, ignore_errors=True)
        result, findings = results.combine(nbm, executed, run_info if executed is not None else {}, clean, findings,
                                           again=again)
        if error and executed is None:
            result.status, result.error = Status.worst([result.status, Status.GRADER_ERROR]), error
        result.course_errors = [f"{label}: {message}" for label, message in clean.course_errors]
        return result

    def _killed_for_memory(self, clean):
        """The clean re-run's tests left without a verdict because the kernel killed processes of its sandbox for
        the sandbox's memory say so, as a MemoryError's message would (results.py's out-of-memory status)."""
        if self.sandboxes.killed_for_memory():
            for test in clean.tests.values():
                if test.incomplete:
                    test.message = f"MemoryError: the sandbox's processes together went past its memory; {test.message}"

    def run(self, code, sandbox, references, course_cells, notebook_timeouts=(), at=None, course_namespace=None):
        """rerun.CleanRun in a confined child of this process (judge.py); a second try if it cannot finish.

        When neither try gives a verdict, no test earns a point from the clean re-run (its
        message says why): the notebook run alone is never trusted with points.
        """
        from ..gate_beside import judge
        from ..gate_beside.rerun import CleanRun, StudentProcess

        tests = {c.grade_id: (c.exercise, c.points) for c in course_cells if c.role == "test" and c.grade_id}
        exercises = {c.grade_id for c in course_cells if c.role == "answer"}
        timeout = self.cell_timeout
        budget = 120 + 2 * timeout * (len(code) + 2)

        def work(student):  # in the judge: the one process that runs the hidden tests gets the offering's seed
            from ffn_helpers import checks

            checks.set_offering_seed(self.offering_seed)
            return CleanRun(code, sandbox, timeout, references, course_cells, student=student,
                            notebook_timeouts=notebook_timeouts,
                            on_cell=(lambda cell: student.at(at(cell))) if at else None,
                            course_namespace=course_namespace).run()

        why = ""
        for attempt in range(2):
            self.sandboxes.clear_slot()
            try:
                data = judge.run(work, StudentProcess(sandbox), uid=self.sandboxes.judge_uid(), memory=judge.MEMORY,
                                 timeout=budget, hidden=self.sandboxes.hidden, isolate=self.sandboxes.isolate,
                                 on_at=self.where.report if at else None)
                return judge.verdict(data, tests, exercises)
            except (judge.JudgeFailed, ValueError, OSError) as exc:
                why = str(exc)
                print(f"clean re-run without a verdict (try {attempt + 1}): {why}", file=sys.stderr, flush=True)
        return _unfinished(tests, why)


def _unfinished(tests, why):
    """The clean re-run's result when neither try gave a verdict: each test without a point, saying why."""
    from ..gate_beside.rerun import CleanRunResult, TestResult

    clean = CleanRunResult()
    for gid, (exercise, top) in tests.items():
        clean.tests[gid] = TestResult(gid, exercise, top, 0.0, f"the clean re-run could not finish: {why[:500]}",
                                      incomplete=True)
    return clean
