"""`python -m autograder check NOTEBOOK.ipynb`: grade one notebook against the instructor source, print the JSON.

The assignment is the file's name (`02_forward_pass.ipynb` -> 02_forward_pass).
The notebook is graded exactly as `grade` grades a class, sandbox and clean
re-run included, in a throw-away copy of the course built from the authored
source; nothing is written anywhere else.
"""

import contextlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from .. import COURSE_ROOT, assignments, offering
from . import course, sandbox
from .grade import check_sandbox, unfinished


def check(notebook, limits=None, unsafe=False, cell_timeout=None, feedback=None, student="learner"):
    """The result of one notebook, as `grade` writes it to <student>.json (schema.StudentResult.to_dict)."""
    import nbformat

    from .worker import Worker

    notebook = Path(notebook)
    assignment_id = notebook.name.removesuffix(".ipynb")
    known = assignments()
    if assignment_id not in known:
        raise ValueError(f"the file name should be an assignment id plus .ipynb ({', '.join(known)}), "
                         f"got {notebook.name!r}")
    if not notebook.is_file():
        raise FileNotFoundError(f"{notebook} does not exist")
    limits = limits or sandbox.Limits()
    if not check_sandbox(limits, unsafe):
        raise SystemExit(2)
    course.ensure_bin_on_path()
    from ..authoring import build

    with tempfile.TemporaryDirectory(prefix="ffn-check-") as tmp:
        root = Path(tmp) / "course"
        (root / "source" / assignment_id).mkdir(parents=True)
        shutil.copy(COURSE_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
        source = build.read_source(assignment_id)
        (root / "source" / assignment_id / f"{assignment_id}.ipynb").write_text(nbformat.writes(source) + "\n",
                                                                                  encoding="utf-8")
        config = course.load_config(root)
        instructor = course.load_config(COURSE_ROOT)  # the course's own configuration: its release, its seed
        with contextlib.redirect_stdout(sys.stderr):
            course.generate_assignment(config, assignment_id)
            model = course.read_assignment(config.CourseDirectory.db_url, assignment_id)
            submitted = Path(tmp) / "submitted" / student / assignment_id
            submitted.mkdir(parents=True)
            shutil.copy(notebook, submitted / f"{assignment_id}.ipynb")
            results_dir = Path(tmp) / "results"
            setup = {
                "model": model.to_dict(), "scratch": str(Path(tmp) / "scratch"), "slot": 0, "limits": vars(limits),
                "isolate": not unsafe, "hidden": [str(root), str(Path(tmp)), str(notebook.resolve().parent)],
                "feedback_dir": str(results_dir) if feedback else None,
                "course_notebooks": course.source_texts(config, assignment_id),
                "template_db": str(course.db_path(config)),  # the course's own release: its data files, if any
                "release_dir": str(course.copy_release(instructor, assignment_id, Path(tmp) / "release")),
                "course_root": str(root), "cell_timeout": cell_timeout,
                "offering_seed": offering.seed(instructor),
            }
            worker = Worker(setup)
            job = {"student": student, "input_dir": str(submitted)}
            reply = worker.grade(job)
            if unfinished(reply):  # as `grade` does after its batch: once more before withholding a test
                reply = worker.grade(dict(job, again=True))
        if feedback and reply.get("html"):
            shutil.copy(reply["html"], feedback)
        return reply["result"]


def main(args):
    limits = sandbox.Limits(memory=sandbox.parse_size(args.memory))
    try:
        result = check(args.notebook, limits=limits, unsafe=args.unsafe, cell_timeout=args.cell_timeout,
                       feedback=args.feedback)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1, sort_keys=True))
    return 0
