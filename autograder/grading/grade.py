"""`python -m autograder grade ASSIGNMENT SUBMITTED [--out RESULTS]`: grade a class, in parallel and sandboxed.

The parent process (this one) never runs student code. It finds the
submissions, starts N workers (worker.py; each imports nbgrader once and grades
one student at a time in its own scratch course), gives each worker the next
student, kills and replaces a worker that overruns a student's time limit, and
alone writes the course gradebook, the course's autograded/ folders and
RESULTS (default <course>/results/<assignment>): <student>.json, <student>.html, grades.csv (the whole
class, from the gradebook) and graded.ledger (ledger.py: what is already graded, skipped next time).
"""

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import offering, sanitise
from ..schema import Flag, Status, StudentResult
from . import (
    classbook,
    confine,
    course,
    exports,
    gradebook,
    ledger,
    position,
    public,
    results,
    sandbox,
    submissions,
    worker,
)
from .progress import Progress

TICK = 1.0  # seconds between two refreshes of the progress line while students are being graded
STARTUP_TIMEOUT = 600  # seconds for a worker to import nbgrader and copy the course (slow on a loaded machine)
MAX_LINE = 64 * 1024 * 1024  # bytes of one line from a worker (a student's result is a few MiB at most)


def _say(text):
    """A line for the instructor's terminal: what a student named (a zip member, a file) cannot drive it."""
    print(sanitise.for_terminal(text), file=sys.stderr, flush=True)


def banner(lines):
    width = max(len(line) for line in lines) + 4
    return "\n".join(["!" * width, *[f"! {line.ljust(width - 4)} !" for line in lines], "!" * width])


def check_sandbox(limits, unsafe):
    """Refuse to grade without the sandbox unless the instructor says --unsafe; return True to go on."""
    ok, why = sandbox.probe(limits)
    if ok:
        return True
    lines = ["THE GRADING SANDBOX CANNOT BE SET UP ON THIS MACHINE.", *why.splitlines(),
             "Student code would run with your permissions: it could read and overwrite",
             "the gradebook, other students' files and anything else you can reach."]
    if not unsafe:
        _say(banner(lines + ["Refusing to grade. Fix the sandbox, or pass --unsafe to grade anyway",
                             "(memory and CPU limits still apply; isolation does not)."]))
        return False
    _say(banner(lines + ["--unsafe was given: grading WITHOUT isolation."]))
    return True


