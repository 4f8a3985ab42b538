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
