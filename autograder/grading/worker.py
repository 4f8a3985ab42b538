"""A grading worker: a long-lived process that imports nbgrader once and grades students one at a time.

Each student is graded in the worker's own scratch copy of the course (its own
gradebook, its own submitted/ and autograded/ folders), so nothing a student's
code does can reach the course or another student. Per student:

1. read each notebook (a missing, empty or broken file is a status, not a crash)
   and check its structure against the gradebook (deleted, edited, duplicated cells);
2. the notebook run: nbgrader's Autograde, the kernel in the sandbox;
3. the clean re-run: rerun.CleanRun, in a fresh sandbox;
4. the result (results.combine) and the feedback page.

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
from ..limits import MAX_FILE_BYTES
from . import course
from .dispatch import position
from .worker_setup import WorkerSetup

# Run by each kernel before the notebook, leaving no name behind: OpenBLAS takes its work buffers on the
# first matrix product and ends the process when it cannot, so it takes them before any cell runs.
_KERNEL_STARTUP = """def _grader_warm_up():
    import numpy
    numpy.ones((64, 64)) @ numpy.ones((64, 64))


_grader_warm_up()
del _grader_warm_up
"""
_KERNEL_WORK = "/tmp/work"  # the graded kernel's working folder, inside its sandbox


def _keep_only(folder, names):
    """Leave in `folder` only the files named: formgrader serves whatever autograded/ holds from the Jupyter
    server's own origin, so a student's own HTML or SVG file there would run as the grading account's page."""
    for item in folder.iterdir() if folder.is_dir() else ():
        if item.name not in names or item.is_symlink() or not item.is_file():
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item)
            else:
                item.unlink()


def _check_secret(path):
    """Keep the exchange's secret only as what nbgrader writes (a short hex string): the student's own
    `nbgrader submit` wrote it, and formgrader serves it."""
    if path.is_file() and not path.is_symlink() and path.stat().st_size <= 300:
        if course.is_exchange_secret(path.read_bytes()):
            return
    if path.is_file() or path.is_symlink():
        path.unlink()


