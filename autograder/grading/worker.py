"""A grading worker: a long-lived process that imports nbgrader once and grades students one at a time.

Each student is graded in the worker's own scratch copy of the course (its own
gradebook, its own submitted/ and autograded/ folders), so nothing a student's
code does can reach the course or another student. Per student:

1. read each notebook (a missing, empty or broken file is a status, not a crash)
   and check its structure against the gradebook (deleted, edited, duplicated cells);
2. the notebook run: nbgrader's Autograde, the kernel in the sandbox;
3. the clean re-run: rerun.CleanRun, in a fresh sandbox;
4. the result (results.combine) and the feedback page.

Each step is a class of student/; this module starts the worker and takes each student through them.

Protocol: one JSON object per line on stdin (the first is the set-up), one per line
back on the original stdout (between the replies, where it is: position.py); the
worker's own printing goes to stderr.
"""

import io
import json
import logging
import os
import shutil
import sys
import time
import traceback
import warnings
from pathlib import Path

from .. import sanitise, upstream
from . import course
from .dispatch import position
from .worker_setup import WorkerSetup


class Worker:
    """Start-up (the scratch course, nbgrader's configuration, what every judge and kernel finds loaded), then each
    student through the steps of student/: the submission read in, the notebook run, each notebook's clean re-run,
    the result and the feedback page."""

    def __init__(self, setup):
        from . import execute
        from .course import AssignmentModel
        from .student.clean_rerun import CleanRerun
        from .student.folders import StudentFolders
        from .student.notebook_run import NotebookRun
        from .student.sandboxes import Sandboxes
        from .student.timing import Timing

        self.setup = setup  # a WorkerSetup
        self.model = AssignmentModel.from_dict(setup.model)
        self.aid, self.scratch = self.model.name, Path(setup.scratch)
        self.root = self.scratch / "course"
        self.feedback_dir = Path(setup.feedback_dir) if setup.feedback_dir else None
        course_cells, self.course_markdown = _course_cells_and_prose(setup.course_notebooks)
        self._make_scratch_course()
        self.config = course.load_config(setup.course_root)
        mpl_cache = self._matplotlib_cache()
        _preload(mpl_cache)
        self.cell_timeout = cell_timeout(setup.cell_timeout, self.config)
        figures = "png" if setup.draw_figures else "text"  # each figure drawn, or its text alternative
        self.timing = Timing()
        self.where = position.Tracker(self.model)  # for the parent's progress line; main() sets its report
        self.recorder = execute.Recorder(on_cell=self.where.notebook_cell)  # each notebook run's record
        self._configure()
        self.sandboxes = Sandboxes(setup, figures, mpl_cache)
        self.sandboxes.start_zygote(self.scratch)
        self.folders = StudentFolders(self.root, self.scratch, self.model)
        self.notebook_run = NotebookRun(self.config, self.folders, self.sandboxes, self.timing, self.where,
                                       self.recorder)
        self.clean_rerun = CleanRerun(course_cells, self.cell_timeout, setup.offering_seed, self.folders,
                                      self.sandboxes, self.timing, self.where)

    def _make_scratch_course(self):
        """This worker's own copy of the course: its gradebook (without the hidden tests) and the release's files."""
        from .scoring import gradebook

        self.root.mkdir(parents=True, exist_ok=True)
        course.copy_database(self.setup.template_db, self.root / "gradebook.db")
        course.keep_hidden_tests_out(self.root / "gradebook.db")
        # The scratch course's source/<id>/ holds the release's files alone (course.release_files): nbgrader copies
        # them into the autograded folder, and every sandbox's working folder is made from them (folders.workdir).
        course.copy_tree(self.setup.release_dir, self.root / "source" / self.aid)
        upstream.reuse_gradebook_engines()
        gradebook.scratch_writes("sqlite:///" + str(self.root / "gradebook.db"))

    def _configure(self):
        from nbconvert.preprocessors import ClearMetadataPreprocessor
        from nbgrader.preprocessors import CheckCellMetadata, IgnorePattern, LimitOutput

        from .execute import SandboxExecute

        c = self.config
        c.CourseDirectory.root = str(self.root)
        c.CourseDirectory.db_url = "sqlite:///" + str(self.root / "gradebook.db")
        c.CourseDirectory.assignment_id = self.aid
        c.Autograde.force = True
        c.Autograde.create_student = True
        # nbgrader's own list, less SaveAutoGrades and AssignLatePenalties: their per-cell records would go to this
        # worker's scratch gradebook, which nothing reads; the parent records each student once (gradebook.record:
        # scores from both runs, comments, and the late penalty by the same plugin).
        c.Autograde.autograde_preprocessors = [SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                               CheckCellMetadata]
        c.Execute.timeout = int(self.cell_timeout)
        c.Execute.interrupt_on_timeout = True
        c.SandboxExecute.recorder = self.recorder  # the recorder itself, not a copy (Recorder.__deepcopy__)

    def _matplotlib_cache(self):
        """A folder holding matplotlib's font list: a copy of the run's (`grade` builds it once for all its
        workers), or built here when the setup names none."""
        folder = self.scratch / "matplotlib"
        given = self.setup.matplotlib_cache
        if given and Path(given).is_dir():
            shutil.copytree(given, folder, dirs_exist_ok=True)
            return folder
        return matplotlib_cache(folder)

    # --- one student ------------------------------------------------------------------------------------
    def grade(self, job):
        from .. import readable
        from .scoring import results

        student = job["student"]
        again = bool(job.get("again"))  # graded again, alone: its clean re-run could not finish in the batch
        self.timing.start()
        try:
            result, autograded_dir, html = self._grade(student, job.get("input_dir"), again)
        except Exception:
            error = traceback.format_exc()
            print(error, file=sys.stderr, flush=True)
            notebooks = [results.empty_notebook(n, "grader error", "the grader failed on this submission")
                         for n in self.model.notebooks]
            result, autograded_dir = results.student_result(student, self.aid, notebooks, error=error), None
            html = self._write_feedback(result, {})
        result.seconds = round(self.timing.seconds(), 2)
        print(f"{student}: {result.status} in {result.seconds:.1f} s ({self.timing.text()})", file=sys.stderr,
              flush=True)
        # Learner text in it (an exception's message from the clean re-run) may hold lone surrogates: none leaves.
        return {"student": student, "result": readable.clean(result.to_dict()), "autograded_dir": autograded_dir,
                "html": html, "timing": self.timing.report()}

    def _grade(self, student, input_dir, again):
        """(result, autograded folder or None, feedback page or None) of one student: the submission read and
        checked, the notebook run, each notebook's clean re-run and judgement, then what is kept and shown."""
        from .scoring import results

        input_dir = Path(input_dir) if input_dir else None
        submitted, autograded = self.folders.fresh(student)
        notebooks, present = self.folders.read_submission(input_dir, submitted)
        timestamp = self.folders.copy_extras(input_dir, submitted) if input_dir is not None else None
        shown = {}
        if present:
            error = self.notebook_run.run(student, first=next(iter(present)))
            for nbm in self.model.notebooks:
                if nbm.name in present:
                    notebooks[nbm.name], shown[nbm.name] = self._judge(student, nbm, autograded, present[nbm.name],
                                                                       error, again)
        ordered = [notebooks[n.name] for n in self.model.notebooks]
        result = results.student_result(student, self.aid, ordered, timestamp=timestamp)
        self.folders.settle(autograded)
        started = time.monotonic()
        page = self._write_feedback(result, shown)
        self.timing.since("feedback", started)
        return result, str(autograded) if autograded.is_dir() else None, page

    def _judge(self, student, nbm, autograded_dir, findings, error, again):
        """(the result of notebook `nbm`, the notebook its page shows): both runs judged, what formgrader shows kept."""
        run_info = dict(self.recorder.runs.get(nbm.name, {}))
        executed, notebook = self.notebook_run.graded(student, nbm, autograded_dir, error)
        result = self.clean_rerun.judge(student, nbm, executed, notebook, run_info, findings, error, again)
        self.folders.keep_graded(autograded_dir / f"{nbm.name}.ipynb", notebook, self.course_markdown.get(nbm.name, ()))
        return result, notebook

    def _write_feedback(self, result, notebooks):
        """The student's page (feedback.student_page) in the feedback folder, when the set-up names one."""
        if self.feedback_dir is None:
            return None
        from .gate_out import feedback

        self.feedback_dir.mkdir(parents=True, exist_ok=True)
        target = self.feedback_dir / f"{result.student}.html"
        target.write_text(feedback.student_page(result, notebooks, self.course_markdown), encoding="utf-8")
        return str(target)


