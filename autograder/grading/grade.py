"""`python -m autograder grade ASSIGNMENT SUBMITTED [--out RESULTS]`: grade a class, in parallel and sandboxed.

The parent process (this one) never runs student code. It finds the submissions, leaves out what
the ledger says is graded already, and hands the rest to dispatch/driver.py, which grades them
through a backend (dispatch/pool.py's workers on this machine, or dispatch/cluster.py's Dask
cluster) and checks every reply (dispatch/replies.py). It alone writes the course gradebook, the
course's autograded/ folders and RESULTS (default <course>/results/<assignment>): <student>.json,
<student>.html, grades.csv (the whole class, from the gradebook) and graded.ledger (scoring/ledger.py).
"""

import contextlib
import faulthandler
import json
import os
import shutil
import signal
import sys
from pathlib import Path

from .. import COURSE_ROOT, offering, private, sanitise
from ..limits import MAX_FILE_BYTES, STUDENT_TIMEOUT_SECONDS
from ..schema import Flag, Status, StudentResult
from . import check_cache, course, intake, submissions, tempfolders, worker
from .dispatch import driver, pool
from .gate_beside import public
from .gate_in import cgroups, sandbox, unsandboxed
from .gate_out import exports, feedback
from .scoring import classbook, gradebook, ledger, results
from .worker_setup import WorkerSetup

STOPPED_STATUS = 130  # 128 + SIGINT: what a shell reports of a command that Ctrl-C ended


def stopped(force=False):
    """What a run stopped by Ctrl-C says: what it kept, and how to go on (--force would grade everyone again)."""
    again = "the same command without --force" if force else "the same command"
    return (f"stopped by Ctrl-C. Each submission graded before it stays graded; {again} grades the others, and then "
            f"writes grades.csv (a stopped run leaves it as it was).")


def _say(text):
    """A diagnostic line for the instructor's terminal (stderr): what a student named (a zip member, a file) cannot
    drive it."""
    print(sanitise.for_terminal(text), file=sys.stderr, flush=True)


def _tell(text):
    """A line of the run's results (stdout, so that `> log` keeps them): each student's grade, the due date and who
    was late, the summary."""
    print(sanitise.for_terminal(text), flush=True)


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


def say_without_cgroups():
    """Make the run's cgroups; where none can be made here, one line naming the limits that then do not hold."""
    why = cgroups.start_run()
    if why:
        _say(unsandboxed.not_held_line([cgroups.not_held(why)], "Each process's own limits hold (its memory, CPU "
                                       "time, file size and open files, and its user's number of processes)."))


