"""The nbgrader course on disk: its configuration, its gradebook, and what an assignment looks like in it."""

import os
import shutil
import sqlite3
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from . import COURSE_ROOT
from .cells import exercise_of_test


def ensure_bin_on_path():
    """Put this interpreter's bin/ first on PATH: nbgrader shells out to `alembic` to create a gradebook."""
    bin_dir = os.path.dirname(sys.executable)
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if parts[:1] != [bin_dir]:
        os.environ["PATH"] = os.pathsep.join([bin_dir, *[p for p in parts if p != bin_dir]])


def load_config(course_root=COURSE_ROOT):
    """The course's nbgrader configuration, with the course root and gradebook where they are."""
    course_root = Path(course_root).resolve()
    config = Config()
    if (course_root / "nbgrader_config.py").exists():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    config.CourseDirectory.root = str(course_root)
    if "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = "sqlite:///" + str(course_root / "gradebook.db")
    return config


def db_path(config):
    """The gradebook's file (the course's gradebook is SQLite)."""
    url = config.CourseDirectory.db_url
    if not url.startswith("sqlite:///"):
        raise ValueError(f"expected an SQLite gradebook (sqlite:///...), the course uses {url}")
    return Path(url[len("sqlite:///"):])


def copy_database(source, target):
    """A consistent copy of an SQLite file, even while another process writes it."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@dataclass
class SourceCellModel:
    name: str
    cell_type: str
    locked: bool
    source: str
    grade: bool = False
    solution: bool = False
    task: bool = False
    points: float = 0.0


@dataclass
class NotebookModel:
    name: str
    cells: list = field(default_factory=list)  # SourceCellModel, in notebook order

    @property
    def exercise_of(self):
        """grade_id -> exercise, for answer and test cells."""
        answers = [c.name for c in self.cells if c.solution]
        out, previous = {}, None
        for c in self.cells:
            if c.solution:
                out[c.name] = previous = c.name
            elif c.grade:
                out[c.name] = exercise_of_test(c.name, set(answers), previous)
        return out

    @property
    def max_score(self):
        return sum(c.points for c in self.cells if c.grade)


@dataclass
class AssignmentModel:
    name: str
    notebooks: list = field(default_factory=list)
    duedate: str | None = None

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        notebooks = [NotebookModel(n["name"], [SourceCellModel(**c) for c in n["cells"]]) for n in data["notebooks"]]
        return cls(data["name"], notebooks, data.get("duedate"))


def read_assignment(db_url, assignment_id):
    """The assignment as `generate_assignment` recorded it in the gradebook, or None."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gb:
        try:
            assignment = gb.find_assignment(assignment_id)
        except MissingEntry:
            return None
        notebooks = []
        for nb in assignment.notebooks:
            grade = {c.name: float(c.max_score) for c in nb.grade_cells}
            solution = {c.name for c in nb.solution_cells}
            task = {c.name for c in nb.task_cells}
            cells = [SourceCellModel(c.name, c.cell_type, bool(c.locked), c.source or "", c.name in grade,
                                     c.name in solution, c.name in task, grade.get(c.name, 0.0))
                     for c in nb.source_cells]
            notebooks.append(NotebookModel(nb.name, cells))
        duedate = assignment.duedate.isoformat() if assignment.duedate else None
        return AssignmentModel(assignment.name, sorted(notebooks, key=lambda n: n.name), duedate)


def generate_assignment(config, assignment_id):
    """`nbgrader generate_assignment ASSIGNMENT` through nbgrader's API (fills the gradebook, writes release/)."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory

    ensure_bin_on_path()
    config = Config(config)
    config.CourseDirectory.assignment_id = assignment_id
    converter = GenerateAssignment(coursedir=CourseDirectory(config=config), config=config)
    converter.force = True
    converter.start()


def source_notebooks(config, assignment_id):
    """The instructor's source notebooks of an assignment (source/<id>/*.ipynb)."""
    root = Path(config.CourseDirectory.root)
    return sorted((root / "source" / assignment_id).glob("*.ipynb"))


def prepare_assignment(config, assignment_id, log=print):
    """The assignment's model from the gradebook, generating it there first if it is not in it yet."""
    ensure_bin_on_path()
    model = read_assignment(config.CourseDirectory.db_url, assignment_id) if db_path(config).exists() else None
    if model is not None and model.notebooks:
        return model
    if not source_notebooks(config, assignment_id):
        root = config.CourseDirectory.root
        raise FileNotFoundError(
            f"assignment {assignment_id!r} is neither in the gradebook nor in {root}/source/{assignment_id}/: "
            f"build its source first (`python -m autograder build {assignment_id}`, or `make course`), "
            f"then run `nbgrader generate_assignment {assignment_id}` in {root}")
    log(f"{assignment_id} is not in the gradebook yet: running nbgrader generate_assignment {assignment_id}")
    generate_assignment(config, assignment_id)
    return read_assignment(config.CourseDirectory.db_url, assignment_id)


def copy_tree(source, target):
    """Replace `target` with a copy of `source`."""
    target = Path(target)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
