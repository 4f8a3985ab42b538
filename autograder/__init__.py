"""The FFN course's nbgrader course and the tools that build, grade and report on it.

The map of the code is in the packages' docstrings, this one first: each names every module and subpackage in it,
one line each with its one job (tests/test_map.py holds every package under autograder/ to it).

    course/        nbgrader's course root: nbgrader_config.py and the authored sources, source/<id>/<id>.py
    authoring/     `build`, `lab`, `carry-over`: the notebook forms from their sources, JupyterLab, a learner's update
    grading/       `grade`, `check`, `export`: each submission in a sandbox, the clean re-run, scores, the gradebook
    report/        `report`: the class report from the graded results
    __main__.py    the command line: `python -m autograder build|lab|carry-over|grade|check|export|report`
    cells.py       what each code cell of a graded notebook is: its role (nbgrader's predicates), what it defines and
                   uses, its exercise
    limits.py      the limits more than one module reads (a file's and a folder's size, a message's length, a
                   student's time), each once with its reason; the guide's table of limits is tested against it
    mathml.py      the course's own formulas as MathML on a page: no script, read by screen readers
    may_call.py    which course functions an exercise's answer may call: the allow-list of the clean re-run's judge
    offering.py    a private offering's seed for the hidden tests, from configuration outside the repository
    pages.py       how the feedback page and the class report are rendered (Jinja2, every value escaped)
    private.py     student data written readable by its owner only (files 0600, folders 0700)
    readable.py    learner text the grader can read: a cell Python cannot build, or a lone surrogate, costs that cell
    sanitise.py    what learner-made content may become on its way to a person: the one policy, for every way out
    schema.py      the result records grading writes (<student>.json, "schema": 1) and the report reads
    upstream.py    every change made to another library's internals (nbclient, nbgrader, distributed, jsonschema,
                   ipykernel), each checked against the releases it was read in, and refused outside them

The course root is data, not code: nbgrader's folders, its gradebook and results/ (grades, feedback pages, exports,
reports) are made there at run time, the class's data, all of it git-ignored. This module holds what every tool
shares of the course's layout: where it is (COURSE_ROOT, SOURCE_DIR, ...), its assignments, the one reading of a
source (`authored`), and which exercise a test cell grades (`exercise_of_test`).
"""

from pathlib import Path

from . import upstream

# Before anything imports jsonschema: its optional IRI checker would cost every process that reads a notebook
# about 2.7 s of CPU (upstream.hide_rfc3987_syntax says why, and checks the jsonschema installed).
upstream.hide_rfc3987_syntax()

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
COURSE_ROOT = PACKAGE_DIR / "course"  # nbgrader's course root: data, not code
RESULTS = "results"  # the course root's folder for what grade, export and report write (git-ignored, as all data)
SOURCE_DIR = COURSE_ROOT / "source"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
SOLUTIONS_DIR = REPO_ROOT / "solutions"


def assignments():
    """The assignment ids, in course order (each is `source/<id>/<id>.py`)."""
    return sorted(p.parent.name for p in SOURCE_DIR.glob("*/*.py") if p.stem == p.parent.name)


def authored(path):
    """A jupytext percent source (`source/<id>/<id>.py`) as jupytext reads it: the one reading of the course's
    sources, which the build, the report and `check` share. A cell's header, `# %% nbgrader={...} may_call=[...]`,
    is jupytext's to parse (jupytext.cell_metadata.text_to_metadata), whatever follows its nbgrader JSON."""
    import jupytext  # imported here: most commands never read a source

    return jupytext.read(path, fmt="py:percent")


def source_metadata(path):
    """The nbgrader metadata of each cell of a jupytext percent source, in order ({} for a cell without)."""
    return [dict(cell.metadata.get("nbgrader", {})) for cell in authored(path).cells]


def exercise_of_test(grade_id, answer_ids=(), previous_answer=None):
    """The exercise a test cell grades: the one rule the grader, the report and the tests use.

    `test_<f>[_<aspect>][_hidden]` grades exercise <f>, the longest answer id that fits
    (`test_relu_grad` is relu_grad's, `test_ffn_module_backward_layer2` ffn_module_backward's);
    otherwise the answer just above it. With no answer ids known, <f> is the name itself.
    """
    core = (grade_id or "").removeprefix("test_")
    for suffix in ("_hidden", "_visible"):
        core = core.removesuffix(suffix)
    if not answer_ids:
        return core or grade_id
    for name in sorted(answer_ids, key=len, reverse=True):
        if core == name or core.startswith(name + "_"):
            return name
    return previous_answer


def exercises_in_order(cells):
    """The exercise of each of a notebook's cells, given in order as (grade_id, role) pairs: an "answer" is its
    own exercise, a "test" is exercise_of_test's with the notebook's answers, any other role None."""
    answers = {grade_id for grade_id, role in cells if role == "answer" and grade_id}
    out, previous = [], None
    for grade_id, role in cells:
        if role == "answer":
            previous = grade_id
        out.append(grade_id if role == "answer" else
                   exercise_of_test(grade_id, answers, previous) if role == "test" else None)
    return out
