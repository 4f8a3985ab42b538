"""The nbgrader course of the FFN course, and the tools that build and grade it.

This folder is an nbgrader course root (see `nbgrader_config.py`):
`source/<id>/<id>.py` are the authored notebooks (jupytext percent format, with
solutions and hidden tests); `python -m autograder build` makes the learner
versions in `notebooks/` and the worked solutions in `solutions/` from them.
"""

from pathlib import Path

COURSE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = COURSE_ROOT.parent
SOURCE_DIR = COURSE_ROOT / "source"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
SOLUTIONS_DIR = REPO_ROOT / "solutions"


def assignments():
    """The assignment ids, in course order (each is `source/<id>/<id>.py`)."""
    return sorted(p.parent.name for p in SOURCE_DIR.glob("*/*.py") if p.stem == p.parent.name)


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
