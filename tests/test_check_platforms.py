"""`check` on a learner's Windows or macOS machine, as far as Linux can show it.

Each check runs in a subprocess whose Python lacks what that system lacks (platforms/sitecustomize.py):
for Windows, `resource`, `fcntl`, `pwd`, `grp` and `termios` cannot be imported by the course's code and
`os` has no fork, process groups or effective uid; for macOS, `resource` is there. In both, nothing under
/proc can be read and prlimit, bwrap and setpriv are not on PATH. A full-marks and a partial notebook (one
answer that loops forever, one that is wrong) get the same points and exit status as on the normal path,
and the check says in a line which limits it cannot hold.

This simulates and does not replace a run on a real Mac or Windows machine: their signals, process
and file semantics, and macOS's handling of RLIMIT_AS are not reproduced here.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import nbtools
import pytest

from autograder import REPO_ROOT
from autograder.grading import check

ASSIGNMENT = "02_forward_pass"
PLATFORMS = Path(__file__).resolve().parent / "platforms"
CELL_TIMEOUT = "5"  # the looping answer costs this per test, on every path alike


def _run(args, system=None, timeout=900):
    env = nbtools.nbgrader_env()
    if system:
        env.update(PYTHONPATH=str(PLATFORMS), FFN_SIMULATE=system, PATH=str(Path(sys.executable).parent))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO_ROOT, env=env,
                          timeout=timeout)


def _check(notebook, system=None):
    run = _run(["-m", "autograder", "check", str(notebook), "--json", "--cell-timeout", CELL_TIMEOUT], system)
    assert run.stdout.strip(), run.stderr[-4000:]
    return run, json.loads(run.stdout)


def _points(result):
    return result["status"], result["score"], result["max_score"], {c["grade_id"]: c["points"] for c in result["cells"]}


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("learner")
    full = nbtools.completed_learner(ASSIGNMENT)
    partial = nbtools.with_answers(full, {
        "linear_torch": "def linear_torch(x, weight, bias):\n    while True:  # never returns\n        pass\n",
        "dead_fraction": "def dead_fraction(x, W1, b1):\n    return 0.5\n",
    })
    paths = {}
    for name, nb in (("full", full), ("partial", partial)):
        paths[name] = folder / name / f"{ASSIGNMENT}.ipynb"
        paths[name].parent.mkdir()
        paths[name].write_text(nbformat.writes(nb), encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def normal(notebooks):
    """What the normal path (the sandbox) gives each notebook."""
    out = {}
    for name, path in notebooks.items():
        run, result = _check(path)
        assert "No grading sandbox" not in run.stderr, run.stderr[-2000:]
        out[name] = (run.returncode, _points(result))
    return out


@pytest.mark.parametrize("system", ["windows", "macos"])
def test_the_simulation_takes_away_what_the_system_lacks(system):
    """The simulated Python really lacks those parts, for the course's code (a `python -c` program, like the
    learner's process's runner), and the check's processes inherit it."""
    probe = ("import os, shutil, socket\n"
             "try:\n    import resource\n    has = True\nexcept ImportError:\n    has = False\n"
             "try:\n    os.listdir('/proc'); proc = True\nexcept OSError:\n    proc = False\n"
             "print(has, hasattr(os, 'fork'), hasattr(os, 'killpg'), hasattr(socket, 'send_fds'), proc, "
             "[shutil.which(t) for t in ('prlimit', 'bwrap', 'setpriv')])")
    run = _run(["-c", probe], system)
    assert run.returncode == 0, run.stderr
    windows = system == "windows"
    assert run.stdout.split(" ", 5) == [str(not windows), str(not windows), str(not windows), str(not windows),
                                        "False", "[None, None, None]\n"]
    blocked = _run(["-c", "import pwd"], system)
    assert (blocked.returncode != 0) is windows and ("simulated windows" in blocked.stderr) is windows


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("system", ["windows", "macos"])
@pytest.mark.parametrize("name", ["full", "partial"])
def test_check_grades_as_on_the_normal_path_and_names_the_limits_it_cannot_hold(notebooks, normal, system, name):
    run, result = _check(notebooks[name], system)
    assert (run.returncode, _points(result)) == normal[name], run.stderr[-4000:]
    said = run.stderr.splitlines()
    assert said[0].startswith("No grading sandbox here") and "checking without it" in said[0]
    held = [line for line in said if line.startswith("Limits not held here:")]
    expected = ["memory, CPU time, file size and the number of processes"] if system == "windows" else [
        "the number of processes (no prlimit)", "the tests' memory (no /proc"]
    assert len(held) == 1 and all(phrase in held[0] for phrase in expected), said[:4]
    if name == "full":
        assert run.returncode == check.FULL_MARKS and result["score"] == result["max_score"] == 10
        assert result["status"] == "graded"
    else:  # ffn_forward's 4 points; the loop was stopped by the check's clock, the wrong answer scored 0
        assert run.returncode == check.POINTS_LOST and result["score"] == 4 and result["status"] == "timeout"
        assert any("timed out" in (c["message"] or "") for c in result["cells"] if c["exercise"] == "linear_torch")


