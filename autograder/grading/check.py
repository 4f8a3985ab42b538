"""`python -m autograder check NOTEBOOK.ipynb`: grade one notebook against the instructor source.

The assignment is read from the file's name (`02_forward_pass.ipynb`, also
`02_forward_pass-Copy1.ipynb`), or given with `--assignment`. The notebook is graded
exactly as `grade` grades a class, clean re-run included, in a throw-away copy of the
course built from the authored source; the build is kept in the user's cache folder
for the next check (check_cache.py), and nothing is written anywhere else. It runs in
the sandbox where one can be built; a learner's own notebook on their own machine
needs none, so without one it says so in a line and runs anyway (`grade` refuses), on
Linux, macOS and Windows; a second line names the limits that system cannot hold
(unsandboxed.py).

It prints one line per exercise (points, and the first line of the first failing
message), or with `--json` the result as `grade` writes it (<student>.json). Exit status:
0 full marks, 1 points lost (or the notebook could not be graded), 2 bad input.
"""

import contextlib
import io
import json
import os
import re
import shutil
import sys
import time
import warnings
from pathlib import Path

from .. import COURSE_ROOT, assignments, offering
from ..cells import assignment_of_answers, is_solution
from . import course, tempfolders
from .dispatch.driver import unfinished
from .gate_in import sandbox, unsandboxed

FULL_MARKS, POINTS_LOST, BAD_INPUT = 0, 1, 2
# Names a file `check` writes its stages' wall seconds to, as JSON (benchmarks/bench_check.py reads it).
TIMING_ENV = "FFN_CHECK_TIMING"


class Clock:
    """The wall seconds of each stage of one check, in order; the grading worker's own stages under "worker"."""

    def __init__(self):
        self.started_at, self.stages, self._last = time.time(), {}, time.monotonic()

    def lap(self, stage):
        now = time.monotonic()
        self.stages[stage] = round(self.stages.get(stage, 0.0) + now - self._last, 3)
        self._last = now

    def write(self, path):
        Path(path).write_text(json.dumps({"main entered": self.started_at, "stages": self.stages}), encoding="utf-8")


class BadInput(ValueError):
    """What `check` was given cannot be checked: the message says what was expected and what came."""


def assignment_of(path, assignment=None):
    """The assignment a notebook belongs to: `assignment` if given, else the id its file name starts with."""
    known = assignments()
    if assignment is not None:
        if assignment not in known:
            raise BadInput(f"--assignment should be one of {', '.join(known)}; got {assignment!r}")
        return assignment
    stem = Path(path).name.removesuffix(".ipynb")
    # Longest first: a copy JupyterLab or a download made keeps the id at the start ("02_forward_pass-Copy1").
    for aid in sorted(known, key=len, reverse=True):
        if stem == aid or stem.startswith(aid):
            return aid
    raise BadInput(f"cannot tell which assignment {Path(path).name!r} is: expected a name that starts with an "
                   f"assignment id ({', '.join(known)}), such as 02_forward_pass-Copy1.ipynb; "
                   "or say which with --assignment 02_forward_pass")