class Worker:
    def __init__(self, setup):
        from .course import AssignmentModel
        from .gate_in.sandbox import Limits

        self.setup = setup  # a WorkerSetup
        self.model = AssignmentModel.from_dict(setup.model)
        self.aid = self.model.name
        self.scratch = Path(setup.scratch)
        self.root = self.scratch / "course"
        self.slot, self.uid_base, self.isolate, self.hidden = setup.slot, setup.uid_base, setup.isolate, setup.hidden
        self.last_log = ""
        self.timing = {}
        self.again = False
        self.limits = Limits(**setup.limits)
        self.groups, self.last_group = 0, ()  # the sandboxes' cgroups made so far, and the last one
        self.offering_seed = setup.offering_seed  # autograder/offering.py; only the judge draws with it
        self.feedback_dir = Path(setup.feedback_dir) if setup.feedback_dir else None
        self.course_cells, self.course_markdown = _course_cells_and_prose(setup.course_notebooks)
        self._make_scratch_course()
        self.config = course.load_config(setup.course_root)
        self.mpl_cache = self._matplotlib_cache()
        _preload(self.mpl_cache)
        self.cell_timeout = cell_timeout(setup.cell_timeout, self.config)
        self.figures = "png" if setup.draw_figures else "text"  # each figure drawn, or its text alternative
        self._configure()
        self._start_zygote()
        from . import execute

        self.where = position.Tracker(self.model)  # for the parent's progress line; main() sets its report
        execute.ON_CELL = self.where.notebook_cell

    def _make_scratch_course(self):
        """This worker's own copy of the course: its gradebook (without the hidden tests) and the release's files."""
        from .scoring import gradebook

        self.root.mkdir(parents=True, exist_ok=True)
        course.copy_database(self.setup.template_db, self.root / "gradebook.db")
        course.keep_hidden_tests_out(self.root / "gradebook.db")
        # The scratch course's source/<id>/ holds the release's files alone (course.release_files): nbgrader copies
        # them into the autograded folder, and every sandbox's working folder is made from them (_workdir).
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

    def _start_zygote(self):
        """Kernels and clean runners forked warm into each sandbox (zygote.py), where they can be; each zygote sees
        only the course's environment, with a folder of its own for HOME and TMPDIR (it writes nothing there)."""
        from ffn_helpers.plots import FIGURES_ENV

        from .gate_beside.rerun import runner_source
        from .gate_in import zygote

        if not zygote.usable(self.sandbox("/"), "kernel"):
            return
        home = self.scratch / "zygote"
        home.mkdir(exist_ok=True)
        env = dict(self.sandbox(home).environment(), HOME=str(home), TMPDIR=str(home), IPYTHONDIR=str(home),
                   MPLCONFIGDIR=str(home), JUPYTER_RUNTIME_DIR=str(home), **{FIGURES_ENV: self.figures})
        zygote.start(env, "kernel")
        zygote.start(env, "runner", runner_source())

    def _matplotlib_cache(self):
        """A folder holding matplotlib's font list: a copy of the run's (`grade` builds it once for all its
        workers), or built here when the setup names none."""
        folder = self.scratch / "matplotlib"
        given = self.setup.matplotlib_cache
        if given and Path(given).is_dir():
            shutil.copytree(given, folder, dirs_exist_ok=True)
            return folder
        return matplotlib_cache(folder)

    def _timing(self):
        return ", ".join(f"{k} {v:.1f} s" for k, v in self.timing.items())

    def _stage(self, stage, started):
        """Add the wall seconds since `started` to `stage` of this student's timing (see TIMED_STAGES)."""
        self.timing[stage] = self.timing.get(stage, 0.0) + time.monotonic() - started

    def clear_slot(self):
        """No process of an earlier sandbox may still hold this job slot's uid (and its process count)."""
        from .gate_in.sandbox import clear_uid, slot_uid

        if self.isolate:
            left = clear_uid(slot_uid(self.slot, self.uid_base))
            if left:
                print(f"killed {left} leftover process(es) of an earlier sandbox", file=sys.stderr, flush=True)

    def sandbox(self, cwd, writable=(), readonly=()):
        from .gate_in.sandbox import Sandbox, slot_uid

        uid = slot_uid(self.slot, self.uid_base) if self.isolate else None
        return Sandbox(writable=tuple(map(str, writable)), readonly=tuple(map(str, readonly)), hidden=self.hidden,
                       cwd=str(cwd), uid=uid, limits=self.limits, isolate=self.isolate,
                       env=(("NBGRADER_EXECUTION", "autograde"),))

    def _new_group(self):
        """A cgroup of its own for a new sandbox (cgroups.py), or () where the worker has none. A worker runs one
        sandbox at a time, and asks for the next one's only once the last has ended: the earlier groups go first,
        with whatever still runs in them."""
        from .gate_in import cgroups

        if not self.setup.cgroup:
            return ()
        cgroups.sweep(self.setup.cgroup)
        self.groups += 1
        self.last_group = cgroups.sandbox_group(self.setup.cgroup, f"sb-{self.groups}", self.limits)
        return self.last_group

    def _killed_for_memory(self):
        """Processes the kernel killed for their sandbox's memory (its cgroup's bound) ran out of memory, as a
        MemoryError would have said: the notebook run counts as out of memory (results.py's status), at the cell
        its kernel died in if it died. The notebooks' kernels share the one sandbox's group: each is counted."""
        from . import execute
        from .gate_in import cgroups

        if self.last_group and cgroups.oom_kills(self.last_group):
            for info in execute.LAST_RUN.values():
                info["memory_errors"].append((info.get("dead") or {}).get("cell"))

    # --- one student ------------------------------------------------------------------------------------
    def grade(self, job):
        from .. import readable
        from .scoring import results

        student = job["student"]
        self.again = bool(job.get("again"))  # graded again, alone: its clean re-run could not finish in the batch
        started, cpu = time.monotonic(), _cpu_seconds()
        _forget_peak_memory()
        self.timing = {}
        try:
            result, autograded_dir, html = self._grade(student, job.get("input_dir"))
        except Exception:
            error = traceback.format_exc()
            print(error, file=sys.stderr, flush=True)
            notebooks = [results.empty_notebook(n, "grader error", "the grader failed on this submission")
                         for n in self.model.notebooks]
            result, autograded_dir = results.student_result(student, self.aid, notebooks, error=error), None
            html = self._write_feedback(student, notebooks, {})
        result.seconds = round(time.monotonic() - started, 2)
        print(f"{student}: {result.status} in {result.seconds:.1f} s ({self._timing()})", file=sys.stderr, flush=True)
        spent = [b - a for a, b in zip(cpu, _cpu_seconds(), strict=True)]
        timing = _breakdown(self.timing, time.monotonic() - started, spent)
        timing["worker peak MiB"] = _peak_memory_mib()
        # Learner text in it (an exception's message from the clean re-run) may hold lone surrogates: none leaves.
        return {"student": student, "result": readable.clean(result.to_dict()), "autograded_dir": autograded_dir,
                "html": html, "timing": timing}

    def _grade(self, student, input_dir):
        """(result, autograded folder or None, feedback page or None) of one student: the submission read and
        checked, the notebook run, each notebook's clean re-run and judgement, then what is kept and shown."""
        from .scoring import results

        input_dir = Path(input_dir) if input_dir else None
        submitted, autograded = self._fresh_folders(student)
        notebooks, present = self._read_submission(input_dir, submitted)
        timestamp = self._copy_extras(input_dir, submitted) if input_dir is not None else None
        html = {}
        if present:
            error = self._notebook_run(student, first=next(iter(present)))
            for nbm in self.model.notebooks:
                if nbm.name in present:
                    findings = present[nbm.name]
                    notebooks[nbm.name], html[nbm.name] = self._judge(student, nbm, autograded, findings, error)
        ordered = [notebooks[n.name] for n in self.model.notebooks]
        result = results.student_result(student, self.aid, ordered, timestamp=timestamp)
        _keep_only(autograded, course.autograded_names(self.model))
        _check_secret(autograded / course.SECRET)
        started = time.monotonic()
        page = self._write_feedback(student, ordered, html)
        self._stage("feedback", started)
        return result, str(autograded) if autograded.is_dir() else None, page

    def _fresh_folders(self, student):
        """This student's submitted/ (made empty) and autograded/ (removed) folders in the scratch course: nothing
        of an earlier student graded under the same name is left in either."""
        submitted = self.root / "submitted" / student / self.aid
        autograded = self.root / "autograded" / student / self.aid
        for folder in (submitted, autograded):
            if folder.exists():
                shutil.rmtree(folder)
        submitted.mkdir(parents=True)
        return submitted, autograded

    def _read_submission(self, input_dir, submitted):
        """Each notebook of the submission read, checked against the gradebook and written into `submitted`:
        ({name: empty result} of each missing or unreadable one, {name: its findings} of each one present)."""
        import nbformat

        from . import submissions
        from .scoring import integrity, results

        notebooks, present = {}, {}
        for nbm in self.model.notebooks:
            path = input_dir / f"{nbm.name}.ipynb" if input_dir else None
            if path is None or not (path.is_file() or path.is_symlink()):
                notebooks[nbm.name] = results.empty_notebook(
                    nbm, "missing notebook", submissions.missing_message(input_dir, nbm.name))
                continue
            nb, problem = course.read_notebook(path)
            if nb is None:
                notebooks[nbm.name] = results.empty_notebook(nbm, "unreadable notebook", problem)
                continue
            unreadable = _unreadable_findings(nb, nbm)  # before anything else reads the notebook
            findings, nb = integrity.structure_findings(nb, nbm)
            findings += unreadable
            (submitted / f"{nbm.name}.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
            present[nbm.name] = findings
        return notebooks, present

    def _notebook_run(self, student, first):
        """nbgrader's Autograde of the student's notebooks (`first`: the first of them), each stage of it timed; a
        kernel that could not even start gets one more chance. Returns nbgrader's error message, or ''."""
        from . import execute

        started = time.monotonic()
        self.where.phase(position.NOTEBOOK_RUN, first)  # before the kernel starts
        for _attempt in range(2):
            execute.LAST_RUN.clear()
            self.clear_slot()
            error = self._autograde(student)
            self._killed_for_memory()
            if "before replying to kernel_info" not in self.last_log:
                break
        self._stage("notebook run", started)
        for info in execute.LAST_RUN.values():
            for stage, seconds in info.get("seconds", {}).items():
                self.timing[f"notebook run: {stage}"] = self.timing.get(f"notebook run: {stage}", 0.0) + seconds
        return error

    def _copy_extras(self, input_dir, submitted):
        """Non-notebook files the student submitted (nbgrader keeps them), and the submission's timestamp."""
        from .course import copy_file

        budget, timestamp = MAX_FILE_BYTES, None  # for all of them together
        for item in sorted(input_dir.iterdir()):
            if item.suffix == ".ipynb" or item.is_dir():
                continue
            why, budget = copy_file(item, submitted / item.name, budget)
            if not why and item.name == "timestamp.txt":
                timestamp = (submitted / item.name).read_text(encoding="utf-8", errors="replace").strip()[:100]
        return timestamp

    def _workdir(self, student, kind):
        """A fresh working folder for student code (the notebook run's and the clean re-run's): what it receives.

        Exactly the files the learner received with the assignment (course.release_files, copied
        into the scratch course's source/<id>/ at start) and the submission's own files, never a
        notebook: no authored source, solution or hidden test. Student code never runs in a folder
        that trusted code works in afterwards (nbgrader writes and chmods the autograded folder):
        what it leaves here is only ever deleted.
        """
        from .course import copy_tree

        folder = self.scratch / kind / student
        if folder.exists():
            shutil.rmtree(folder)
        copy_tree(self.root / "source" / self.aid, folder)
        submitted = self.root / "submitted" / student / self.aid
        for item in sorted(submitted.iterdir()) if submitted.is_dir() else ():
            if item.suffix != ".ipynb" and item.is_file() and not item.is_symlink():
                shutil.copyfile(item, folder / item.name)
        for notebook in folder.glob("*.ipynb"):
            notebook.unlink()
        return folder

    def _autograde(self, student):
        """nbgrader's Autograde for this student in the scratch course; return an error message or ''."""
        from nbgrader.converters import Autograde
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        from .gate_in.kernel import sandbox_to_json

        work = self._workdir(student, "work")
        runtime = self.scratch / "runtime" / student
        if runtime.exists():
            shutil.rmtree(runtime)
        runtime.mkdir(parents=True)
        config = Config(self.config)
        config.CourseDirectory.student_id = student
        config.SandboxedKernelManager.sandbox_json = sandbox_to_json(
            self._kernel_sandbox(work, runtime).with_(cgroup=self._new_group()), runtime)
        capture = io.StringIO()  # nbgrader reports some failures only in its log
        handler = logging.StreamHandler(capture)
        handler.setLevel(logging.ERROR)
        logging.getLogger().addHandler(handler)
        try:
            converter = Autograde(coursedir=CourseDirectory(config=config), config=config)
            converter.start()
            return ""
        except BaseException as exc:  # nbgrader ends a failed run with SystemExit-like errors too
            if isinstance(exc, KeyboardInterrupt):
                raise
            print(f"nbgrader autograde failed for {student}: {exc!r}", file=sys.stderr, flush=True)
            return f"{type(exc).__name__}: {exc}"
        finally:
            shutil.rmtree(runtime, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
            self.last_log = capture.getvalue()
            logging.getLogger().removeHandler(handler)

    def _clean_killed_for_memory(self, clean):
        """The clean re-run's tests left without a verdict because the kernel killed processes of its sandbox for
        the sandbox's memory say so, as a MemoryError's message would (results.py's out-of-memory status)."""
        from .gate_in import cgroups

        if self.last_group and cgroups.oom_kills(self.last_group):
            for test in clean.tests.values():
                if test.incomplete:
                    test.message = f"MemoryError: the sandbox's processes together went past its memory; {test.message}"

    def _kernel_sandbox(self, work, runtime):
        """The sandbox of the student's kernel: it is given the working folder `work` and matplotlib's font list,
        and first runs _KERNEL_STARTUP (written into `runtime`, the folder of its connection file)."""
        from ffn_helpers.plots import FIGURES_ENV

        startup = runtime / "00-grader.py"
        startup.write_text(_KERNEL_STARTUP, encoding="utf-8")
        env = (("NBGRADER_EXECUTION", "autograde"), (FIGURES_ENV, self.figures))
        if self.isolate:
            # No folder of the machine is writable in the kernel's sandbox: it works in its own /tmp (memory of a
            # bounded size), where what it was given is shown read-only; of `runtime` it sees its connection file
            # alone, read-only too, and it binds its sockets in that /tmp (kernel.py).
            given = [(f, f"{_KERNEL_WORK}/{f.relative_to(work).as_posix()}") for f in sorted(work.rglob("*"))
                     if f.is_file() and not f.is_symlink()]
            given += [(f, f"/tmp/matplotlib/{f.name}") for f in sorted(self.mpl_cache.iterdir()) if f.is_file()]
            given.append((startup, "/tmp/ipython/profile_default/startup/00-grader.py"))
            return self.sandbox(_KERNEL_WORK).with_(env=env, in_tmp=tuple((str(f), target) for f, target in given))
        # A learner's `check` without the sandbox: its folders on the machine, as any local kernel's.
        mpl, ipython = runtime / "matplotlib", runtime / "ipython"
        shutil.copytree(self.mpl_cache, mpl)
        (ipython / "profile_default" / "startup").mkdir(parents=True)
        shutil.copyfile(startup, ipython / "profile_default" / "startup" / startup.name)
        return self.sandbox(work, writable=(work, runtime)).with_(
            env=env + (("MPLCONFIGDIR", str(mpl)), ("IPYTHONDIR", str(ipython))))

    def _restored(self, student, nbm):
        """The submission after nbgrader's sanitising steps, for when nbgrader's own run left nothing."""
        import nbformat
        from nbgrader.preprocessors import ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

        path = self.root / "submitted" / student / self.aid / f"{nbm.name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        resources = {"nbgrader": {"notebook": nbm.name, "assignment": self.aid, "student": student,
                                  "db_url": self.config.CourseDirectory.db_url}}
        for pre in (ClearOutput(), DeduplicateIds(), OverwriteKernelspec(), OverwriteCells(add_missing_cells=True)):
            nb, resources = pre.preprocess(nb, resources)
        return nb

    def _judge(self, student, nbm, autograded_dir, findings, error):
        import nbformat

        from .. import cells, sanitise
        from ..schema import Status
        from . import execute
        from .gate_out import feedback
        from .scoring import integrity, results

        path = autograded_dir / f"{nbm.name}.ipynb"
        run_info = dict(execute.LAST_RUN.get(nbm.name, {}))
        executed = None
        if path.is_file() and not error:
            executed = nbformat.read(path, as_version=4)
        notebook = executed if executed is not None else self._restored(student, nbm)
        code = cells.code_cells(notebook)
        course_cells = self.course_cells.get(nbm.name, [])
        findings = list(findings) + integrity.static_findings(code, course_cells)
        references = {c.exercise: integrity.reference_names(c.exercise) for c in code if c.role == "answer"}
        rerun_dir = self._workdir(student, "rerun")
        sandbox = self.sandbox(rerun_dir, readonly=(rerun_dir,), writable=()).with_(cgroup=self._new_group())
        started = time.monotonic()
        # A test that timed out in the notebook run has nothing to gain here (it earns the minimum of both runs).
        # One the clean re-run cannot finish (a busy machine) is left to `grade`, which grades its student again,
        # alone, after the batch (`again`).
        looped = results.notebook_run_timeouts(executed, run_info) if executed is not None else set()
        self.where.phase(position.CLEAN_RERUN, nbm.name)  # before its process starts
        clean = self._clean_run(code, sandbox, references, course_cells, self.cell_timeout, looped,
                                self.where.clean_positions(nbm, code))
        self._clean_killed_for_memory(clean)
        self._stage("clean re-run", started)
        shutil.rmtree(rerun_dir, ignore_errors=True)
        result, findings = results.combine(nbm, executed, run_info if executed is not None else {}, clean, findings,
                                           again=self.again)
        if error and executed is None:
            result.status, result.error = Status.worst([result.status, Status.GRADER_ERROR]), error
        result.course_errors = [f"{label}: {message}" for label, message in clean.course_errors]
        started = time.monotonic()
        page = (feedback.render(notebook, result.to_dict(), student, self.course_markdown.get(nbm.name, frozenset()))
                if self.feedback_dir else None)
        self._stage("feedback", started)
        if path.is_file() or path.is_symlink():  # what formgrader shows the instructor: through the sanitiser
            path.unlink()
            path.write_text(nbformat.writes(sanitise.notebook(notebook, self.course_markdown.get(nbm.name, ()))),
                            encoding="utf-8")
        return result, page

    def _clean_run(self, code, sandbox, references, course_cells, timeout, notebook_timeouts=(), at=None):
        """rerun.CleanRun in a confined child of this process (judge.py); a second try if it cannot finish.

        When neither try gives a verdict, no test earns a point from the clean re-run (its
        message says why): the notebook run alone is never trusted with points.
        """
        from .gate_beside import judge
        from .gate_beside.rerun import CleanRun, CleanRunResult, StudentProcess, TestResult
        from .gate_in.sandbox import worker_uid

        tests = {c.grade_id: (c.exercise, c.points) for c in course_cells if c.role == "test" and c.grade_id}
        exercises = {c.grade_id for c in course_cells if c.role == "answer"}
        budget = 120 + 2 * timeout * (len(code) + 2)
        uid = worker_uid(self.slot, self.uid_base) if self.isolate else None  # None: this worker dropped its rights

        def work(student):  # in the judge: the one process that runs the hidden tests gets the offering's seed
            from ffn_helpers import checks

            checks.set_offering_seed(self.offering_seed)
            return CleanRun(code, sandbox, timeout, references, course_cells, student=student,
                            notebook_timeouts=notebook_timeouts,
                            on_cell=(lambda cell: student.at(at(cell))) if at else None).run()

        why = ""
        for attempt in range(2):
            self.clear_slot()
            try:
                data = judge.run(work, StudentProcess(sandbox), uid=uid, memory=judge.MEMORY, timeout=budget,
                                 hidden=self.hidden, isolate=self.isolate, on_at=self.where.report if at else None)
                return judge.verdict(data, tests, exercises)
            except (judge.JudgeFailed, ValueError, OSError) as exc:
                why = str(exc)
                print(f"clean re-run without a verdict (try {attempt + 1}): {why}", file=sys.stderr, flush=True)
        clean = CleanRunResult()
        for gid, (exercise, top) in tests.items():
            clean.tests[gid] = TestResult(gid, exercise, top, 0.0, f"the clean re-run could not finish: {why[:500]}",
                                          incomplete=True)
        return clean

    def _write_feedback(self, student, notebooks, pages):
        if self.feedback_dir is None:
            return None
        from .. import readable
        from .gate_out import feedback

        parts = []
        for nb_result in notebooks:
            page = pages.get(nb_result.notebook)
            if page is None:  # nothing to show but the report
                import nbformat

                page = feedback.render(nbformat.v4.new_notebook(), nb_result.to_dict(), student)
            parts.append(page)
        self.feedback_dir.mkdir(parents=True, exist_ok=True)
        target = self.feedback_dir / f"{student}.html"
        page = parts[0] if len(parts) == 1 else "\n<hr>\n".join(parts)
        target.write_text(readable.clean_text(page), encoding="utf-8")
        return str(target)