def test_a_console_in_a_windows_code_page_gets_plain_marks_not_a_crash():
    """On Windows a pipe (a notebook's `!python -m autograder check ...`) writes in the code page, cp1252, which has
    no ✔ or ✘: the summary says ok and x instead, and any other character it cannot write becomes '?'."""
    result = {"assignment": ASSIGNMENT, "score": 4, "max_score": 7, "status": "graded", "flags": [], "cells": [
        {"exercise": "ffn_forward", "grade_id": "test_ffn_forward", "points": 4, "max_points": 4, "message": "",
         "status": "passed"},
        {"exercise": "dead_fraction", "grade_id": "test_dead_fraction", "points": 0, "max_points": 3,
         "message": "AssertionError: expected σ ≈ 0.5", "status": "failed"}]}
    code = (f"import json, sys\nfrom autograder.grading import check\ncheck._safe_streams()\n"
            f"print(check.summary(json.loads({json.dumps(result)!r}), 'n.ipynb'))")
    for encoding, marks in (("cp1252", ("ok", "x expected ? ? 0.5")), ("utf-8", ("✔", "✘ expected σ ≈ 0.5"))):
        env = dict(nbtools.nbgrader_env(), PYTHONIOENCODING=encoding)
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=120)
        assert run.returncode == 0, run.stderr.decode(errors="replace")
        lines = run.stdout.decode(encoding).splitlines()
        assert lines[1].endswith(f" {marks[0]}") and lines[2].endswith(f" {marks[1]}"), lines


def test_without_the_sandbox_the_learners_process_starts_from_a_windows_sized_command_line(monkeypatch, tmp_path):
    """Windows caps a command line at 32,767 characters; the runner (rpc.py and clean_runner.py, 36 KB) comes on
    standard input instead. A connection that does not bring the secret first is closed, and the process still
    connects."""
    import socket

    from autograder.grading.gate_beside import rerun
    from autograder.grading.gate_in import sandbox

    started, impostors, real_popen, real_server = [], [], subprocess.Popen, socket.create_server

    def popen(argv, **kwargs):
        started.append(list(argv))
        return real_popen(argv, **kwargs)

    def server(address, **kwargs):  # an impostor connects first, with the wrong secret
        listening = real_server(address, **kwargs)
        impostors.append(socket.create_connection(listening.getsockname()))
        impostors[-1].sendall(b"0" * 32)
        return listening

    monkeypatch.setattr(rerun.subprocess, "Popen", popen)
    monkeypatch.setattr(rerun.socket, "create_server", server)
    student = rerun.StudentProcess(sandbox.Sandbox(isolate=False, cwd=str(tmp_path)))
    try:
        student.start(lambda *args: None, lambda *args: None)
        assert student.peer.request({"op": "exec", "source": "x = 6 * 7", "label": "<probe>", "trusted": False}) \
            is None
    finally:
        student.stop()
        for impostor in impostors:
            impostor.close()
    assert len(started) == 1 and len(impostors) == 1 and len(rerun.runner_source()) > 32767
    assert len(subprocess.list2cmdline(started[0])) < 32767


@pytest.mark.parametrize(("platform", "prlimit", "resource", "proc", "fork", "expected"), [
    ("linux", True, True, True, True, []),
    ("linux", False, True, True, True, ["the number of processes (no prlimit)"]),
    ("linux", True, True, False, True,
     ["the tests' memory (no /proc/self/status to read what their process maps already)"]),
    ("darwin", False, True, False, True,
     ["memory (macOS does not enforce RLIMIT_AS)", "the number of processes (no prlimit)"]),
    ("win32", False, False, False, False,
     ["memory, CPU time, file size and the number of processes (this Python has no `resource` module, "
      "as on Windows)"]),
    ("linux", False, True, False, True, ["the number of processes (no prlimit)",
                                         "the tests' memory (no /proc/self/status to read what their process maps "
                                         "already)"]),
])
def test_the_limits_not_held_are_named_for_each_system(monkeypatch, platform, prlimit, resource, proc, fork,
                                                      expected):
    import os

    from autograder.grading.gate_in import unsandboxed

    monkeypatch.setattr(unsandboxed.sys, "platform", platform)
    monkeypatch.setattr(unsandboxed.shutil, "which", lambda name: "/usr/bin/prlimit" if prlimit else None)
    monkeypatch.setattr(unsandboxed, "has_resource", lambda: resource)
    monkeypatch.setattr(unsandboxed, "reads_own_memory", lambda: proc)
    if not fork:
        monkeypatch.delattr(os, "fork")
    assert unsandboxed.not_held() == expected
    said = []
    unsandboxed.say_not_held(said.append)
    assert len(said) == (1 if expected else 0)
