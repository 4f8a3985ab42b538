"""Command line of the course tools: `python -m autograder {build,lab,carry-over,grade,check,export,report} ...`."""

import argparse
import sys

from .limits import STUDENT_TIMEOUT_SECONDS
from .report import class_report as report  # standard library only: cheap to import

# The exit status when a package the course's tools need is missing: they run in the course's environment.
NOT_INSTALLED = 3


def exports_parser(sub):
    from .grading.gate_out import exports  # reads the gradebook through nbgrader: imported when used, cheap until then

    return exports.add_parser(sub)


def _grading_options(parser, unsafe="grade even when the bubblewrap sandbox cannot be set up (no isolation!)"):
    parser.add_argument("--memory", default="2G",
                        help="address-space limit of each sandboxed process, e.g. 2G or 512M (default: 2G)")
    parser.add_argument("--unsafe", action="store_true", help=unsafe)
    parser.add_argument("--cell-timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per cell (default: the course's Execute.timeout)")
    parser.add_argument("--draw-figures", action="store_true",
                        help="keep the course's figures as images in the graded notebook and its feedback "
                             "(default: each figure's text description, which is much faster to grade)")


def _jobs(text):
    """--jobs: a whole number of students graded at once, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of students graded at once (1 or more), "
                                         f"got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more students graded at once, got {value} "
                                         "(leave --jobs out to use one per core)")
    return value


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ffn-course")
    except PackageNotFoundError:
        return "unknown (not installed: run make setup)"


def main(argv=None):
    try:
        return _run(_parser().parse_args(argv))
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("autograder", "ffn_helpers"):
            raise  # the course's own code: a bug, not a missing package
        print(f"error: the package {exc.name!r} is not installed for this Python ({sys.executable}). "
              "Run the course's tools in its environment: `make setup` once, then "
              "`.venv/bin/python -m autograder ...` (or `conda activate ffn-course`).", file=sys.stderr)
        return NOT_INSTALLED


def _parser():
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="{build,lab,carry-over,grade,check,export,report}")
    p_build = sub.add_parser("build", help="generate notebooks/ and solutions/ from autograder/course/source/")
    p_build.add_argument("--check", action="store_true",
                         help="write nothing; fail if the committed files differ from a fresh build")
    p_build.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    p_lab = sub.add_parser("lab", help="open the course in JupyterLab (127.0.0.1, with a token)")
    p_lab.add_argument("--instructor", action="store_true",
                       help="the instructor's JupyterLab: nbgrader's formgrader on the course in autograder/course/")
    p_lab.add_argument("--port", type=int, help="port to listen on (default: 8888 or the next free one)")
    p_lab.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    p_lab.add_argument("--allow-root", action="store_true", help="run even as root (containers)")
    p_carry = sub.add_parser("carry-over", help="take the course's newer version of your notebook, with your "
                                                "answers carried over (yours is kept as <name>-mine.ipynb)")
    p_carry.add_argument("notebook", help="your notebook, e.g. my-notebooks/02_forward_pass.ipynb")
    p_grade = sub.add_parser("grade", help="grade every submission of an assignment (sandboxed, in parallel)")
    p_grade.add_argument("assignment", help="assignment id, e.g. 02_forward_pass")
    p_grade.add_argument("submitted", help="folder <student>/<assignment>/<notebook>.ipynb, or an LMS .zip")
    p_grade.add_argument("--out", default=None, help="folder for grades.csv, <student>.json and <student>.html "
                                                     "(default: <course>/results/<assignment>)")
    p_grade.add_argument("--jobs", type=_jobs, default=None, help="students graded at once (default: number of cores)")
    p_grade.add_argument("--cluster", default=None, metavar="ADDRESS",
                         help="grade on a Dask cluster: a scheduler's address (tcp://host:8786, tls://...) or "
                              "local:N (a scheduler and N workers on this machine); see autograder/README.md")
    p_grade.add_argument("--force", action="store_true",
                         help="grade again the submissions already graded with the same files and course version")
    p_grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p_grade.add_argument("--course", default=None, help="nbgrader course root (default: autograder/course/)")
    p_grade.add_argument("--timeout", type=float, default=STUDENT_TIMEOUT_SECONDS, metavar="SECONDS",
                         help=f"wall-clock limit per student (default: {STUDENT_TIMEOUT_SECONDS:g})")
    _grading_options(p_grade)
    p_check = sub.add_parser(
        "check", help="grade your notebook as the grader would: one line per exercise",
        description="Grade one notebook as `grade` does, hidden tests included. Exit status: 0 full marks, "
                    "1 points lost, 2 bad input (a missing file, not a notebook, a name it cannot map), "
                    f"{NOT_INSTALLED} run outside the course's environment.")
    p_check.add_argument("notebook", help="your notebook, e.g. my-notebooks/02_forward_pass.ipynb")
    p_check.add_argument("--assignment", default=None, metavar="ID",
                         help="the assignment, when the file name does not start with its id (e.g. 02_forward_pass)")
    p_check.add_argument("--json", action="store_true", help="print the result as JSON (as `grade` writes it)")
    p_check.add_argument("--feedback", default=None, metavar="HTML", help="also write the feedback page here")
    _grading_options(p_check, unsafe="do not look for the sandbox; run without it (it is used where it works)")
    exports_parser(sub)
    report.add_parser(sub)
    return parser


def _run(args):
    if args.command == "export":
        from .grading.gate_out import exports

        return exports.main(args)
    if args.command == "report":
        return report.run(args)
    if args.command == "grade":
        from .grading import grade

        if args.cluster and args.jobs:
            print("error: --jobs is for one machine; on a cluster (--cluster) each worker grades one student at a "
                  "time, and the cluster's size sets how many at once", file=sys.stderr)
            return 2
        return grade.main(args)
    if args.command == "check":
        from .grading import check

        return check.main(args)
    if args.command == "lab":
        from .authoring import lab

        return lab.main(args.instructor, args.port, not args.no_browser, args.allow_root)
    if args.command == "carry-over":
        from .authoring import lab

        return lab.carry_over(args.notebook)
    if args.command == "build":
        from .authoring import build

        return build.main(check=args.check, only=args.assignments or None)
    return 2


if __name__ == "__main__":
    sys.exit(main())