def read_notebook(path):
    """The notebook at `path`, read as `grade` reads it (course.read_notebook); BadInput saying what is wrong."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path} does not exist: expected the path of your notebook, e.g. "
                       "my-notebooks/02_forward_pass.ipynb")
    if path.is_dir():
        raise BadInput(f"{path} is a folder: expected a notebook file in it, e.g. {path / '02_forward_pass.ipynb'}")
    if path.suffix != ".ipynb":
        raise BadInput(f"expected a Jupyter notebook (a .ipynb file), got {path.name!r}")
    nb, why = course.read_notebook(path.resolve())  # grade's own reader; the learner's link to their own file is fine
    if nb is None:
        raise BadInput(f"{path} is not a readable Jupyter notebook ({why}); was it saved completely? JupyterLab's "
                       "File > Save Notebook writes it again")
    return nb


def _is_of(nb, path, assignment_id):
    """BadInput when the notebook's answer cells are another assignment's (03's notebook saved as 02's name)."""
    answers = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells if is_solution(c)]
    holds = assignment_of_answers(answers, expected=assignment_id)
    if holds is not None and holds != assignment_id:
        raise BadInput(f"{path.name} holds the exercises of {holds}, not of {assignment_id}: check it with "
                       f"--assignment {holds}, or check {assignment_id}'s own notebook")


def use_sandbox(limits, say=print):
    """True where the sandbox can be built; otherwise one line saying the check runs without it."""
    ok, why = sandbox.probe(limits)
    if not ok:
        say(f"No grading sandbox here ({why.splitlines()[0]}); your own notebook needs none: checking without it.")
    return ok


def check(notebook, limits=None, unsafe=False, cell_timeout=None, feedback=None, student="learner",
          assignment=None, say=print, draw_figures=False, clock=None):
    """The result of one notebook, as `grade` writes it to <student>.json (schema.StudentResult.to_dict).

    Raises BadInput for a path, file or name it cannot check. `unsafe` skips the sandbox
    without probing for it. `clock` (a Clock), if given, gets each stage's seconds.
    """
    clock = clock or Clock()
    notebook = Path(notebook)
    nb = read_notebook(notebook)
    assignment_id = assignment_of(notebook, assignment)
    _is_of(nb, notebook, assignment_id)
    limits = limits or sandbox.Limits()
    isolate = not unsafe and use_sandbox(limits, say)
    if not isolate:
        unsandboxed.say_not_held(say)
    say(f"Checking {notebook} against {assignment_id}: it runs every cell, then the tests, "
        "hidden ones included (under a minute)...")
    # Windows cannot delete a file still open (the throw-away gradebook nbgrader keeps connected): left, not a crash.
    with tempfolders.folder("check") as tmp, _environment_kept(), _quiet():
        clock.lap("checks of the input, sandbox probe")
        return _grade(notebook, assignment_id, tmp, limits, isolate, cell_timeout, feedback, student,
                      draw_figures, clock)


@contextlib.contextmanager
def _environment_kept():
    """The caller's environment as it was: the worker, in this process, points matplotlib at the check's folder,
    which is gone once the check ends (a process the caller starts later would make it again)."""
    before = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _quiet():
    """nbgrader's progress lines and SQLAlchemy's warnings about its throw-away gradebook are not the learner's."""
    chatter = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            warnings.simplefilter("ignore")
            yield
    except BaseException:
        sys.stderr.write(chatter.getvalue()[-20000:])  # what led up to a failure of the grader itself
        raise


def _grade(notebook, assignment_id, tmp, limits, isolate, cell_timeout, feedback, student, draw_figures, clock):
    from . import check_cache
    from .worker import Worker
    from .worker_setup import WorkerSetup

    clock.lap("grader imports")
    course.ensure_bin_on_path()
    root = check_cache.copy_course(check_cache.built_course(assignment_id, _build_course), tmp / "course")
    config = course.load_config(root)
    instructor = course.load_config(COURSE_ROOT)  # the course's own configuration: its release, its seed
    model = course.read_assignment(config.CourseDirectory.db_url, assignment_id)
    clock.lap("course: its kept build copied, or built")
    submitted = tmp / "submitted" / student / assignment_id
    submitted.mkdir(parents=True)
    shutil.copy(notebook, submitted / f"{assignment_id}.ipynb")
    results_dir = tmp / "results"
    setup = WorkerSetup.for_run(
        model=model.to_dict(), scratch=tmp / "scratch", course_root=root,
        release_dir=course.copy_release(instructor, assignment_id, tmp / "release"),  # the course's own release
        template_db=course.db_path(config), course_notebooks=course.source_texts(config, assignment_id),
        limits=vars(limits), isolate=isolate, offering_seed=offering.seed(instructor),
        hide=(tmp, notebook.resolve().parent, check_cache.folder()), feedback_dir=results_dir if feedback else None,
        cell_timeout=cell_timeout, draw_figures=draw_figures,
        matplotlib_cache=str(check_cache.matplotlib_fonts(tmp / "matplotlib")),
    )
    worker = Worker(setup)
    clock.lap("worker start")
    job = {"student": student, "input_dir": str(submitted)}
    reply = worker.grade(job)
    if unfinished(reply):  # as `grade` does after its batch: once more before withholding a test
        reply = worker.grade(dict(job, again=True))
    clock.lap("grading")
    clock.stages["worker"] = reply.get("timing", {})
    if feedback and reply.get("html"):
        shutil.copy(reply["html"], feedback)
    return reply["result"]


