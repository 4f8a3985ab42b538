"""The nbgrader course on disk: its configuration, its gradebook, and what an assignment looks like in it."""

import json
import os
import re
import shutil
import sqlite3
import stat
import sys
import sysconfig
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .. import COURSE_ROOT, exercises_in_order, limits
from . import walk

TIMESTAMP = "timestamp.txt"  # when the student submitted (nbgrader's, or the LMS's time)
SECRET = "submission_secret.txt"  # written by nbgrader's exchange at submission; release_feedback needs it
_SECRET_TEXT = re.compile(r"[0-9a-f]{16,256}\n?")  # nbgrader's secrets.token_hex(64)


HIDDEN_NOTE = "# (hidden tests: the grader runs them in its own process, never in this kernel)"


def _hidden_marks(source, begin="BEGIN HIDDEN TESTS", end="END HIDDEN TESTS"):
    """(line, whether the release leaves it out, "begin", "end" or None) of each line of a test cell: nbgrader's
    ClearHiddenTests rule, from a line holding `begin` to the next holding `end`, both included."""
    hidden = False
    for line in source.split("\n"):
        if begin in line:
            hidden = True
            yield line, True, "begin"
        elif end in line:
            hidden = False
            yield line, True, "end"
        else:
            yield line, hidden, None


def strip_hidden_tests(source, note=None):
    """The test cell as the learner's release shows it (nbgrader's ClearHiddenTests rule), `note` in their place."""
    lines = []
    for line, hidden, mark in _hidden_marks(source):
        if not hidden:
            lines.append(line)
        elif mark == "begin" and note:
            lines.append(note)
    return "\n".join(lines)


def hidden_lines(source):
    """The numbers (from 1) of a test cell's lines that the release leaves out: its hidden tests and their markers."""
    return frozenset(number for number, (_, hidden, _) in enumerate(_hidden_marks(source), start=1) if hidden)


def autograded_names(model):
    """The only files an autograded folder may hold: formgrader serves it from the grading account's origin."""
    return {f"{nb.name}.ipynb" for nb in model.notebooks} | {TIMESTAMP, SECRET}


def is_exchange_secret(data):
    """True when `data` (bytes) is what nbgrader's exchange writes as the secret (a short hex string), nothing else."""
    return len(data) <= 300 and _SECRET_TEXT.fullmatch(data.decode("ascii", errors="replace")) is not None


def course_zone(config):
    """The course's time zone (c.LmsCollector.timezone, an IANA name), or "" when it is not set."""
    section = config.get("LmsCollector") if hasattr(config, "get") else None
    return str(section.get("timezone", "") or "") if section is not None and hasattr(section, "get") else ""


def ensure_bin_on_path():
    """Put this interpreter's bin/ first on PATH: nbgrader shells out to `alembic` to create a gradebook."""
    # Where the interpreter is, and where its environment's commands are (not the same folder on Windows: Scripts\\).
    dirs = list(dict.fromkeys([os.path.dirname(sys.executable), sysconfig.get_path("scripts")]))
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if parts[:len(dirs)] != dirs:
        os.environ["PATH"] = os.pathsep.join([*dirs, *[p for p in parts if p not in dirs]])


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


def keep_hidden_tests_out(db_file):
    """Make a scratch gradebook restore test cells without their hidden tests.

    nbgrader's autograde puts the gradebook's copy of every test cell back into the
    notebook it runs, so a kernel would hold the hidden tests' source (IPython keeps it
    in `In`, its history and linecache) where the learner's code can read and print it.
    With this, the notebook run executes the visible part only; the hidden tests run in
    the clean re-run, in the grader's own process (results.combine scores them there).
    """
    import nbformat
    from nbgrader.utils import compute_checksum


    db = sqlite3.connect(db_file)
    try:
        rows = db.execute(
            "SELECT s.id, s.name, s.cell_type, s.locked, s.source, g.max_score FROM source_cell s "
            "JOIN base_cell b ON b.name = s.name AND b.notebook_id = s.notebook_id "
            "JOIN grade_cells g ON g.id = b.id WHERE s.source LIKE '%BEGIN HIDDEN TESTS%'").fetchall()
        updates = []
        for cid, name, cell_type, locked, source, points in rows:
            cell = nbformat.v4.new_code_cell(strip_hidden_tests(source, note=HIDDEN_NOTE))
            cell.cell_type = cell_type
            # nbgrader checks a locked cell against this checksum after restoring it
            cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": bool(locked), "grade_id": name,
                                         "points": points}
            updates.append((cell.source, compute_checksum(cell), cid))
        db.executemany("UPDATE source_cell SET source = ?, checksum = ? WHERE id = ?", updates)
        db.commit()
    finally:
        db.close()


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

    @property
    def hidden_tests(self):
        """A test cell with hidden tests: they run in the clean re-run only (keep_hidden_tests_out)."""
        return bool(self.grade) and "BEGIN HIDDEN TESTS" in self.source