def _course_cells_and_prose(course_notebooks):
    """From the course's notebooks ({name: text}): each one's code cells, and each one's own prose, which
    formgrader's notebook may render as written (sanitise.notebook) and the feedback page shows with its formulas
    as MathML."""
    import nbformat

    from .. import cells
    from .gate_out.feedback import course_markdown

    notebooks = {name: nbformat.reads(text, as_version=4) for name, text in course_notebooks.items()}
    return ({name: cells.code_cells(nb) for name, nb in notebooks.items()},
            {name: course_markdown(nb) for name, nb in notebooks.items()})


def cell_timeout(given, config):
    """Seconds each cell may run: `grade --cell-timeout`, else the course's Execute.timeout, else 30."""
    return given or config.Execute.get("timeout", 30) or 30


def matplotlib_cache(folder):
    """Build matplotlib's font list in `folder` (a process of its own) and return the folder: every sandbox starts
    with an empty home, and rebuilding the list costs each kernel that plots about a second."""
    import subprocess

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MPLCONFIGDIR=str(folder), MPLBACKEND="Agg")
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return folder


def _preload(mpl_cache):
    """Import what the course's cells import, once: each judge (a fork of this process) starts with it loaded,
    and with matplotlib's font list read, which it could not write again in its hidden folders."""
    os.environ["MPLCONFIGDIR"], os.environ["MPLBACKEND"] = str(mpl_cache), "Agg"
    import matplotlib.font_manager  # noqa: F401
    import scipy.special  # noqa: F401

    import ffn_helpers
    from ffn_helpers import activations, budgets, checks, examples, ffn, mistakes, module, norm, plots  # noqa: F401

    from .gate_in.sandbox import precompile

    # What each sandboxed kernel imports: `grade` has compiled it already (this checks it is up to date), but a
    # cluster's worker may run on a machine of its own.
    precompile(Path(ffn_helpers.__file__).parent)
    del ffn_helpers