def _build_course(root, assignment_id):
    """The instructor course of `assignment_id` at `root`, built from its authored source (check_cache keeps it)."""
    import nbformat

    from ..authoring import build

    (root / "source" / assignment_id).mkdir(parents=True)
    shutil.copy(COURSE_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    source = build.read_source(assignment_id)
    (root / "source" / assignment_id / f"{assignment_id}.ipynb").write_text(nbformat.writes(source) + "\n",
                                                                              encoding="utf-8")
    course.generate_assignment(course.load_config(root), assignment_id)


def _mark(mark, plain):
    """`mark`, or `plain` where standard output cannot encode it (Windows, writing to a pipe in its code page)."""
    try:
        mark.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return plain
    return mark


def _safe_streams():
    """A character the console cannot show is replaced, never a crash (a learner's message may hold any)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")


def _points(value):
    return f"{value:g}"


LINE = 100  # about how many columns an exercise's line takes at most: its whole message is in --json and the notebook


def _likely_mistake(cells, failing):
    """What the learner did, by the mistake the checks recognised in `failing` (or else in another failed cell of the
    exercise): the first clause of its explanation (the rest, the fix, is in the notebook and --json); '' for none.
    Mistakes the inputs could not tell apart are joined by "or"."""
    named = [d for c in [failing, *cells] if c["points"] < c["max_points"] for d in c.get("diagnosis") or ()]
    said = list(dict.fromkeys(_clause(d["explanation"]) for d in named if d.get("explanation")))
    return " or ".join(said)


def _clause(explanation):
    """An explanation's first clause: up to its first colon or semicolon, where that leaves a phrase."""
    head = re.split(r"[:;] ", explanation.strip(), maxsplit=1)[0]
    return (head if len(head) >= 12 else explanation.strip()).rstrip(".")


def _cut(text, width):
    """`text` in at most `width` characters: cut at a word, with "…", never inside one."""
    if len(text) <= width:
        return text
    cut = text[:max(width - 1, 1)]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:(") + "…"


def verdict(cells, width=LINE):
    """An exercise's verdict in `width` characters: ✔, or ✘ with the likely mistake first, then the shortest fact of
    the first failing message (checks.brief), and whether a hidden test said it."""
    from ffn_helpers.checks import brief

    failing = next((c for c in cells if c["points"] < c["max_points"]), None)
    if failing is None:
        return _mark("✔", "ok")
    fact = brief(failing["message"] or failing["status"], failing["exercise"])
    mistake = _likely_mistake(cells, failing)
    hidden = " (hidden test)" if failing["grade_id"].endswith("_hidden") else ""
    body = f"{mistake}. {fact}" if mistake and fact else mistake or fact
    return f"{_mark('✘', 'x')} {_cut(body, width - 2 - len(hidden))}{hidden}"


def summary(result, notebook):
    """The human report: the total, one line per exercise (points, the likely mistake and the shortest fact of the
    first failing message, in about LINE columns), flags, the status."""
    score, max_score = result["score"], result["max_score"]
    lines = [f"{result['assignment']}: {_points(score)} of {_points(max_score)} points ({notebook})"]
    if result["status"] != "graded":
        lines.append(f"  status: {result['status']}" + (f" ({result['error'].strip().splitlines()[-1]})"
                                                         if result.get("error") else ""))
    exercises = {}
    for cell in result["cells"]:
        exercises.setdefault(cell["exercise"] or cell["grade_id"], []).append(cell)
    width = max((len(name) for name in exercises), default=0)
    for name, cells in exercises.items():
        got, most = sum(c["points"] for c in cells), sum(c["max_points"] for c in cells)
        head = f"  {name.ljust(width)}  {_points(got):>4}/{_points(most):<4} "
        lines.append(head + verdict(cells, max(LINE - len(head), 40)))
    lines += [f"  flag ({flag['kind']}): {_cut(flag['detail'], LINE - 10 - len(flag['kind']))}"
              for flag in result.get("flags", []) if flag.get("costs_points")]
    if max_score == 0:
        lines.append("This notebook has no graded exercises: nothing to check.")
    elif score < max_score:
        lines.append("Run the failing checks in the notebook for their whole messages (or --json).")
    return "\n".join(lines)


def main(args):
    clock = Clock()
    _safe_streams()
    limits = sandbox.Limits(memory=sandbox.parse_size(args.memory))
    # With --json, stdout carries the JSON alone; what `check` says on the way goes to stderr.
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if args.json else (
        lambda text: print(text, flush=True))
    try:
        result = check(args.notebook, limits=limits, unsafe=args.unsafe, cell_timeout=args.cell_timeout,
                       feedback=args.feedback, assignment=args.assignment, say=say, draw_figures=args.draw_figures,
                       clock=clock)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BAD_INPUT
    print(json.dumps(result, indent=1, sort_keys=True) if args.json else summary(result, args.notebook))
    if os.environ.get(TIMING_ENV):
        clock.lap("the report")
        clock.write(os.environ[TIMING_ENV])
    full = result["status"] == "graded" and result["score"] >= result["max_score"]
    return FULL_MARKS if full else POINTS_LOST