def _publish(config, model, submission, reply, out_dir, gb):
    """Write one student's result everywhere it belongs: JSON, gradebook (its late penalty published), the course's
    folders, the page (with the grade the gradebook gives)."""
    result = StudentResult.from_dict(reply["result"], "the worker's result")
    student, aid = result.student, model.name
    root = Path(config.CourseDirectory.root)
    skipped = []
    if submission.folder is not None:
        course_submitted = root / "submitted" / student / aid
        if course_submitted.resolve() != submission.folder.resolve():
            skipped += course.copy_tree(submission.folder, course_submitted)
        private.tighten(private.folder(root / "submitted") / student)
    if reply.get("autograded_dir") and Path(reply["autograded_dir"]).is_dir():
        skipped += course.copy_tree(reply["autograded_dir"], root / "autograded" / student / aid)
        shutil.rmtree(reply["autograded_dir"], ignore_errors=True)
    elif submission.folder is not None:  # nothing ran (an unreadable notebook): without a folder formgrader
        course.fresh_dir(root / "autograded" / student / aid)  # would list it as "needs autograding"
    _stand_ins(config, result, root / "autograded" / student / aid)
    private.tighten(private.folder(root / "autograded") / student)
    for what in skipped[:20]:  # links, FIFOs, devices: never followed or copied, shown to the instructor
        result.flags.append(Flag("review", None, f"not copied: {what}", "the submission's files", notebook=aid))
    _settled_then_replaced(result, out_dir, gb)
    gradebook.record(config, result, gb)
    gradebook.publish_late(config, gb, aid, student)
    page = out_dir / f"{student}.html"
    if page.exists() or page.is_symlink():
        page.unlink()
    if not reply.get("html") or course.copy_file(Path(reply["html"]), page, MAX_FILE_BYTES)[0]:
        private.write_text(page, feedback.student_page(result))  # the worker could not write one
    feedback.set_grade(page, classbook.student_row(gb, aid, student, result))
    private.write_text(out_dir / f"{student}.json", json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n")
    return result


def _settled_then_replaced(result, out_dir, gb):
    """A notebook the grader could not read, which the instructor graded by hand, now replaced by a readable file:
    the hand points and comments were for the stand-in, not for this file, so they go, and the terminal says so
    (kept, the export would give the old points while the page gives the new file's)."""
    try:
        before = json.loads((out_dir / f"{result.student}.json").read_text(encoding="utf-8"))
        was = {nb["notebook"]: nb["status"] for nb in before.get("notebooks", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    for nb in result.notebooks:
        if was.get(nb.notebook) == Status.UNREADABLE and nb.status != Status.UNREADABLE and \
                gradebook.clear_hand_grading(gb, result.assignment, result.student, nb.notebook):
            _say(f"{result.student}: the points and comments given by hand to the unreadable {nb.notebook}.ipynb "
                 "were for a file now replaced by a readable one: cleared, the new file graded as it is")


def grade(assignment_id, submitted, out_dir=None, jobs=None, students=None, limits=None, unsafe=False,
          course_root=None, cell_timeout=None, timeout=STUDENT_TIMEOUT_SECONDS, force=False, cluster=None,
          draw_figures=False):
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
    # The run's folder: what it makes as temporary is in here (the workers' TMPDIR, a local cluster's folders), so
    # that removing it in `finally` leaves nothing behind, after Ctrl-C or a killed worker too (and after a
    # killed `grade`, the next run: tempfolders). A cluster's submissions are read into memory to be sent
    # (cluster.submission_files), never copied to disk first.
    scratch = tempfolders.make("grade", 0o711)  # each worker's user reaches its own folder in here, and nothing else
    try:
        if not cluster:  # a cluster's workers are bounded by their own machines'
            say_without_cgroups()
        found = _found(config, assignment_id, submitted, scratch, students)
        _refuse_a_stale_source(config, assignment_id)
        model = course.prepare_assignment(config, assignment_id, log=_say)
        if not any(c.grade for nb in model.notebooks for c in nb.cells):
            raise ValueError(f"{assignment_id} has no graded cells: there is nothing to grade")
        private.folder(out_dir)  # only now: a run refused above leaves no folder behind
        gradebook.keep_private(config)
        scored = {"sandbox": vars(limits), "cell timeout": worker.cell_timeout(cell_timeout, config),
                  "student timeout": float(timeout)}  # what the workers get that can change a score
        found, versions = _to_grade(config, model, found, out_dir, force, scored)
        graded = []
        if found:
            setup = _worker_setup(config, model, scratch, limits, unsafe, submitted, out_dir, cell_timeout,
                                  draw_figures)
            graded = _grade_found(config, model, found, setup, out_dir, versions, jobs, timeout, cluster, unsafe)
        _write_class_csv(config, assignment_id, out_dir)
        private.tighten(out_dir)  # the workers' logs and the timing log too
        if graded:
            _summary(graded, out_dir)
        else:
            _tell(f"nothing new to grade; the class's grades: {out_dir}/grades.csv")
        return [r.to_dict() for r in sorted(graded, key=lambda r: r.student)]
    finally:
        cgroups.end_run()  # the run's cgroups, and whatever still runs in them
        shutil.rmtree(scratch, ignore_errors=True)


def _grade_found(config, model, found, setup, out_dir, versions, jobs, timeout, cluster, unsafe):
    """driver.grade_class through the backend asked for, each result published and remembered as it comes."""
    log_dir = private.folder(out_dir / "logs")
    with contextlib.ExitStack() as stack:
        if cluster:
            from .dispatch.cluster import Cluster

            version = next(iter(versions.values()))["course"]
            backend = stack.enter_context(Cluster(model, setup, cluster, timeout, version))
        else:
            jobs = max(1, min(jobs or os.cpu_count() or 1, sandbox.MAX_SLOTS, len(found)))
            _say(f"grading {len(found)} submission(s) of {model.name} with {jobs} worker(s)"
                 + (" WITHOUT the sandbox" if unsafe else " in the bubblewrap sandbox"))
            backend = pool.LocalPool(setup, jobs, timeout, log_dir, model)
        gb = stack.enter_context(gradebook.open_gradebook(config))

        def record(submission, reply):
            result = _record(config, model, submission, reply, out_dir, gb)
            _remember(out_dir, [result], versions)  # saved after each: a run started again skips what is done
            return result

        return driver.grade_class(backend, found, model, record, log_dir, _say,
                                  line=lambda result: classbook.result_line(gb, result), tell=_tell)


def _refuse_a_stale_source(config, assignment_id):
    """The course's own assignments are graded only against a source notebook built from today's authored .py."""
    if Path(config.CourseDirectory.root).resolve() != COURSE_ROOT.resolve():
        return  # another course's sources have no authored .py of ours
    from ..authoring import build

    stale = build.stale_source(assignment_id)
    if stale:
        raise ValueError(stale)


def _found(config, assignment_id, submitted, scratch, students):
    """The submissions to consider; refuses an assignment no submission holds, before anything is written."""
    found = submissions.find(submitted, assignment_id, scratch, config, log=_say,
                             course_root=config.CourseDirectory.root)
    root = scratch / "unzipped" if Path(submitted).is_file() else Path(submitted)
    notebooks = course.notebook_names(config, assignment_id)
    if notebooks:  # else prepare_assignment says the assignment does not exist
        submissions.require_assignment(found, assignment_id, notebooks, root, config.CourseDirectory.root,
                                       archive=submitted if Path(submitted).is_file() else None)
        for s in found:
            missing = [n for n in notebooks if s.folder is not None and not (s.folder / f"{n}.ipynb").is_file()]
            for n in missing:
                _say(f"{s.student}: {submissions.missing_message(s.folder, n)}")
    return _chosen(found, students, submitted)


def _to_grade(config, model, found, out_dir, force, limits):
    """(the submissions to grade, {student: ledger entry}): unchanged ones are left out unless `force`; each
    student graded again is named with why (ledger.why_grade), new ones on one line."""
    version = _course_version(config, model, limits)
    versions = {s.student: ledger.submission_entry(s.folder, version) for s in found}
    done = ledger.load(out_dir)
    in_gradebook = gradebook.submitted_students(config, model.name)
    why = {s.student: ledger.why_grade(done, s.student, versions[s.student], out_dir, in_gradebook, force)
           for s in found}
    fresh = [s for s in found if why[s.student]]
    unchanged = sorted(s.student for s in found if not why[s.student])
    if unchanged:
        _say(f"{len(unchanged)} submission(s) already graded with these files and this course version, left as "
             f"they are ({_some(unchanged)}); --force grades them again")
    new = sorted(s.student for s in fresh if why[s.student] == "new submission")
    if new:
        _say(f"{len(new)} new submission(s): {_some(new)}")
    for s in fresh:
        if why[s.student] != "new submission":
            _say(f"{s.student}: graded again: {why[s.student]}")
    return fresh, versions


def _some(students):
    return ", ".join(students[:10]) + (" ..." if len(students) > 10 else "")


def _course_version(config, model, limits):
    """ledger.course_version of this run: the code, the assignment as sourced and released, the limits (`limits`:
    what the workers get that can change a score) and the offering's seed (keyed)."""
    released = course.release_files(config, model.name)
    released += [(f"release notebook {p.name}", p) for p in course.release_notebooks(config, model.name)]
    seed = ledger.offering_digest(offering.seed(config), config.CourseDirectory.root)
    return ledger.course_version(model, course.source_texts(config, model.name), released, limits, seed)


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
    """grades.csv: every student of the gradebook, whatever this run graded (exports.py's per-exercise CSV); the
    names the downloads gave kept in the gradebook; each page's grade as grades.csv gives it; the due date, who
    was late and who the LMS marked late, on the terminal."""
    lms = intake.roster(config.CourseDirectory.root, assignment_id)
    gradebook.add_names(config, {s: intake.display_name(e) for s, e in lms.items()})
    sheet = classbook.sheet(config, assignment_id, out_dir)  # the late penalties as of the due date of now
    private.write_text(out_dir / "grades.csv", exports.exercises_csv(sheet))
    for row in sheet.rows:
        feedback.set_grade(out_dir / f"{row.student}.html", row)
    for line in exports.late_lines(sheet):
        _tell(line)


UNREADABLE_NOTE = ("**The notebook submitted as `{name}` could not be read** (its status and why are in the grader's "
                   "results, `{student}.json`; the file itself is in `submitted/{student}/`). The cells below are the "
                   "released notebook, not the student's work: give the points and a comment by hand, here.")


def _stand_ins(config, result, autograded):
    """In autograded/, the released notebook with a first cell that says so, for each notebook of `result` that
    could not be read: formgrader then lists the submission and shows a page with every graded cell, where the
    instructor gives points and comments, and generate_feedback writes its page (without a file, formgrader shows
    "(file missing)" and both leave the student out)."""
    import nbformat

    released = {p.stem: p for p in course.release_notebooks(config, result.assignment)}
    for nb in result.notebooks:
        target = autograded / f"{nb.notebook}.ipynb"
        if nb.status != Status.UNREADABLE or nb.notebook not in released or target.exists() or target.is_symlink():
            continue
        stand_in = nbformat.read(released[nb.notebook], as_version=4)
        note = nbformat.v4.new_markdown_cell(UNREADABLE_NOTE.format(name=f"{nb.notebook}.ipynb",
                                                                    student=result.student))
        note.metadata[feedback.INSTRUCTOR_NOTE] = True  # generate_feedback shows the student another text
        stand_in.cells.insert(0, note)
        private.folder(autograded)
        private.write_text(target, nbformat.writes(stand_in))


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
    return WorkerSetup.for_run(
        model=model.to_dict(), scratch=scratch, course_root=config.CourseDirectory.root,
        release_dir=course.copy_release(config, model.name, scratch / "release"), template_db=template,
        course_notebooks=course.source_texts(config, model.name), limits=vars(limits), isolate=not unsafe,
        offering_seed=offering.seed(config), hide=(submitted, check_cache.folder()), feedback_dir=out_dir,
        cell_timeout=cell_timeout, draw_figures=draw_figures, uid_base=sandbox.uid_base(),
        # matplotlib's font list, built once for the user rather than by each worker (and each worker started again)
        matplotlib_cache=str(check_cache.matplotlib_fonts(scratch / "matplotlib")),
    )


def _record(config, model, submission, reply, out_dir, gb):
    """_publish, and a `grader error` result in its place when that fails: one student never ends the batch."""
    try:
        return _publish(config, model, submission, reply, out_dir, gb)
    except Exception as exc:
        _say(f"{submission.student}: could not record the result: {exc!r}")
        failed = results.failed(model, submission.student, "grader error", f"could not record the result: {exc}")
        result = StudentResult.from_dict(failed)
        with contextlib.suppress(Exception):
            result = _publish(config, model, submission, {"result": failed}, out_dir, gb)
        return result


def _summary(graded, out_dir):
    by_status = {}
    for r in graded:
        by_status.setdefault(r.status, []).append(r.student)
    counts = sorted(by_status.items(), key=lambda kv: list(Status).index(kv[0]))
    _tell(f"graded {len(graded)} submission(s): " + ", ".join(f"{len(v)} {k}" for k, v in counts))
    for status in (Status.FLAGGED, Status.TIMEOUT, Status.OUT_OF_MEMORY, Status.KERNEL_DIED, Status.UNREADABLE,
                   Status.MISSING, Status.GRADER_ERROR):
        if status in by_status:
            _tell(f"  {status}: {', '.join(sorted(by_status[status]))}")
    reviews = sorted({r.student for r in graded for f in r.flags if not f.costs_points})
    if reviews:
        _tell(f"  to review (no points lost for it): {', '.join(reviews)}")
    _tell(f"results: {out_dir}/grades.csv, {out_dir}/<student>.json, {out_dir}/<student>.html")


def main(args):
    # `kill -USR1 <pid>` prints where each thread of the run is, on stderr: for a run that seems stuck
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    limits = sandbox.Limits(memory=sandbox.parse_size(args.memory))
    try:
        grade(args.assignment, args.submitted, args.out, jobs=args.jobs, students=args.student, limits=limits,
              unsafe=args.unsafe, course_root=args.course, cell_timeout=args.cell_timeout, timeout=args.timeout,
              force=args.force, cluster=args.cluster, draw_figures=args.draw_figures)
    except (FileNotFoundError, RuntimeError, ValueError) as exc:
        _say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:  # everything it started is gone by now (run_pool, and grade's own `finally`)
        if sys.stderr.isatty():
            print(file=sys.stderr)  # below the progress line, which stays as it was when the run stopped
        _say(stopped(args.force))
        return STOPPED_STATUS
    return 0