class WorkerProcess:
    """One worker: a `python -m autograder.grading.worker` child with a JSON-lines channel."""

    def __init__(self, slot, setup, log_path, generation):
        self.slot = slot
        self.home = Path(setup["scratch"]) / f"w{slot}-{generation}"
        # Grading as root, the worker runs as a user of its own (sandbox.worker_uid), which may read only its own
        # folder: what it needs from the course is copied there, and its results are read back from there.
        self.uid = sandbox.worker_uid(slot, setup["uid_base"]) if setup["isolate"] else None
        self.setup = dict(setup, slot=slot, scratch=str(self.home / "scratch"), **_worker_files(setup, self.home))
        confine.hand_over(self.home, self.uid)
        start = confine.worker_start(self.uid, _worker_paths()) if self.uid is not None else confine.fresh_keyring
        self.log = open(log_path, "ab")  # noqa: SIM115 (closed in kill())
        env = {k: v for k, v in os.environ.items() if k != offering.ENV}  # the seed goes in the setup, to the judge
        # TMPDIR: what the worker makes as temporary (its public build of ffn_helpers, ...) is in the run's folder,
        # which grade() removes however the run ends; the worker itself ends with os._exit, cleaning nothing
        env = dict(env, HOME=str(self.home), JUPYTER_RUNTIME_DIR=str(self.home / "jupyter-runtime"),
                   IPYTHONDIR=str(self.home / "ipython"), MPLCONFIGDIR=str(self.home / "matplotlib"),
                   TMPDIR=str(self.home / "tmp"),
                   OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # the jobs use the cores; its judges fork it
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder.grading.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, start_new_session=True,
                                     preexec_fn=start, cwd="/", env=env)
        self.buffer = b""
        self.ready = False
        self.job = None
        self.created = self.started = time.monotonic()  # self.started: of the current job
        self.deadline = time.monotonic() + STARTUP_TIMEOUT
        self.send({"op": "setup", **self.setup})

    def take_in(self, job):
        """A copy of the student's submitted folder in the worker's own (regular files only), or None."""
        if job.folder is None:
            return None
        folder = self.home / "in" / job.student
        course.copy_tree(job.folder, folder)
        confine.hand_over(folder, self.uid)
        return str(folder)

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def fileno(self):
        return self.proc.stdout.fileno()

    def messages(self):
        """Read what is available; return the complete messages, each a JSON object, and drop any other line
        (raise EOFError when the worker is gone, or sends a line longer than MAX_LINE: it is treated as crashed)."""
        data = os.read(self.fileno(), 1 << 20)
        if not data:
            raise EOFError
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        if len(self.buffer) > MAX_LINE or any(len(line) > MAX_LINE for line in lines):
            raise EOFError
        return [m for m in map(_json_object, lines) if m is not None]

    def kill(self):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        self.log.close()

    def ask_to_stop(self):
        """Tell the worker to end once it has answered (stop() then waits for it)."""
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):  # ValueError: stdin closed already
            self.send({"op": "stop"})
            self.proc.stdin.close()

    def stop(self):
        self.ask_to_stop()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _json_object(line):
    """The JSON object a worker's line holds, or None (a compromised worker may send anything)."""
    try:
        message = json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _worker_files(setup, home):
    """Copies, in the worker's folder, of the course files it reads; the setup entries that name them."""
    files = home / "course-files"
    (files / "config").mkdir(parents=True)
    shutil.copyfile(setup["template_db"], files / "template.db")
    shutil.copyfile(Path(setup["course_root"]) / "nbgrader_config.py", files / "config" / "nbgrader_config.py")
    course.copy_tree(setup["release_dir"], files / "release")  # what a learner received: nothing of source/
    given = {}
    if setup.get("matplotlib_cache"):  # built once for the run (_worker_setup); a worker without one builds its own
        course.copy_tree(setup["matplotlib_cache"], files / "matplotlib")
        given["matplotlib_cache"] = str(files / "matplotlib")
    (home / "feedback").mkdir()
    (home / "scratch").mkdir()
    (home / "tmp").mkdir()  # its TMPDIR
    return {"template_db": str(files / "template.db"), "course_root": str(files / "config"),
            "release_dir": str(files / "release"), **given,
            "feedback_dir": str(home / "feedback") if setup["feedback_dir"] else None}


def _worker_paths():
    """What a worker's interpreter must reach: Python, its packages, and the course's own two packages."""
    import autograder
    import ffn_helpers

    return sorted({*sandbox.required_paths(), os.path.dirname(autograder.__file__),
                   os.path.dirname(ffn_helpers.__file__)})


def _report_page(result):
    import nbformat

    from . import feedback

    pages = [feedback.render(nbformat.v4.new_notebook(), nb.to_dict(), result.student) for nb in result.notebooks]
    return "\n<hr>\n".join(pages)


def _failed(model, student, status, message):
    notebooks = [results.empty_notebook(n, status, message) for n in model.notebooks]
    return results.student_result(student, model.name, notebooks, error=message).to_dict()


