"""The notebook run: nbgrader's Autograde of one student's notebooks in the worker's scratch course, the kernel in
a sandbox of its own; a kernel that could not even start gets one more chance."""

import io
import logging
import shutil
import sys
import time

from ..dispatch import position


class NotebookRun:
    """nbgrader's Autograde with the worker's configuration `config`, in `folders` (StudentFolders), its kernel in
    one of `sandboxes` (Sandboxes); its stages counted in `timing`, where it is told to `where` (position.Tracker);
    each notebook's run recorded in `recorder` (execute.Recorder, the one `config` hands SandboxExecute)."""

    def __init__(self, config, folders, sandboxes, timing, where, recorder):
        self.config, self.folders, self.sandboxes, self.timing, self.where = config, folders, sandboxes, timing, where
        self.recorder = recorder
        self.last_log = ""  # what nbgrader logged as errors in the last try

    def run(self, student, first):
        """Autograde the student's notebooks (`first`: the first of them), each stage timed. Returns nbgrader's error
        message, or ''."""
        started = time.monotonic()
        self.where.phase(position.NOTEBOOK_RUN, first)  # before the kernel starts
        for _attempt in range(2):
            self.recorder.runs.clear()
            self.sandboxes.clear_slot()
            error = self._autograde(student)
            self._killed_for_memory()
            if "before replying to kernel_info" not in self.last_log:
                break
        self.timing.since("notebook run", started)
        for info in self.recorder.runs.values():
            for stage, seconds in info.get("seconds", {}).items():
                self.timing.add(f"notebook run: {stage}", seconds)
        return error

    def _killed_for_memory(self):
        """Processes the kernel killed for their sandbox's memory (its cgroup's bound) ran out of memory, as a
        MemoryError would have said: the notebook run counts as out of memory (results.py's status), at the cell
        its kernel died in if it died. The notebooks' kernels share the one sandbox's group: each is counted."""
        if self.sandboxes.killed_for_memory():
            for info in self.recorder.runs.values():
                info["memory_errors"].append((info.get("dead") or {}).get("cell"))

    def _autograde(self, student):
        """nbgrader's Autograde for this student in the scratch course; return an error message or ''."""
        from nbgrader.converters import Autograde
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        from ..gate_in.kernel import sandbox_to_json

        work = self.folders.workdir(student, "work")
        runtime = self.folders.scratch / "runtime" / student
        if runtime.exists():
            shutil.rmtree(runtime)
        runtime.mkdir(parents=True)
        config = Config(self.config)
        config.CourseDirectory.student_id = student
        config.SandboxedKernelManager.sandbox_json = sandbox_to_json(self.sandboxes.kernel(work, runtime), runtime)
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

    def graded(self, student, nbm, autograded_dir, error):
        """(the notebook nbgrader's run left, or None, the notebook to show): what it left when it ran without an
        error, else the submission after nbgrader's sanitising steps."""
        import nbformat

        path = autograded_dir / f"{nbm.name}.ipynb"
        executed = nbformat.read(path, as_version=4) if path.is_file() and not error else None
        return executed, executed if executed is not None else self._restored(student, nbm)

    def _restored(self, student, nbm):
        """The submission after nbgrader's sanitising steps, for when nbgrader's own run left nothing."""
        import nbformat
        from nbgrader.preprocessors import ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

        nb = nbformat.read(self.folders.submitted_notebook(student, nbm), as_version=4)
        resources = {"nbgrader": {"notebook": nbm.name, "assignment": self.folders.aid, "student": student,
                                  "db_url": self.config.CourseDirectory.db_url}}
        for pre in (ClearOutput(), DeduplicateIds(), OverwriteKernelspec(), OverwriteCells(add_missing_cells=True)):
            nb, resources = pre.preprocess(nb, resources)
        return nb
