"""Decisions the grading pipeline once wrote per backend, each now in one place that every backend uses:

- what a worker is told at start, and so what student code may not see: WorkerSetup.for_run (grade, check, a
  cluster's task);
- the student's page: feedback.student_page (the worker, a cluster's reply, the parent's fallback);
- where a process keeps its own files (HOME, TMPDIR, matplotlib's, IPython's, Jupyter's): sandbox.own_folders
  (a sandbox's environment, a grading worker's, a zygote's);
- which files of a submission count: walk.py (tests/test_walk.py shows the copy and the ledger agree).

Each test reads the code as Python (ast), so a second reading written again by hand fails here.
"""

import ast
import functools
from pathlib import Path

from autograder.grading.gate_in import sandbox
from autograder.grading.worker_setup import WorkerSetup

ROOT = Path(__file__).resolve().parents[1]
GRADING = ROOT / "autograder" / "grading"


@functools.cache
def _modules():
    return tuple((path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(GRADING.rglob("*.py")))


def _calls(tree, test):
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and test(node.func)]


def _named(func, name, owner=None):
    """Whether a call's function is `name` (or `owner.name`)."""
    if isinstance(func, ast.Name):
        return owner is None and func.id == name
    return isinstance(func, ast.Attribute) and func.attr == name and (
        owner is None or isinstance(func.value, ast.Name) and func.value.id == owner)


def test_a_workers_setup_is_made_only_by_for_run():
    made = {path.relative_to(ROOT).as_posix() for path, tree in _modules()
            if _calls(tree, lambda f: _named(f, "for_run", "WorkerSetup"))}
    assert made == {"autograder/grading/grade.py", "autograder/grading/check.py",
                    "autograder/grading/dispatch/cluster_task.py"}
    direct = [path.name for path, tree in _modules() if path.name != "worker_setup.py"
              and _calls(tree, lambda f: _named(f, "WorkerSetup"))]
    assert not direct, f"a WorkerSetup made by hand, not through for_run: {direct}"


def test_for_run_hides_the_course_the_runs_folders_and_what_the_caller_adds_by_their_real_paths(tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    setup = WorkerSetup.for_run(model={}, scratch=tmp_path / "run", course_root=tmp_path / "course",
                                release_dir=tmp_path / "run" / "release", template_db=tmp_path / "t.db",
                                course_notebooks={}, limits={}, isolate=True, offering_seed=None,
                                hide=(tmp_path / "linked", tmp_path / "real", ""), feedback_dir=tmp_path / "out")
    assert setup.hidden == tuple(sorted(str(tmp_path / name) for name in ("course", "run", "real", "out")))
    assert setup.course_root == str(tmp_path / "course") and setup.feedback_dir == str(tmp_path / "out")
    assert WorkerSetup.from_dict(setup.to_dict()) == setup


def test_the_students_page_is_rendered_only_by_student_page():
    rendering = [path.relative_to(ROOT).as_posix() for path, tree in _modules()
                 if _calls(tree, lambda f: _named(f, "render", "feedback"))]
    assert not rendering, f"a page rendered beside feedback.student_page: {rendering}"
    users = {path.relative_to(ROOT).as_posix() for path, tree in _modules()
             if _calls(tree, lambda f: _named(f, "student_page", "feedback"))}
    assert users == {"autograder/grading/worker.py", "autograder/grading/grade.py",
                     "autograder/grading/dispatch/cluster_reply.py"}


def test_a_processs_own_folders_are_named_only_by_own_folders():
    names = set(sandbox.own_folders("/h"))
    assert names == {"HOME", "TMPDIR", "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR"}
    written = []
    for path, tree in _modules():
        own = [range(f.lineno, f.end_lineno + 1) for f in ast.walk(tree)
               if isinstance(f, ast.FunctionDef) and f.name == "own_folders"]
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            elif isinstance(node, ast.Call):
                keys = [k.arg for k in node.keywords]
            else:
                continue
            if not any(node.lineno in lines for lines in own):
                written += [f"{path.relative_to(ROOT)}:{node.lineno} {k}" for k in keys
                            if k in {"HOME", "TMPDIR", "JUPYTER_RUNTIME_DIR"}]
    assert not written, f"a process's own folders named beside sandbox.own_folders: {written}"


def test_the_layouts_of_a_sandbox_a_worker_and_an_unsandboxed_run_are_the_one_layout():
    isolated = sandbox.Sandbox(cwd="/tmp/work").environment()
    assert {k: isolated[k] for k in sandbox.own_folders("/")} == sandbox.own_folders(sandbox.SANDBOX_HOME)
    plain = sandbox.Sandbox(cwd="/w", isolate=False).environment()
    assert plain["HOME"] == plain["TMPDIR"] == "/w" and plain["IPYTHONDIR"] == "/w/.ipython"
    assert all(isolated[k] == "1" for k in sandbox.ONE_THREAD)