class _Pool:
    """The workers of one run: hands submissions out, and replaces a worker that crashed or overran."""

    def __init__(self, setup, jobs, timeout, log_dir, model, again=False):
        self.setup, self.timeout, self.log_dir, self.model, self.generation = setup, timeout, log_dir, model, 0
        self.again = again  # the regrade after the batch (see _again_alone)
        self.workers = [self._start(slot) for slot in range(jobs)]

    def _start(self, slot):
        w = WorkerProcess(slot, self.setup, self.log_dir / f"worker-{slot}.log", self.generation)
        w.heard = position.Listener(self.model)  # where it says it is: checked, named from our own model
        return w

    def _replace(self, w):
        w.kill()
        self.generation += 1
        self.workers[self.workers.index(w)] = self._start(w.slot)

    def assign(self, queue):
        for w in self.workers:
            if w.ready and w.job is None and queue:
                w.job = queue.pop(0)
                w.started = time.monotonic()
                w.deadline = w.started + self.timeout
                w.heard.reset()
                w.send({"op": "grade", "student": w.job.student, "input_dir": w.take_in(w.job), "again": self.again})

    def replies(self, w):
        """(submission, reply) for each result worker `w` sent; a worker that died fails its submission."""
        try:
            for message in w.messages():
                if message.get("ready"):
                    w.ready = True
                    with open(self.log_dir / TIMING_LOG, "a", encoding="utf-8") as log:  # its start-up, once
                        log.write(json.dumps({"worker": w.slot, "stages": {
                            "worker start": round(time.monotonic() - w.created, 3)}}) + "\n")
                elif "at" in message:  # where it is (position.py); never a result
                    if w.job is not None:
                        w.heard.hear(message)
                elif w.job is not None and message.get("student") == w.job.student:
                    job, w.job = w.job, None
                    shutil.rmtree(w.home / "in" / job.student, ignore_errors=True)
                    yield job, message
        except EOFError:
            if not w.ready:
                raise RuntimeError(f"worker {w.slot} failed to start; see {self.log_dir}/worker-{w.slot}.log") \
                    from None
            job = w.job
            self._replace(w)
            if job is not None:
                yield job, {"result": _failed(self.model, job.student, "grader error",
                                              "the grading worker crashed on this submission")}

    def running(self):
        """(student, seconds so far, where its grading is or '') of each submission being graded now."""
        now = time.monotonic()
        return [(w.job.student, now - w.started, w.heard.where) for w in self.workers if w.job is not None]

    def overdue(self):
        """(submission, reply) for each submission past its time: its worker is killed and replaced."""
        now = time.monotonic()
        for w in list(self.workers):
            if now < w.deadline or (w.job is None and w.ready):
                continue
            if not w.ready:
                raise RuntimeError(f"worker {w.slot} did not start within {STARTUP_TIMEOUT} s")
            job = w.job
            self._replace(w)
            yield job, {"result": _failed(self.model, job.student, "timeout",
                                          f"grading this submission took longer than {self.timeout:g} s")}


def run_pool(queue, setup, jobs, timeout, log_dir, model, again=False, tick=None):
    """Grade every submission of `queue` with `jobs` workers; yield (submission, worker reply) as each finishes.

    `tick(running)`, if given, is called at least every TICK seconds with _Pool.running().
    """
    queue = list(queue)
    pool = _Pool(setup, min(jobs, len(queue)), timeout, log_dir, model, again)
    try:
        while queue or any(w.job for w in pool.workers):
            pool.assign(queue)
            active = [w for w in pool.workers if w.job or not w.ready]
            if not active:
                break
            wait = max(0.0, min(min(w.deadline for w in active) - time.monotonic(), TICK if tick else 1e9))
            readable, _, _ = select.select(active, [], [], wait)
            for w in readable:
                yield from pool.replies(w)
            yield from pool.overdue()
            if tick:
                tick(pool.running())
    except BaseException:  # Ctrl-C, or the run failed: no worker finishes its student first
        for w in pool.workers:
            w.kill()
        raise
    finally:
        for w in pool.workers:  # all told first: they end side by side
            w.ask_to_stop()
        for w in pool.workers:
            w.stop()


def _publish(config, model, submission, reply, out_dir, gb):
    """Write one student's result everywhere it belongs: JSON, gradebook, the course's folders."""
    result = StudentResult.from_dict(reply["result"], "the worker's result")
    student, aid = result.student, model.name
    root = Path(config.CourseDirectory.root)
    skipped = []
    if submission.folder is not None:
        course_submitted = root / "submitted" / student / aid
        if course_submitted.resolve() != submission.folder.resolve():
            skipped += course.copy_tree(submission.folder, course_submitted)
    if reply.get("autograded_dir") and Path(reply["autograded_dir"]).is_dir():
        skipped += course.copy_tree(reply["autograded_dir"], root / "autograded" / student / aid)
        shutil.rmtree(reply["autograded_dir"], ignore_errors=True)
    elif submission.folder is not None:  # nothing ran (an unreadable notebook): without a folder formgrader
        course.fresh_dir(root / "autograded" / student / aid)  # would list it as "needs autograding"
    for what in skipped[:20]:  # links, FIFOs, devices: never followed or copied, shown to the instructor
        result.flags.append(Flag("review", None, f"not copied: {what}", "the submission's files", notebook=aid))
    gradebook.record(config, result, gb)
    page = out_dir / f"{student}.html"
    if page.exists() or page.is_symlink():
        page.unlink()
    if not reply.get("html") or course.copy_file(Path(reply["html"]), page, 50 * 1024 * 1024)[0]:
        page.write_text(_report_page(result), encoding="utf-8")  # the worker could not write one
    (out_dir / f"{student}.json").write_text(json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n",
                                             encoding="utf-8")
    return result