@dataclass
class NotebookModel:
    name: str
    cells: list = field(default_factory=list)  # SourceCellModel, in notebook order

    @property
    def exercise_of(self):
        """grade_id -> exercise, for answer and test cells."""
        roles = [(c.name, "answer" if c.solution else "test" if c.grade else None) for c in self.cells]
        return {name: exercise for (name, role), exercise in zip(roles, exercises_in_order(roles), strict=True)
                if role}

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


def source_texts(config, assignment_id):
    """{notebook name: its instructor source as nbformat JSON}: the course's own cells, for the clean re-run."""
    return {path.stem: path.read_text(encoding="utf-8") for path in source_notebooks(config, assignment_id)}


def notebook_names(config, assignment_id):
    """The assignment's notebook names (without .ipynb), from the gradebook or else its source; read only."""
    if db_path(config).exists():
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(config.CourseDirectory.db_url) as gb:
            try:
                return sorted(nb.name for nb in gb.find_assignment(assignment_id).notebooks)
            except MissingEntry:
                pass
    return [p.stem for p in source_notebooks(config, assignment_id)]


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


def release_files(config, assignment_id):
    """What a learner receives with an assignment besides its notebooks: [(relative path, file)].

    The files `generate_assignment` copies from source/<id>/ into release/<id>/, by nbgrader's own
    rule: every file but notebooks and what `CourseDirectory.ignore` names (the course ignores the
    authored source, `<id>.py`, which holds the solutions and hidden tests). This is the one list a
    sandbox's working folder is made from (`copy_release`): nothing else of the course goes in.
    """
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import find_all_files

    coursedir = CourseDirectory(config=config)
    folder = Path(coursedir.format_path(coursedir.source_directory, ".", assignment_id))
    if not folder.is_dir():
        return []
    found = [Path(f) for f in find_all_files(str(folder), list(coursedir.ignore) + ["*.ipynb"])]
    return sorted((str(f.relative_to(folder)), f) for f in found if f.is_file() and not f.is_symlink())


def release_notebooks(config, assignment_id):
    """The assignment's notebooks as generate_assignment released them (release/<id>/*.ipynb), sorted."""
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    folder = Path(coursedir.format_path(coursedir.release_directory, ".", assignment_id))
    return sorted(p for p in folder.glob("*.ipynb") if p.is_file() and not p.is_symlink())


def copy_release(config, assignment_id, target):
    """A folder `target` holding exactly `release_files` (regular files only, never through a link)."""
    target = Path(target)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    budget = limits.MAX_FOLDER_BYTES
    for rel, path in release_files(config, assignment_id):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        why, budget = copy_file(path, target / rel, budget)
        if why:
            raise ValueError(f"the assignment's file {rel} cannot be handed out: {why}")
    return target


def fresh_dir(target):
    """`target` as an empty folder: what was there (a folder, a file, a link: never followed) removed first."""
    target = Path(target)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    target.mkdir(parents=True)
    return target


def copy_tree(source, target, max_bytes=limits.MAX_FOLDER_BYTES):
    """Replace `target` with a copy of the files under `source` that count (walk.py's rules: never through a link,
    regular files only, `max_bytes` together); return what was left out, each as "path: why".

    `source` may be a folder that student code could write (or a submission as it came): the ledger's digest
    (scoring/ledger.py) and a cluster's copy (dispatch/cluster.py) walk it the same way.
    """
    target, skipped = fresh_dir(target), []
    for found in walk.walk(source, max_bytes):
        if found.why:
            skipped.append(f"{found.rel}: {found.why}")
        elif found.folder:
            (target / found.rel).mkdir()
        else:
            _write(found, target / found.rel)
    return skipped


def _write(found, target):
    """A file walk.py found that counts, written to `target` (a new file: never through what is there)."""
    with open(target, "xb") as dst:
        for piece in found.chunks():
            dst.write(piece)


def copy_file(source, target, budget):
    """Copy one regular file without following links (walk.py's rules); (why it was skipped or '', budget left)."""
    found = walk.open_file(source, os.path.basename(source), budget)
    try:
        if not found.why:
            _write(found, target)
    finally:
        found.close()
    return found.why, budget - found.size


def read_notebook(path):
    """(notebook, '') or (None, why it cannot be read): the one reader of a learner's notebook, `grade`'s and
    `check`'s and the report's, never through a link, at most limits.MAX_FILE_BYTES, JSON that nbformat reads."""
    import nbformat

    try:  # never through a link: the submission's folder is the student's (a link could name a classmate's file)
        fd = walk.open_no_follow(path)
    except OSError as exc:
        return None, "a link, not a file" if os.path.islink(path) else f"cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size == 0:
            return None, "the file is empty"
        if info.st_size > limits.MAX_FILE_BYTES:
            return None, (f"the file is {info.st_size:,} bytes, more than a notebook can be "
                          f"({limits.MAX_FILE_BYTES:,})")
        raw = f.read(limits.MAX_FILE_BYTES + 1)
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"not valid notebook JSON: {str(exc)[:200]}"
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and "cell_type" in c for c in cells):
        return None, "not a notebook (no list of cells)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about (and repairs) small schema slips
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:
        return None, f"not a valid notebook: {(str(exc).splitlines() or [''])[0][:200]}"
    return nb, ""
