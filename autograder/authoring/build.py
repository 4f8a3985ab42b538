"""Generate every notebook form from its one authored source.

    source/<id>/<id>.py  --jupytext-->  source/<id>/<id>.ipynb   (nbgrader's source, git-ignored)
                         --nbgrader generate_assignment-->  notebooks/<id>.ipynb  (learner)
                         --nbgrader LockCells, ClearMarkScheme-->  solutions/<id>.ipynb

`--check` builds into a temporary folder and reports every generated file that
differs from the committed one (cell sources and metadata), without writing.
Both refuse a source whose hidden-test cell would claim success in the learner
version (`source_problems`).
"""

import difflib
import functools
import json
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.converters import GenerateAssignment
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearMarkScheme, ClearOutput, LockCells
from traitlets.config.loader import PyFileConfigLoader

from .. import COURSE_ROOT, NOTEBOOKS_DIR, REPO_ROOT, SOLUTIONS_DIR, SOURCE_DIR, assignments, authored, may_call
from ..cells import MAY_CALL, is_solution, role_of

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _authored(assignment_id):
    return authored(SOURCE_DIR / assignment_id / f"{assignment_id}.py")


def read_source(assignment_id):
    """The authored .py as a clean nbformat 4.5 notebook with stable cell ids."""
    nb = _authored(assignment_id)
    nb.metadata = nbformat.NotebookNode(
        kernelspec=KERNELSPEC, language_info={"name": "python"})
    nb.nbformat, nb.nbformat_minor = 4, 5
    seen = set()
    for i, cell in enumerate(nb.cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id if grade_id and grade_id not in seen else f"cell-{i:03d}"
        seen.add(cell.id)
        cell.metadata.pop("lines_to_next_cell", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if is_test_cell(cell):
            tags = cell.metadata.setdefault("tags", [])
            if RUN_ON not in tags:
                tags.append(RUN_ON)
    _tell_may_call(assignment_id, nb)
    return nb


def _tell_may_call(assignment_id, nb):
    """Under each exercise, its description says which course functions its answer may call (cells.MAY_CALL; none
    by default), and the setup cell hands the same lists to the notebook's checks (`checks.may_call`), which refuse
    the others as the grader does: the sentence, the checks' rule and the judge's come from the same metadata
    (autograder/may_call.py)."""
    lists = {}
    for before, cell in zip(nb.cells, nb.cells[1:], strict=False):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not is_solution(cell) or may_call.cell_problems(assignment_id, cell):
            continue  # source_problems names what is wrong
        names, exercise = cell.metadata.get(MAY_CALL, []), meta.get("grade_id", "")
        lists[exercise] = list(names)
        if before.cell_type == "markdown":
            before.source = before.source.rstrip() + "\n\n" + may_call.sentence(
                names, exercise, lambda name: _written_in(name.rpartition(".")[2], assignment_id))
    setup = next((c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup"), None)
    if lists and setup is not None:
        setup.source = setup.source.rstrip() + "\n\n" + may_call.setup_line(lists)


def _written_in(name, assignment_id):
    """The earlier notebook whose exercise `name` is (the learner's own version of the course function), or None."""
    earlier = [a for a in assignments() if a < assignment_id and name in _answers(a)]
    return earlier[0] if earlier else None


@functools.cache
def _answers(assignment_id):
    """The grade ids of a notebook's answer cells, as authored."""
    return frozenset(c.metadata.get("nbgrader", {}).get("grade_id") for c in _authored(assignment_id).cells
                     if is_solution(c))


def _may_call_problems(assignment_id, nb):
    """may_call.problems, an exercise whose cell above is no description to tell its rule in, and a notebook with
    exercises whose setup cell does not import the checks that apply the rule (`checks.may_call`)."""
    found = may_call.problems(assignment_id, nb)
    for before, cell in zip(nb.cells, nb.cells[1:], strict=False):
        if cell.cell_type == "code" and is_solution(cell) and before.cell_type != "markdown":
            found.append(f"{assignment_id}: answer cell {cell.id} has no markdown cell right above it to tell the "
                         f"learner which course functions it may call")
    setup = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup"]
    answers = [c for c in nb.cells if c.cell_type == "code" and is_solution(c)]
    if answers and not (setup and re.search(r"^from ffn_helpers import .*\bchecks\b", setup[0].source, re.M)):
        found.append(f"{assignment_id}: its setup cell should import checks (from ffn_helpers import checks), which "
                     f"apply the course functions each exercise may call")
    return found


# A test cell fails until its exercise is done; tagged so, Run All (JupyterLab, nbconvert --execute,
# nbclient) goes on past it and the learner sees every section. nbgrader still grades it by its error.
RUN_ON = "raises-exception"


def is_test_cell(cell):
    """An autograded test cell: a code cell whose role is a test (cells.role_of)."""
    return cell.cell_type == "code" and role_of(cell) == "test"


HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
SUCCESS_CALL = "checks.ok("


UNSEEDED = "default_rng("  # a hidden test's generator comes from checks.hidden_rng, which an offering's seed moves


def _outside_hidden_blocks(source):
    """The lines of a cell that nbgrader keeps in the learner version (those outside hidden blocks)."""
    kept, hidden = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN:
            hidden = True
        elif line.strip() == HIDDEN_END:
            hidden = False
        elif not hidden:
            kept.append(line)
    return kept


def source_problems(assignment_id, nb=None):
    """Authoring errors the generated notebooks would carry to the learner.

    A hidden-test cell loses its hidden block in the learner version; a success
    message (`checks.ok`) left outside that block would then print a tick with
    nothing checked, so it must sit inside the block.
    """
    nb = read_source(assignment_id) if nb is None else nb
    problems = _hidden_draws_in_view(assignment_id, nb) + _may_call_problems(assignment_id, nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type != "code" or not (HIDDEN_BEGIN in cell.source or grade_id.endswith("_hidden")):
            continue
        kept = _outside_hidden_blocks(cell.source)
        for line in kept:
            if SUCCESS_CALL in line:
                problems.append(f"{assignment_id}: hidden-test cell {grade_id or cell.id} calls {line.strip()!r} "
                                f"outside {HIDDEN_BEGIN} ... {HIDDEN_END}: the learner version would print "
                                "success with nothing checked; move it inside the hidden block")
        hidden = set(cell.source.splitlines()) - set(kept)
        for line in sorted(line for line in hidden if UNSEEDED in line):
            problems.append(f"{assignment_id}: hidden-test cell {grade_id or cell.id} draws inputs with "
                            f"{line.strip()!r}: use checks.hidden_rng({assignment_id!r}, {grade_id!r}), so that an "
                            "offering's own seed changes them (AUTHORING.md, 'A private offering')")
    return problems


HIDDEN_DRAW = "checks.hidden_"  # checks.hidden_rng / hidden_seed: the offering's inputs, drawn in the judge alone


def _hidden_draws_in_view(assignment_id, nb):
    """A hidden input drawn outside a hidden block would be drawn in the notebook run too, where no offering's
    seed is (autograder/offering.py): the two runs would test different inputs."""
    return [f"{assignment_id}: cell {cell.metadata.get('nbgrader', {}).get('grade_id') or cell.id} draws hidden "
            f"inputs outside {HIDDEN_BEGIN} ... {HIDDEN_END} ({line.strip()!r}): the notebook run would draw the "
            "published ones and the grader's judge the offering's; move it inside the hidden block"
            for cell in nb.cells if cell.cell_type == "code"
            for line in _outside_hidden_blocks(cell.source) if HIDDEN_DRAW in line]


def course_config():
    """The course's nbgrader_config.py, loaded as nbgrader itself would."""
    return PyFileConfigLoader("nbgrader_config.py", path=str(COURSE_ROOT)).load_config()


def _write(nb, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def _learner_version(assignment_id, source_nb, workdir):
    """Run nbgrader's generate_assignment (no database) in a scratch course root."""
    src = workdir / "source" / assignment_id / f"{assignment_id}.ipynb"
    _write(source_nb, src)
    config = course_config()
    config.CourseDirectory.root = str(workdir)
    config.CourseDirectory.assignment_id = assignment_id
    config.GenerateAssignment.no_database = True  # as `--no-db`: touch no gradebook
    config.SaveCells.enabled = False
    converter = GenerateAssignment(coursedir=CourseDirectory(config=config), config=config)
    converter.force = True
    converter.start()
    nb = nbformat.read(workdir / "release" / assignment_id / f"{assignment_id}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _solution_version(source_nb):
    """The source with locked cells marked and outputs cleared: hidden tests stay visible."""
    nb = nbformat.from_dict(json.loads(json.dumps(source_nb)))
    resources = {}
    for pre in (LockCells(), ClearOutput(), ClearMarkScheme()):
        nb, resources = pre.preprocess(nb, resources)
    return nb


def write_sources(only=None):
    """Write nbgrader's source notebooks (autograder/course/source/<id>/<id>.ipynb) from the authored .py."""
    for assignment_id in only or assignments():
        _write(read_source(assignment_id), SOURCE_DIR / assignment_id / f"{assignment_id}.ipynb")


def build_all(out_root=None, only=None):
    """Generate every form; write into the repository, or under `out_root` (for --check).

    `only`: a list of assignment ids to build instead of all of them.
    """
    notebooks_dir = NOTEBOOKS_DIR if out_root is None else out_root / "notebooks"
    solutions_dir = SOLUTIONS_DIR if out_root is None else out_root / "solutions"
    written = []
    with tempfile.TemporaryDirectory(prefix="ffn-build-") as tmp:
        for assignment_id in only or assignments():
            source_nb = read_source(assignment_id)
            if out_root is None:  # the instructor's nbgrader source, git-ignored
                _write(source_nb, SOURCE_DIR / assignment_id / f"{assignment_id}.ipynb")
            learner = _learner_version(assignment_id, source_nb, Path(tmp))
            _write(learner, notebooks_dir / f"{assignment_id}.ipynb")
            _write(_solution_version(source_nb), solutions_dir / f"{assignment_id}.ipynb")
            written += [notebooks_dir / f"{assignment_id}.ipynb", solutions_dir / f"{assignment_id}.ipynb"]
    return written


def _comparable(path_or_nb):
    """What must match: each cell's type, source and metadata, and the notebook's metadata."""
    nb = path_or_nb if isinstance(path_or_nb, dict) else nbformat.read(path_or_nb, as_version=4)
    cells = [{"cell_type": c.cell_type, "source": c.source, "metadata": c.metadata} for c in nb.cells]
    return json.dumps({"metadata": nb.metadata, "cells": cells}, indent=1, sort_keys=True).splitlines()


def stale_source(assignment_id):
    """Why nbgrader's source notebook of `assignment_id` is not what its authored .py builds now (None: it is).

    The built notebook is git-ignored: after a pull that changes <id>.py (a hidden test, a may_call list),
    grading against the old build would use the old tests without a word.
    """
    built = SOURCE_DIR / assignment_id / f"{assignment_id}.ipynb"
    if not built.exists() or not (SOURCE_DIR / assignment_id / f"{assignment_id}.py").exists():
        return None
    if _comparable(built) == _comparable(read_source(assignment_id)):
        return None
    return (f"{built.name} in source/{assignment_id}/ was built from an older {assignment_id}.py: build it again "
            f"(`python -m autograder build {assignment_id}`), then `nbgrader generate_assignment {assignment_id} "
            "--force` in the course folder, so that the gradebook holds the new tests too")


def check_all(only=None):
    """Return a list of problems: committed generated files that differ from a fresh build."""
    problems = [p for aid in only or assignments() for p in source_problems(aid)]
    with tempfile.TemporaryDirectory(prefix="ffn-build-") as tmp:
        fresh = build_all(Path(tmp), only)
        expected_names = {(p.parent.name, p.name) for p in fresh}
        for folder in (NOTEBOOKS_DIR, SOLUTIONS_DIR) if only is None else ():
            for stray in sorted(folder.glob("*.ipynb")):
                if (folder.name, stray.name) not in expected_names:
                    problems.append(f"{folder.name}/{stray.name} has no source in autograder/course/source/")
        for new in fresh:
            committed = (NOTEBOOKS_DIR if new.parent.name == "notebooks" else SOLUTIONS_DIR) / new.name
            rel = f"{new.parent.name}/{new.name}"
            if not committed.exists():
                problems.append(f"{rel} is missing: run `make course`")
                continue
            diff = list(difflib.unified_diff(_comparable(committed), _comparable(new),
                                             "committed/" + rel, "generated/" + rel, lineterm="", n=2))
            if diff:
                problems.append(f"{rel} differs from a fresh build (run `make course`):\n" + "\n".join(diff[:40]))
            elif any(c.get("outputs") for c in nbformat.read(committed, as_version=4).cells):
                problems.append(f"{rel} has outputs committed: run `make course`")
    return problems


def offering_note():
    """Which hidden tests the grader will run (the offering's seed, autograder/offering.py); ValueError if malformed.

    The generated notebooks never carry the seed: solutions/ keeps the published hidden tests."""
    from .. import offering

    if offering.seed(course_config()) is None:
        return "hidden tests: the published ones (no offering seed configured)"
    return "hidden tests: this offering's own (an offering seed is configured; solutions/ shows the published ones)"


def main(check=False, only=None):
    unknown = sorted(set(only or ()) - set(assignments()))
    if unknown:
        print(f"unknown assignment(s) {', '.join(unknown)}; expected some of {', '.join(assignments())}",
              file=sys.stderr)
        return 2
    try:
        note = offering_note()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(note, file=sys.stderr)
    if check:
        problems = check_all(only)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(problems)} generated notebook(s) out of date" if problems
              else "generated notebooks are up to date")
        return 1 if problems else 0
    problems = [p for aid in only or assignments() for p in source_problems(aid)]
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{len(problems)} problem(s) in the sources; nothing written")
        return 1
    for path in build_all(only=only):
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    return 0