def grade(assignment_id, submitted, out_dir=None, jobs=None, students=None, limits=None, unsafe=False,
          course_root=None, cell_timeout=None, timeout=900.0, force=False, cluster=None, draw_figures=False):
    """Grade a class; return the student results graded in this run (StudentResult.to_dict's), by student.

    `out_dir` defaults to <course>/results/<assignment>; submissions graded before with the
    same files and course version are skipped unless `force`. grades.csv holds the whole class.
    `cluster`: grade on a Dask cluster (cluster.py: a scheduler's address, or local:N), each worker sandboxed.
    `draw_figures`: the graded notebooks (and so the feedback) hold the course's figures as PNGs, not as their
    text alternatives (slower; no point depends on it).
    """
    course.ensure_bin_on_path()
    limits = limits or sandbox.Limits()
    if not cluster and not check_sandbox(limits, unsafe):  # on a cluster, each worker checks its own
        raise SystemExit(2)
    config = course.load_config(course_root) if course_root else course.load_config()
    out_dir = Path(out_dir or classbook.results_dir(config, assignment_id)).resolve()
    # The run's folder: all it makes as temporary is in here (the workers' TMPDIR, a local cluster's folders), so
    # that removing it in `finally` leaves nothing behind, after Ctrl-C or a killed worker too
    scratch = Path(tempfile.mkdtemp(prefix="ffn-grade-"))
    scratch.chmod(0o711)  # each worker's user reaches its own folder in here, and nothing else
    try:
        found = _found(config, assignment_id, submitted, scratch, students)
        out_dir.mkdir(parents=True, exist_ok=True)
        model = course.prepare_assignment(config, assignment_id, log=_say)
        if not any(c.grade for nb in model.notebooks for c in nb.cells):
            raise ValueError(f"{assignment_id} has no graded cells: there is nothing to grade")
        found, versions = _to_grade(config, model, found, out_dir, force)
        graded = []
        if found:
            setup = _worker_setup(config, model, scratch, limits, unsafe, submitted, out_dir, cell_timeout,
                                  draw_figures)
            if cluster:
                graded = _on_cluster(config, model, found, setup, cluster, timeout, out_dir, versions)
            else:
                jobs = max(1, min(jobs or os.cpu_count() or 1, 64))  # 64: the sandbox uids of one run
                _say(f"grading {len(found)} submission(s) of {assignment_id} with {min(jobs, len(found))} worker(s)"
                     + (" WITHOUT the sandbox" if unsafe else " in the bubblewrap sandbox"))
                graded = _grade_all(config, model, found, setup, jobs, timeout, out_dir)
            _remember(out_dir, graded, versions)
        _write_class_csv(config, assignment_id, out_dir)
        if graded:
            _summary(graded, out_dir)
        else:
            _say(f"nothing new to grade; the class's grades: {out_dir}/grades.csv")
        return [r.to_dict() for r in sorted(graded, key=lambda r: r.student)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _on_cluster(config, model, found, setup, spec, timeout, out_dir, versions):
    """cluster.grade_all, publishing as _grade_all does, the ledger saved after each result (a run started
    again skips what is done)."""
    from . import cluster

    version = next(iter(versions.values()))["course"]
    return cluster.grade_all(config, model, found, setup, spec, timeout, version,
                             record=lambda s, reply, gb: _record(config, model, s, reply, out_dir, gb),
                             remember=lambda result: _remember(out_dir, [result], versions))


def _found(config, assignment_id, submitted, scratch, students):
    """The submissions to consider; refuses an assignment no submission holds, before anything is written."""
    found = submissions.find(submitted, assignment_id, scratch, config, log=_say)
    root = scratch / "unzipped" if Path(submitted).is_file() else Path(submitted)
    notebooks = course.notebook_names(config, assignment_id)
    if notebooks:  # else prepare_assignment says the assignment does not exist
        submissions.require_assignment(found, assignment_id, notebooks, root)
        for s in found:
            missing = [n for n in notebooks if s.folder is not None and not (s.folder / f"{n}.ipynb").is_file()]
            for n in missing:
                _say(f"{s.student}: {submissions.missing_message(s.folder, n)}")
    return _chosen(found, students, submitted)


def _to_grade(config, model, found, out_dir, force):
    """(the submissions to grade, {student: ledger entry}): unchanged ones are left out unless `force`."""
    version = ledger.course_version(model, course.source_texts(config, model.name))
    versions = {s.student: ledger.entry(ledger.submission_digest(s.folder), version) for s in found}
    if force:
        return found, versions
    done = ledger.load(out_dir)
    in_gradebook = gradebook.submitted_students(config, model.name)
    fresh = [s for s in found if not ledger.up_to_date(done, s.student, versions[s.student]["submission"], version,
                                                        out_dir, in_gradebook)]
    unchanged = sorted({s.student for s in found} - {s.student for s in fresh})
    if unchanged:
        _say(f"{len(unchanged)} submission(s) already graded with these files and this course version, left as "
             f"they are ({', '.join(unchanged[:10])}{' ...' if len(unchanged) > 10 else ''}); --force grades "
             "them again")
    return fresh, versions


def _remember(out_dir, graded, versions):
    """Record what was graded, so an unchanged submission is skipped next time (a grader error never is)."""
    done = ledger.load(out_dir)
    for r in graded:
        if r.status == Status.GRADER_ERROR or versions.get(r.student, {}).get("submission") is None:
            done.pop(r.student, None)
        else:
            done[r.student] = versions[r.student]
    ledger.save(out_dir, done)


def _write_class_csv(config, assignment_id, out_dir):
    """grades.csv: every student of the gradebook, whatever this run graded (exports.py's per-exercise CSV)."""
    sheet = classbook.sheet(config, assignment_id, out_dir)
    (out_dir / "grades.csv").write_text(exports.exercises_csv(sheet), encoding="utf-8")


def _chosen(found, students, submitted):
    """The submissions of `students` (all when None); an unknown student id ends the run."""
    if not students:
        return found
    unknown = sorted(set(students) - {s.student for s in found})
    if unknown:
        raise SystemExit(f"no submission for {', '.join(unknown)} in {submitted}")
    return [s for s in found if s.student in set(students)]


def _worker_setup(config, model, scratch, limits, unsafe, submitted, out_dir, cell_timeout, draw_figures=False):
    """What every worker is told at start: the assignment, the limits, and the folders student code must not see."""
    template = scratch / "template.db"
    course.copy_database(course.db_path(config), template)
    sandbox.precompile(public.real_folder())  # the workers may not write there; every sandboxed kernel reads it
    root = Path(config.CourseDirectory.root).resolve()
    return {
        "model": model.to_dict(), "scratch": str(scratch), "limits": vars(limits), "isolate": not unsafe,
        "hidden": sorted({str(root), str(Path(submitted).resolve()), str(out_dir), str(scratch)}),
        "feedback_dir": str(out_dir), "course_notebooks": course.source_texts(config, model.name),
        "template_db": str(template), "release_dir": str(course.copy_release(config, model.name, scratch / "release")),
        "course_root": str(root), "cell_timeout": cell_timeout, "draw_figures": draw_figures,
        "uid_base": sandbox.uid_base(),
        "offering_seed": offering.seed(config),
        # matplotlib's font list, built once here rather than by each worker (and each worker started again)
        "matplotlib_cache": str(worker.matplotlib_cache(scratch / "matplotlib")),
    }


def _grade_all(config, model, found, setup, jobs, timeout, out_dir):
    """Run the pool over `found` and publish each result as it comes; return the StudentResults."""
    log_dir = out_dir / "logs"
    log_dir.mkdir(exist_ok=True)
    progress = Progress(len(found))
    progress.show()
    graded, later = [], []
    with gradebook.open_gradebook(config) as gb, open(log_dir / TIMING_LOG, "a", encoding="utf-8") as timing:
        for submission, reply in run_pool(found, setup, jobs, timeout, log_dir, model, tick=progress.running):
            if unfinished(reply):
                later.append((submission, reply))
                progress.advance(later_line(submission))
                continue
            started = time.monotonic()
            result = _record(config, model, submission, reply, out_dir, gb)
            _log_timing(timing, submission.student, reply, time.monotonic() - started)
            graded.append(result)
            progress.advance(result_line(result))
        graded += _again_alone(config, model, later, setup, timeout, out_dir, gb)
    return graded


TIMING_LOG = "timing.jsonl"  # in the run's logs/: one line per student graded (worker.TIMED_STAGES, and publish)


def _log_timing(log, student, reply, publish):
    """One line of where a student's time went: the worker's figures (numbers only) and this process's publish."""
    stages = reply.get("timing") if isinstance(reply.get("timing"), dict) else {}
    kept = {str(k)[:60]: float(v) for k, v in list(stages.items())[:30]
            if type(v) in (int, float) and 0 <= v < 1e6}
    log.write(json.dumps({"student": student, "stages": dict(kept, publish=round(publish, 3))}) + "\n")
    log.flush()


def _record(config, model, submission, reply, out_dir, gb):
    """_publish, and a `grader error` result in its place when that fails: one student never ends the batch."""
    try:
        return _publish(config, model, submission, reply, out_dir, gb)
    except Exception as exc:
        _say(f"{submission.student}: could not record the result: {exc!r}")
        failed = _failed(model, submission.student, "grader error", f"could not record the result: {exc}")
        result = StudentResult.from_dict(failed)
        with contextlib.suppress(Exception):
            result = _publish(config, model, submission, {"result": failed}, out_dir, gb)
        return result


def result_line(result):
    """What the progress line and the log say of one published result (one machine's and a cluster's alike)."""
    return f"{result.student}: {result.status} {result.score:g}/{result.max_score:g}"


# --- a clean re-run that could not finish: once more, alone --------------------------------------------------
def later_line(submission):
    return f"{submission.student}: clean re-run unfinished, graded again after the batch"


def again_line(later):
    return f"grading {len(later)} submission(s) again, alone: their clean re-run could not finish a test"


def unfinished(reply):
    """True when a test of this result passed the notebook run but got no verdict from the clean re-run."""
    cells = (reply.get("result") or {}).get("cells") or []
    return any(isinstance(c, dict) and c.get("status") == "rerun incomplete" for c in cells)


def _again_alone(config, model, later, setup, timeout, out_dir, gb):
    """Grade each of `later` (submission, first reply) again with one job, after the batch, nothing else of the
    run's going; publish that result (the first, if the regrade itself failed). A test still unfinished then is
    withheld, with a `review` flag: the notebook run alone never earns points."""
    if not later:
        return []
    _say(again_line(later))
    scratch = Path(setup["scratch"]) / "again"
    scratch.mkdir(mode=0o711)
    log_dir = out_dir / "logs"
    replies = {}
    progress = Progress(len(later), what="graded again")
    progress.show()
    try:
        for submission, reply in run_pool([s for s, _ in later], dict(setup, scratch=str(scratch)), 1, timeout,
                                          log_dir, model, again=True, tick=progress.running):
            replies[submission.student] = reply
            progress.advance(submission.student)
    except Exception as exc:  # a regrade that cannot even start must not cost the batch's results
        _say(f"grading again failed ({exc!r}): the batch's results stand")
    graded = []
    for submission, first in later:
        reply = replies.get(submission.student)
        if reply is None or (reply.get("result") or {}).get("status") == Status.GRADER_ERROR:
            reply = first
        result = _record(config, model, submission, reply, out_dir, gb)
        _say(f"  {result_line(result)}"
             + (" (a test still unfinished: withheld, for review)" if unfinished(reply) else ""))
        graded.append(result)
    return graded


def _summary(graded, out_dir):
    by_status = {}
    for r in graded:
        by_status.setdefault(r.status, []).append(r.student)
    counts = sorted(by_status.items(), key=lambda kv: list(Status).index(kv[0]))
    _say(f"graded {len(graded)} submission(s): " + ", ".join(f"{len(v)} {k}" for k, v in counts))
    for status in (Status.FLAGGED, Status.TIMEOUT, Status.OUT_OF_MEMORY, Status.KERNEL_DIED, Status.UNREADABLE,
                   Status.MISSING, Status.GRADER_ERROR):
        if status in by_status:
            _say(f"  {status}: {', '.join(sorted(by_status[status]))}")
    reviews = sorted({r.student for r in graded for f in r.flags if not f.costs_points})
    if reviews:
        _say(f"  to review (no points lost for it): {', '.join(reviews)}")
    _say(f"results: {out_dir}/grades.csv, {out_dir}/<student>.json, {out_dir}/<student>.html")


def main(args):
    limits = sandbox.Limits(memory=sandbox.parse_size(args.memory))
    try:
        grade(args.assignment, args.submitted, args.out, jobs=args.jobs, students=args.student, limits=limits,
              unsafe=args.unsafe, course_root=args.course, cell_timeout=args.cell_timeout, timeout=args.timeout,
              force=args.force, cluster=args.cluster, draw_figures=args.draw_figures)
    except (FileNotFoundError, RuntimeError, ValueError) as exc:
        _say(f"error: {exc}")
        return 2
    return 0