LOG_BUDGET = 256 * 1024  # characters of the log per student (and for the worker's start): an honest one writes a few


class _EscapingWriter(io.TextIOBase):
    """A text stream that writes to another with its control characters made visible (sanitise.for_terminal), and
    at most `budget` characters until renew(): student code can make nbgrader log a line per message it sends."""

    def __init__(self, stream, budget=LOG_BUDGET):
        self._stream, self._budget, self._left = stream, budget, budget

    def renew(self):
        """A new student: a new budget."""
        self._left = self._budget

    def write(self, text):
        if self._left > 0:
            shown = sanitise.for_terminal(text)[:self._left]
            self._left -= len(shown)
            if self._left <= 0:
                shown += f"\n[worker] the log is cut here: more than {self._budget} characters for one student\n"
            self._stream.write(shown)
        return len(text)

    def flush(self):
        self._stream.flush()

    def writable(self):
        return True

    def fileno(self):
        return self._stream.fileno()

    @property
    def encoding(self):
        return self._stream.encoding

    @property
    def errors(self):
        return self._stream.errors


def _escaped_stderr():
    """The one gate to the log: all Python writes to sys.stderr and sys.stdout go through _EscapingWriter."""
    sys.stderr = _EscapingWriter(sys.stderr)
    sys.stdout = sys.stderr
    return sys.stderr


def main():
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # anything printed (nbgrader, the tests' ✔ lines) goes to the log, not the channel
    # Covers what Python writes; a C library or a child process writing to fd 1 or 2 itself is not escaped.
    log = _escaped_stderr()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="[worker] %(levelname)s %(message)s")
    # Expected on every submission, so only noise in the log: nbgrader restoring hidden tests, and
    # SQLAlchemy's autoflush warnings from nbgrader's own gradebook code.
    for handler in logging.getLogger().handlers:
        handler.addFilter(lambda record: "Attribute 'checksum' for cell" not in record.getMessage())
    warnings.filterwarnings("ignore", message=".*not in session, add operation along.*")
    from . import course

    course.ensure_bin_on_path()
    worker = None
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("op") == "setup":
            worker = Worker(WorkerSetup.from_dict(message["setup"]))
            reporter = position.Reporter(channel, [len(nb.cells) for nb in worker.model.notebooks])
            worker.where.report = reporter.at  # where it is, between the replies
            reporter.write({"ready": True})
        elif message.get("op") == "grade" and worker is not None:
            log.renew()
            reporter.write(worker.grade(message))
        elif message.get("op") == "stop":
            break
    channel.close()
    # All it owes is written: each reply on the channel, each student's files in its folder, its log. The
    # interpreter's teardown would only collect a heap nobody reads again: half a second of every worker's end.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