# What a worker's reply says of where one student's time went (wall seconds, and CPU seconds of the worker itself
# and of its children it reaped: the judges, and the sandboxes' bwrap; not the kernel or the learner's process,
# which a sandbox's kill leaves to the system). The bench reads them from the run's logs/timing.jsonl.
TIMED_STAGES = ("notebook run", "notebook run: kernel start", "notebook run: cells", "notebook run: kernel stop",
                "clean re-run", "feedback")


def _cpu_seconds():
    """(CPU seconds of this process, of its reaped children): os.times, which Windows has too (no `resource`)."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


def _forget_peak_memory():
    """Start this process's peak resident memory (VmHWM) anew, so that each student's is their own (Linux: writing
    5 to clear_refs resets it). Where that is refused (a worker graded as root runs as a user of its own, and the
    kernel then gives its /proc files to root) or there is no /proc, the peak stays the worker's since it started."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        pass


def _peak_memory_mib():
    """This process's peak resident memory (since _forget_peak_memory where it could reset it), in MiB: the worker
    reports its own, no cgroup needed. -1 where the system does not say (no /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return round(next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024, 1)
    except (OSError, StopIteration, ValueError):
        return -1


def _breakdown(timing, total, cpu):
    """One student's timing: each stage's wall seconds, nbgrader's own part of the notebook run, the rest."""
    out = {stage: round(timing.get(stage, 0.0), 3) for stage in TIMED_STAGES}
    run = timing.get("notebook run", 0.0)
    out["notebook run: nbgrader"] = round(max(0.0, run - sum(v for k, v in timing.items()
                                                             if k.startswith("notebook run: "))), 3)
    out["other"] = round(max(0.0, total - run - timing.get("clean re-run", 0.0) - timing.get("feedback", 0.0)), 3)
    out["total"] = round(total, 3)
    out["worker cpu"], out["reaped children cpu"] = round(cpu[0], 3), round(cpu[1], 3)
    return out


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


def _unreadable_findings(nb, nbm):
    """readable.screen on a submitted notebook: each code cell the grader cannot read, as a review finding."""
    from .. import readable
    from ..schema import Flag

    exercise_of = nbm.exercise_of
    findings = []
    for i, why in readable.screen(nb):
        name = nb.cells[i].get("metadata", {}).get("nbgrader", {}).get("grade_id")
        where = f"cell {name}" if name in exercise_of else f"cell {i}"
        findings.append(Flag("review", exercise_of.get(name), f"this cell could not be read: {why}; "
                             "it was graded as a cell that fails", where))
    return findings


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
