"""The grader's parts, each on its own: sizes, the sandbox, the call channel, the integrity checks,
the scoring rule, feedback pages, LMS zips and the progress bar. Fast: no nbgrader batch here."""

import copy
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import types
import warnings
import zipfile
from pathlib import Path

import loops
import nbformat
import nbtools
import numpy as np
import pytest

from autograder import assignments, cells, may_call
from autograder.grading import grade, submissions
from autograder.grading.course import NotebookModel, SourceCellModel
from autograder.grading.dispatch.progress import Progress
from autograder.grading.gate_beside import rerun, rpc
from autograder.grading.gate_beside.clean_runner import StudentPeer
from autograder.grading.gate_in import sandbox
from autograder.grading.gate_out import feedback
from autograder.grading.scoring import integrity, results
from autograder.schema import Status

# ---------------------------------------------------------------- sizes and the sandbox


@pytest.mark.parametrize("text, size", [("2G", 2 * 1024**3), ("512M", 512 * 1024**2), ("1.5GiB", 3 * 1024**3 // 2),
                                        ("4096", 4096), ("64k", 65536)])
def test_parse_size(text, size):
    assert sandbox.parse_size(text) == size


def test_parse_size_says_what_it_expected():
    with pytest.raises(ValueError, match="expected a size like 2G.*got 'lots'"):
        sandbox.parse_size("lots")


def _run(box, code):
    return subprocess.run(box.command([sys.executable, "-c", code]), capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    """A sandbox that may write one folder and must not see another."""
    base = tmp_path_factory.mktemp("sandbox")
    (base / "work").mkdir()
    (base / "secret").mkdir()
    (base / "secret" / "gradebook.db").write_text("grades")
    box = sandbox.Sandbox(writable=(str(base / "work"),), hidden=(str(base / "secret"),), cwd=str(base / "work"),
                          uid=sandbox.slot_uid(5), limits=sandbox.Limits(memory=sandbox.parse_size("1G")))
    box.prepare()
    return box, base


def test_sandbox_probe_succeeds_here():
    ok, why = sandbox.probe()
    assert ok, why


def test_only_an_absolute_path_naming_the_same_file_loses_its_dot_steps(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "x").write_text("the file")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "x").write_text("another file of the same name")
    (tmp_path / "deep" / "link").symlink_to(tmp_path / "a" / "b")
    assert sandbox._reachable(f"{tmp_path}/a/b/../x") == f"{tmp_path}/a/x"
    # deep/link/.. is a/, not deep/: the path the kernel follows names a/x, the lexical one deep/x
    assert sandbox._reachable(f"{tmp_path}/deep/link/../x") == f"{tmp_path}/deep/link/../x"
    assert sandbox._reachable(f"{tmp_path}/missing/../a/x") == f"{tmp_path}/missing/../a/x"
    assert sandbox._reachable("./x") == "./x" and sandbox._reachable("env") == "env"
    # an empty command is a prefix its caller ends (a grade worker's sandbox): the filter's command, nothing after it
    assert sandbox._under_the_filter([])[-1] == sandbox.syscalls.THEN
    assert sandbox._under_the_filter([f"{tmp_path}/a/b/../x", "-c"])[-2:] == [f"{tmp_path}/a/x", "-c"]


def test_the_sandbox_runs_an_interpreter_started_by_a_path_through_another_folder():
    """`../.venv/bin/python` from tests/: Python keeps tests/.. in sys.executable, and tests/ is not mounted in the
    sandbox. This used to fail as "bubblewrap could not create its namespaces"."""
    tests = Path(__file__).parent
    python = os.path.relpath(sys.executable, tests)
    assert python.startswith(".."), python
    run = subprocess.run([python, "-c", "import sys\nfrom autograder.grading.gate_in import sandbox\n"
                          "print(sys.executable)\nprint(*sandbox.probe(), sep='\\n')"],
                         cwd=tests, capture_output=True, text=True, timeout=120)
    started_by, ok, why = (run.stdout.splitlines() + ["", "", ""])[:3]
    assert ".." in started_by, started_by  # the case of the test: Python kept the path through tests/
    assert (ok, run.returncode) == ("True", 0), (why, run.stderr[-2000:])


def test_sandbox_writes_only_its_folder(box):
    box, base = box
    code = ("import os\nopen('mine.txt', 'w').write('ok')\n"
            f"for path in ({str(base / 'outside.txt')!r}, '/etc/ffn-test', {sys.prefix!r} + '/x'):\n"
            "    try:\n        open(path, 'w').write('no')\n        print('WROTE', path)\n"
            "    except OSError as e:\n        print('refused', type(e).__name__)\n")
    run = _run(box, code)
    assert run.returncode == 0, run.stderr
    assert "WROTE" not in run.stdout and run.stdout.count("refused") == 3
    assert (base / "work" / "mine.txt").read_text() == "ok"
    assert not (base / "outside.txt").exists()


def test_sandbox_hides_folders_and_the_network(box):
    box, base = box
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    code = (f"import os, socket\nsecret = {str(base / 'secret')!r}\n"
            "print(os.path.isdir(secret) and sorted(os.listdir(secret)))\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('CONNECTED')\n"
            "except OSError:\n    print('no network')\n")
    try:
        run = _run(box, code)
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    seen, network = run.stdout.split("\n")[:2]
    assert seen in ("False", "[]") and network == "no network"  # absent, or an empty folder over it


def test_sandbox_limits_memory_and_processes(box):
    box, _ = box
    code = ("import os, time\ntry:\n    b = bytearray(3 * 1024**3)\n    print('ALLOCATED')\n"
            "except MemoryError:\n    print('memory refused')\n"
            "n = 0\ntry:\n    for _ in range(5000):\n        if os.fork() == 0:\n            time.sleep(20)\n"
            "            os._exit(0)\n        n += 1\nexcept OSError:\n    print('fork refused after', n)\n")
    run = _run(box, code)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "memory refused"
    if sandbox.slot_uid(5) is not None:  # the process limit is only enforced for a non-root uid
        assert lines[1].startswith("fork refused after") and int(lines[1].split()[-1]) < 5000


def test_sandbox_memory_backed_folders_are_bounded(box):
    """/tmp and /dev/shm are tmpfs, which RLIMIT_AS does not count: each stops at Limits.tmp_size (256 MiB)."""
    box, _ = box
    code = ("import errno, os\nfor folder in ('/tmp', '/dev/shm'):\n    n = 0\n    try:\n"
            "        for part in range(64):  # files of 16 MiB: each under the file size limit\n"
            "            with open(f'{folder}/fill-{part}', 'wb') as f:\n                for _ in range(16):\n"
            "                    f.write(bytes(1 << 20))\n                    f.flush()\n                    n += 1\n"
            "    except OSError as e:\n        print(folder, n, errno.errorcode[e.errno])\n")
    run = _run(box, code)
    assert run.returncode == 0, run.stderr
    full = {line.split()[0]: (int(line.split()[1]), line.split()[2]) for line in run.stdout.splitlines()}
    bound = box.limits.tmp_size >> 20
    assert full.keys() == {"/tmp", "/dev/shm"}, run.stdout
    assert all(bound - 2 <= mib <= bound and why == "ENOSPC" for mib, why in full.values()), full


def test_sandbox_keeps_a_python_that_lives_under_tmp(tmp_path, monkeypatch):
    """A checkout cloned under /tmp: its interpreter survives the sandbox's fresh /tmp; its course stays hidden."""
    if not str(tmp_path).startswith("/tmp/"):
        pytest.fail(f"this test needs pytest's temporary folder under /tmp, got {tmp_path}")
    checkout, course = tmp_path / "checkout", tmp_path / "checkout" / "autograder" / "course"
    (checkout / "bin").mkdir(parents=True)
    course.mkdir(parents=True)
    (course / "gradebook.db").write_text("grades")
    tool = checkout / "bin" / "tool"
    tool.write_text(f"#!/bin/sh\necho alive; ls {course}\n")
    tool.chmod(0o755)
    monkeypatch.setattr(sandbox, "required_paths", lambda: [*_REQUIRED, str(checkout)])
    box = sandbox.Sandbox(hidden=(str(course),), uid=sandbox.slot_uid(6))
    run = subprocess.run(box.command([str(tool)]), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["alive"]  # it ran, and the course folder over it is empty


def test_a_sandboxed_python_reads_the_bytecode_precompile_wrote(tmp_path):
    """A sandboxed process cannot save what it compiles: sandbox.precompile writes it beforehand, readable by the
    sandbox's user under any umask. The proof that the bytecode is what ran: the source changed afterwards (same
    size, same time), and the sandboxed import still sees the value it was compiled from."""
    lib = tmp_path / "lib"
    (lib / "pkg").mkdir(parents=True)
    source = lib / "pkg" / "mod.py"
    source.write_text("X = 1\n")
    old = os.umask(0o077)
    try:
        sandbox.precompile(lib)
    finally:
        os.umask(old)
    stat = source.stat()
    source.write_text("X = 2\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    for folder in (tmp_path, lib, lib / "pkg"):
        folder.chmod(0o755)
    source.chmod(0o644)
    box = sandbox.Sandbox(readonly=(str(lib),), cwd=str(lib), uid=sandbox.slot_uid(7))
    run = subprocess.run(box.command([sys.executable, "-c", "import pkg.mod; print(pkg.mod.X)"]),
                         capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(lib)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1"


def test_precompile_leaves_a_folder_it_may_not_write_as_it_is(tmp_path):
    (tmp_path / "mod.py").write_text("X = 1\n")
    tmp_path.chmod(0o555)
    try:
        sandbox.precompile(tmp_path)  # no error: the modules are compiled when imported, as before
    finally:
        tmp_path.chmod(0o755)
    if os.geteuid() != 0:  # root writes anyway
        assert not (tmp_path / "__pycache__").exists()


_REQUIRED = sandbox.required_paths()


def test_refuses_to_grade_without_a_sandbox(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "probe", lambda limits=None: (False, "bwrap: creating new namespace failed"))
    assert grade.check_sandbox(sandbox.Limits(), unsafe=False) is False
    err = capsys.readouterr().err
    assert "CANNOT BE SET UP" in err and "Refusing to grade" in err and "--unsafe" in err
    assert grade.check_sandbox(sandbox.Limits(), unsafe=True) is True
    assert "WITHOUT isolation" in capsys.readouterr().err


# ---------------------------------------------------------------- the call channel


@pytest.fixture
def socket_pair():
    """Two connected sockets, closed after the test (a leaked one warns in whichever later test collects it)."""
    a, b = socket.socketpair()
    with a, b:
        yield a, b


def test_data_round_trips_exactly(socket_pair):
    a, b = socket_pair
    left, right = rpc.Peer(a, "grader", "student"), rpc.Peer(b, "student", "grader")
    value = {"x": np.arange(6, dtype=np.float64).reshape(2, 3) / 7, "n": (1, 2.5, None, True, "é", b"\x00"),
             "c": 1 + 2j, "s": np.float32(0.1), "nan": float("nan"), 3: [np.array(["a", "bc"])]}
    buffers = []
    encoded = left.codec.encode(value, buffers)
    left.send({"v": encoded}, buffers)
    message, bufs = right.receive()
    back = right.codec.decode(message["v"], bufs)
    assert back["x"].dtype == np.float64 and np.array_equal(back["x"], value["x"])
    assert back["n"] == value["n"] and back["c"] == value["c"] and back[3][0].tolist() == ["a", "bc"]
    assert type(back["s"]) is np.float32 and back["s"] == value["s"] and np.isnan(back["nan"])


def test_objects_arrays_are_not_data(socket_pair):
    a, b = socket_pair
    left, right = rpc.Peer(a, "grader", "student"), rpc.Peer(b, "student", "grader")
    buffers = [np.array([1, 2]).tobytes()]
    left.send({"v": {"$a": 0, "dtype": "|O", "shape": [2]}}, buffers)
    message, bufs = right.receive()
    with pytest.raises(rpc.ProtocolError, match="cannot be sent"):
        right.codec.decode(message["v"], bufs)
    left.send({"v": {"$a": 0, "dtype": "<f8", "shape": [5]}}, buffers)
    message, bufs = right.receive()
    with pytest.raises(rpc.ProtocolError, match="does not match its shape"):
        right.codec.decode(message["v"], bufs)


@pytest.fixture
def student():
    """A student's side of the channel, served from a thread of this process."""
    a, b = socket.socketpair()
    peer = StudentPeer(b)
    grader = rpc.Peer(a, "grader", "student")
    notes = []
    grader.on_reply = lambda n, root: (notes.append(n), rerun.emit_warnings(n))

    def serve():
        while True:
            try:
                message, buffers = peer.receive()
                peer.serve(message, buffers)
            except rpc.ChannelError:
                return

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    yield grader, notes
    a.close()  # the student's side sees the channel close and returns
    server.join(10)
    b.close()


def _exec(grader, source):
    return grader.request({"op": "exec", "source": source, "label": "<test>"})


def test_calls_return_plain_data_and_call_back(student):
    grader, _ = student
    _exec(grader, "import numpy as np\ndef twice(x, f=None):\n    x = np.asarray(x) * 2\n"
                  "    return x if f is None else f(x)\n")
    twice = grader.request({"op": "lookup", "name": "twice"}, root="twice")
    assert isinstance(twice, rpc.Remote)
    out = twice(np.array([1.0, 2.0]))
    assert type(out) is np.ndarray and out.tolist() == [2.0, 4.0]
    assert twice([1, 2], f=lambda y: float(np.sum(y))) == 6.0  # the grader's function, called from the student's side


def test_student_errors_become_grader_exceptions(student):
    grader, _ = student
    _exec(grader, "def todo(x):\n    raise NotImplementedError()\nclass Odd(Exception):\n    pass\n"
                  "def odd(x):\n    raise Odd('strange')\n")
    with pytest.raises(NotImplementedError):
        grader.request({"op": "lookup", "name": "todo"})(1)
    with pytest.raises(rpc.RemoteError, match="Odd: strange"):
        grader.request({"op": "lookup", "name": "odd"})(1)


def test_lying_results_and_patches_are_reported(student, monkeypatch):
    grader, notes = student
    monkeypatch.setattr(np, "allclose", np.allclose)  # the "student" runs in this process: undo its patch after
    _exec(grader, "import numpy as np\nclass Liar(np.ndarray):\n    def __eq__(self, o):\n        return True\n"
                  "def f(x):\n    np.allclose = lambda *a, **k: True\n    return np.zeros(2).view(Liar)\n")
    out = grader.request({"op": "lookup", "name": "f"}, root="f")(1)
    assert isinstance(out, rpc.Remote)  # a subclass is not data: the test cannot compare it as an array
    assert "lying" in {k for n in notes for k in n}
    assert "numpy.allclose" in grader.request({"op": "audit"})
    assert grader.request({"op": "audit"}) == []  # each change is reported once


def test_student_warnings_reach_the_test(student):
    grader, _ = student
    _exec(grader, "import warnings\ndef noisy(x):\n    warnings.warn('overflow', RuntimeWarning)\n    return x\n")
    noisy = grader.request({"op": "lookup", "name": "noisy"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert noisy(3) == 3  # a warning costs nothing...
    assert [str(w.message) for w in caught] == ["overflow"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ...unless the test turns warnings into errors
        with pytest.raises(RuntimeWarning):
            noisy(3)


def test_in_place_changes_reach_the_callers_arrays(student):
    grader, _ = student
    _exec(grader, "def bump(z, scale=None):\n    z += 1\n    if scale is not None:\n        scale *= 2\n    return 0\n")
    bump = grader.request({"op": "lookup", "name": "bump"})
    z, scale, kept = np.zeros(3), np.ones(2), (np.zeros(2),)
    bump(z, scale=scale)
    assert z.tolist() == [1.0, 1.0, 1.0] and scale.tolist() == [2.0, 2.0]
    bump(kept[0][:1])  # a view is copied across: the change lands in the view, hence in its base
    assert kept[0].tolist() == [1.0, 0.0]


def test_the_callers_errstate_holds_on_the_other_side(student):
    grader, _ = student
    _exec(grader, "import numpy as np\ndef explode(z):\n    return np.exp(z)\n")
    explode = grader.request({"op": "lookup", "name": "explode"})
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        explode(np.array([1000.0]))


def test_the_grader_hands_out_no_objects(student):
    """Only data and callbacks reach the student's side: no handle into the grader, nothing to walk from."""
    grader, _ = student
    _exec(grader, "def probe(f):\n    found = []\n"
                  "    for name in ('__globals__', '__self__', '__closure__', '__code__', '__class__', 'os', 'np'):\n"
                  "        try:\n            getattr(f, name).__class__\n            found.append(name)\n"
                  "        except AttributeError:\n            pass\n"
                  "    return [type(f).__name__, found]\n"
                  "def call_with(f, g):\n    return f(g)\n"
                  "def pass_itself(f):\n    return f(pass_itself)\n")
    probe = grader.request({"op": "lookup", "name": "probe"})
    kind, reachable = probe(lambda v: v)
    assert kind == "Callback" and reachable == ["__class__"]  # its own class, on the student's side
    with pytest.raises(TypeError, match="only data"):
        probe(rpc)  # a module, an object of the grader's: refused before it is sent
    with pytest.raises(TypeError, match="only data"):
        grader.request({"op": "lookup", "name": "pass_itself"})(lambda v: v)  # a callback takes data only
    call_with = grader.request({"op": "lookup", "name": "call_with"})
    assert call_with(lambda v: float(np.sum(v)) * 2, np.array([1.0, 2.0])).__class__ is float


def test_the_grader_serves_only_callbacks(socket_pair):
    a, b = socket_pair
    grader, student = rpc.Peer(a, "grader", "student"), rpc.Peer(b, "student", "grader", exports=True)
    student.send({"op": "getattr", "id": 1, "target": {"$h": 1, "o": "grader"}, "name": "os"})
    message, buffers = grader.receive()
    with pytest.raises(rpc.ProtocolError, match="does not serve"):
        grader.serve(message, buffers)


@pytest.mark.parametrize("value", [
    ["x" * 60_000] * 5_000,  # as an array of strings (np.asarray): 1.2 GB from 300 MB
    ["x"] * 5_000,  # more strings than a message may hold
    list(range(300_000)),
    "y" * 100_000,
])
def test_a_message_is_bounded_before_it_is_built(socket_pair, value):
    a, b = socket_pair
    left = rpc.Peer(a, "student", "grader", exports=True)
    with pytest.raises(ValueError, match="too long|larger than a message"):
        left.codec.encode(value, [])
    right = rpc.Peer(b, "grader", "student")
    raw = {"$t": value} if isinstance(value, list) else value  # a student's side that skips its own checks
    if len(json.dumps(raw)) < rpc.MAX_HEADER:
        sender = threading.Thread(target=left.send, args=({"v": raw}, []), daemon=True)
        sender.start()
        message, bufs = right.receive()
        sender.join(10)
        with pytest.raises(rpc.ProtocolError):
            right.codec.decode(message["v"], bufs)


def test_a_handle_has_no_items_or_length(student):
    """numpy must see a learner's object as one opaque thing, never a sequence to pull item by item."""
    grader, _ = student
    _exec(grader, "class Endless:\n    def __len__(self):\n        return 10**9\n"
                  "    def __getitem__(self, i):\n        return 'z' * 60_000\n"
                  "def make():\n    return Endless()\n")
    endless = grader.request({"op": "lookup", "name": "make"})()
    assert isinstance(endless, rpc.Remote)
    assert np.asarray(endless).dtype == object and np.asarray(endless).shape == ()
    with pytest.raises(TypeError):
        len(endless)


def test_a_finding_outside_an_answer_costs_nothing():
    found = integrity.static_findings(_cells(SETUP, "import socket\nnp.allclose = print", "class checks:\n    pass",
                                             roles={0: "instructor", 1: "learner", 2: "learner"}))
    assert {f.kind for f in found} == {"review", "monkeypatch", "shadow"}
    assert not any(f.costs_points for f in found)  # a scratch cell: shown for review, no exercise to charge


def test_naming_a_module_is_no_finding():
    found = integrity.static_findings(_cells(SETUP, "import gc, importlib, inspect, os, sys, ctypes\n"
                                             "def ffn_forward(x, W1, b1, W2, b2):\n    return x",
                                             roles={0: "instructor"}))
    assert found == []


def test_importing_the_same_module_again_is_no_shadowing():
    found = integrity.static_findings(_cells(SETUP, "import numpy as np\nfrom ffn_helpers import checks\n"
                                             "def ffn_forward(x, W1, b1, W2, b2):\n    return x",
                                             roles={0: "instructor"}))
    assert found == []


def test_channel_errors_escape_except_exception():
    assert not issubclass(rpc.ChannelTimeout, Exception)  # a test's `except Exception` must not swallow them


# ---------------------------------------------------------------- integrity: what code does


def _cells(*sources, roles=None):
    nb = nbformat.v4.new_notebook()
    for i, src in enumerate(sources):
        cell = nbformat.v4.new_code_cell(src)
        role = (roles or {}).get(i, "answer")
        if role == "answer":
            cell.metadata["nbgrader"] = {"grade_id": "ffn_forward", "solution": True, "grade": False,
                                         "locked": False}
        elif role == "instructor":
            cell.metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "grade": False, "solution": False}
        nb.cells.append(cell)
    return cells.code_cells(nb)


SETUP = "import numpy as np\nimport ffn_helpers as ref\nfrom ffn_helpers import checks, mistakes"  # as the notebooks


@pytest.mark.parametrize("answer, kind", [
    ("np.allclose = lambda *a, **k: True", "monkeypatch"),
    ("import numpy\nnumpy.testing.assert_allclose = print", "monkeypatch"),
    ("checks.check = lambda *a, **k: None", "monkeypatch"),
    ("import builtins\nbuiltins.abs = lambda x: 0", "monkeypatch"),
    ("setattr(np, 'array_equal', lambda *a: True)", "monkeypatch"),
    ("vars(np)['isclose'] = None", "monkeypatch"),
    ("import sys\nsys.displayhook = print", "monkeypatch"),
    ("get_ipython().showtraceback = lambda *a, **k: None", "monkeypatch"),
    ("ip = get_ipython()\nip.display_formatter.formatters['text/plain'].for_type(int, str)", "monkeypatch"),
    ("get_ipython().input_transformers_post.append(lambda lines: lines)", "monkeypatch"),
    ("import gc\ngc.get_referents(np)", "monkeypatch"),  # importing gc is no evidence, using it to reach objects is
    ("import ctypes\nctypes.cast(id(np), ctypes.py_object)", "monkeypatch"),
    ("class checks:\n    def check(*a, **k):\n        pass", "shadow"),
    ("import math as np", "shadow"),
    ("from ffn_helpers import mistakes as checks", "shadow"),
    ("def ffn_forward(x, W1, b1, W2, b2):\n    return ref.ffn_forward(x, W1, b1, W2, b2)", "reference"),
    ("from ffn_helpers.ffn import ffn_trace\ndef ffn_forward(*a):\n    return ffn_trace(*a).y", "reference"),
    ("def ffn_forward(x, W1, b1, W2, b2):\n    return mistakes.forward_pass.ffn_variant(x, W1, b1, W2, b2)",
     "reference"),  # the catalogue of mistakes computes the right FFN with its defaults
    ("from ffn_helpers.mistakes.forward_pass import ffn_variant\ndef ffn_forward(*a):\n    return ffn_variant(*a)",
     "reference"),
    ("from ffn_helpers import _fast\ndef ffn_forward(*a):\n    return _fast.ffn_rows_in_threads(*a, 'relu')",
     "reference"),  # ffn_helpers' private FFN kernel
    ("def ffn_forward(*a):\n    return ref._fast.ffn_rows_in_threads(*a, 'relu')", "reference"),
    ("from ffn_helpers._fast import ffn_rows_in_threads as f\ndef ffn_forward(*a):\n    return f(*a, 'relu')",
     "reference"),
    ("class Yes:\n    def __eq__(self, other):\n        return True", "lying"),
    ("class A(np.ndarray):\n    pass", "lying"),
    ("import os\nos._exit(0)", "review"),
    ("import socket", "review"),
    ("import shutil\nshutil.rmtree('..')", "review"),
])
def test_static_findings(answer, kind):
    found = integrity.static_findings(_cells(SETUP, answer, roles={0: "instructor"}))
    assert kind in {f.kind for f in found}, found
    assert all(f.exercise == "ffn_forward" for f in found)


def test_a_reach_into_private_code_is_one_finding_where_it_enters():
    answer = "def ffn_forward(*a):\n    return ref._fast.ffn_rows_in_threads(*a)"
    found = integrity.static_findings(_cells(SETUP, answer, roles={0: "instructor"}))
    assert [(f.kind, f.detail) for f in found] == [("reference", "reaches into ffn_helpers' private code "
                                                                 "(ffn_helpers._fast)")]


def test_magics_a_learner_uses_are_not_flagged():
    found = integrity.static_findings(_cells(SETUP, "%%time\ndef ffn_forward(x, W1, b1, W2, b2):\n    return x",
                                             "%timeit ffn_forward(1, 2, 3, 4, 5)\n%matplotlib inline",
                                             roles={0: "instructor", 2: "learner"}))
    assert found == []


@pytest.mark.parametrize("aid", [a for a in assignments() if nbtools.test_ids(nbtools.source(a))])
def test_no_solution_is_flagged(aid):
    """The worked solutions and the course's own cells raise no flag (no false alarms on honest code)."""
    found = integrity.static_findings(cells.code_cells(nbtools.solution(aid)))
    assert [f for f in found if f.costs_points] == []


# ---------------------------------------------------------------- integrity: the notebook's structure


def _model(nb):
    out = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta and meta.get("grade_id"):
            out.append(SourceCellModel(meta["grade_id"], cell.cell_type, bool(meta.get("locked")), cell.source,
                                       bool(meta.get("grade")), bool(meta.get("solution")), bool(meta.get("task")),
                                       float(meta.get("points", 0) or 0)))
    return NotebookModel("02_forward_pass", out)


@pytest.fixture(scope="module")
def released():
    learner = nbtools.learner("02_forward_pass")
    return learner, _model(nbtools.source("02_forward_pass"))


def _structure(nb, model):
    return integrity.structure_findings(copy.deepcopy(nb), model)


def test_an_untouched_notebook_has_no_structure_findings(released):
    learner, model = released
    assert _structure(learner, model)[0] == []
    assert _structure(nbtools.solution("02_forward_pass"), model)[0] == []  # hidden tests shown: still the course's


def test_tampering_is_found(released):
    learner, model = released
    by_id = nbtools.cells_by_id(learner)
    deleted = copy.deepcopy(learner)
    deleted.cells = [c for c in deleted.cells if nbtools.grade_id(c) != "test_linear_torch"]
    edited = copy.deepcopy(learner)
    nbtools.cells_by_id(edited)["test_ffn_forward"].source = "pass"
    unlocked = copy.deepcopy(learner)
    nbtools.cells_by_id(unlocked)["test_ffn_forward"].metadata.nbgrader["locked"] = False
    duplicated = copy.deepcopy(learner)
    duplicated.cells.append(copy.deepcopy(by_id["test_dead_fraction"]))
    for nb, exercise, words in [(deleted, "linear_torch", "deleted"), (edited, "ffn_forward", "edited"),
                                (unlocked, "ffn_forward", "metadata"), (duplicated, "dead_fraction", "duplicated")]:
        found, fixed = _structure(nb, model)
        assert [(f.kind, f.exercise) for f in found] == [("tamper", exercise)], found
        assert words in found[0].detail
    found, fixed = _structure(duplicated, model)
    ids = [nbtools.grade_id(c) for c in fixed.cells if nbtools.grade_id(c)]
    assert ids.count("test_dead_fraction") == 1  # the copy nbgrader would choke on is gone


# ---------------------------------------------------------------- the scoring rule


def _result_cell(outputs, execution_count=1):
    cell = nbformat.v4.new_code_cell("checks.ok()")
    cell.outputs, cell.execution_count = [nbformat.from_dict(o) for o in outputs], execution_count
    return cell


def test_notebook_run_score():
    stderr = {"output_type": "stream", "name": "stderr", "text": "RuntimeWarning: overflow\n"}
    error = {"output_type": "error", "ename": "AssertionError", "evalue": "no", "traceback": []}
    shown = {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": "'full marks please'"}}
    partial = dict(shown, data={"text/plain": "0.5"})
    assert results.notebook_run_score(_result_cell([stderr]), 2) == (2.0, "")  # a warning costs nothing
    assert results.notebook_run_score(_result_cell([error]), 2)[0] == 0
    assert results.notebook_run_score(_result_cell([shown]), 2)[0] == 0  # not a score: no credit
    assert results.notebook_run_score(_result_cell([partial]), 2) == (0.5, "")
    assert results.notebook_run_score(_result_cell([], execution_count=None), 2) == (0.0, "not run")


def _every_test_passed(model):
    """A notebook run and a clean re-run in which every test cell of `model` passed."""
    from autograder.grading.gate_beside.rerun import CleanRunResult, TestResult

    tests = [c for c in model.cells if c.grade]
    notebook = nbformat.v4.new_notebook()
    for c in tests:
        cell = _result_cell([])
        cell.metadata["nbgrader"] = {"grade_id": c.name, "grade": True, "points": c.points}
        notebook.cells.append(cell)
    return notebook, CleanRunResult(tests={c.name: TestResult(c.name, None, c.points, c.points) for c in tests})


def test_both_runs_must_agree_and_flags_zero_an_exercise(released):
    _, model = released
    notebook, clean = _every_test_passed(model)
    clean.tests["test_ffn_forward"].points, clean.tests["test_ffn_forward"].message = 0.0, "AssertionError: wrong"
    flags = [integrity.Finding("reference", "dead_fraction", "calls the reference")]
    out, findings = results.combine(model, notebook, {}, clean, flags)
    points = {c.grade_id: c.points for c in out.cells}
    assert points["test_ffn_forward"] == 0  # passed in the notebook, failed in the clean re-run
    assert points["test_dead_fraction"] == points["test_dead_fraction_hidden"] == 0  # flagged exercise
    assert points["test_linear_torch"] == 1 and out.status == "flagged"
    assert {(f.kind, f.exercise) for f in findings} == {("reference", "dead_fraction"),
                                                        ("disagreement", "ffn_forward")}


def test_a_clean_re_run_without_a_verdict_is_no_disagreement(released):
    """Trouble in the clean re-run (a busy machine, a killed process) withholds points; it accuses nobody."""
    from autograder.grading.gate_beside.rerun import TestResult

    _, model = released
    notebook, clean = _every_test_passed(model)
    clean.tests["test_ffn_forward"] = TestResult("test_ffn_forward", "ffn_forward", 2.0, 0.0,
                                                 "timed out after 60 s", timed_out=True, incomplete=True)
    out, findings = results.combine(model, notebook, {}, clean, [])
    cell = next(c for c in out.cells if c.grade_id == "test_ffn_forward")
    assert cell.points == 0 and cell.status == "rerun incomplete"
    assert out.status == "graded" and [(f.kind, f.costs_points) for f in findings] == [("review", False)]
    assert "regrade it by hand" in findings[0].detail


def test_a_timeout_under_the_short_limit_is_a_timeout_not_a_disagreement(released):
    """A looping answer's later test may pass in the notebook run (nothing ran there) and overrun its short limit
    in the clean re-run: that is the loop again, 0 points and no accusation, no review."""
    from autograder.grading.gate_beside.rerun import TestResult

    _, model = released
    notebook, clean = _every_test_passed(model)
    clean.tests["test_ffn_forward"] = TestResult("test_ffn_forward", "ffn_forward", 2.0, 0.0,
                                                 "timed out after 3 s (ffn_forward had run past ...)", timed_out=True)
    out, findings = results.combine(model, notebook, {}, clean, [])
    cell = next(c for c in out.cells if c.grade_id == "test_ffn_forward")
    assert (cell.points, cell.status, findings) == (0, "timeout", [])


def test_a_withheld_test_s_review_flag_states_the_real_limit(released):
    from autograder.grading.gate_beside.rerun import TestResult

    _, model = released
    notebook, clean = _every_test_passed(model)
    clean.tests["test_ffn_forward"] = TestResult("test_ffn_forward", "ffn_forward", 2.0, 0.0,
                                                 "timed out after 60 s", timed_out=True, incomplete=True)
    _, findings = results.combine(model, notebook, {}, clean, [], again=True)
    assert [f.detail for f in findings] == [
        "test_ffn_forward: the clean re-run could not finish this test (timed out after 60 s), also when graded "
        "once more, alone, so its points are withheld; regrade it by hand"]


def test_status_order():
    assert Status.worst(["graded", "kernel died", "timeout"]) == "timeout"
    assert Status.worst(["out of memory", "flagged"]) == "flagged"
    assert Status.worst(["flagged", "missing notebook"]) == "missing notebook"
    assert Status.worst([]) == "graded"


# ---------------------------------------------------------------- feedback


def test_feedback_hides_hidden_tests_and_scripts():
    source = nbtools.source("02_forward_pass")
    nb = copy.deepcopy(source)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<script>alert(1)</script>",
                                                                          "text/plain": "<script>x</script>"})]
    model = _model(source)
    tests = [c for c in model.cells if c.grade]
    result = {"notebook": "02_forward_pass", "status": "graded", "score": 0.0, "max_score": model.max_score,
              "flags": [], "cells": [{"grade_id": c.name, "points": 0.0, "max_points": c.points, "status": "failed",
                                      "message": "AssertionError: no", "diagnosis": []} for c in tests]}
    page = feedback.render(nb, result, "someone")
    hidden = [line for cell in source.cells
              for line in nbtools.between_markers(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
              if line.strip()]
    assert hidden and not [line for line in hidden if line.strip() in page]
    assert "<script" not in page and "&lt;script&gt;" in page


def test_nbgraders_feedback_preprocessor_strips_hidden_tests():
    cell = nbformat.v4.new_code_cell("check(1)\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\nok()")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "t", "locked": True, "points": 1, "solution": False}
    cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="bad",
                                           traceback=["----> 3 secret()", "AssertionError: bad"])]
    out, _ = feedback.HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert out.source == "check(1)\nok()"
    assert out.outputs[0]["traceback"] == ["AssertionError: bad"]


# ---------------------------------------------------------------- LMS zips


def test_lms_zip_is_unpacked_into_nbgraders_layout(tmp_path):
    """A download's members never choose where a file goes; nbgrader's layout inside a download is no student's
    folder (issue 47), and a zip of nbgrader's layout alone is read as that."""
    from autograder.grading import course

    config = course.load_config()
    config.LmsCollector.timezone = "UTC"
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ps_alice_attempt_2024-03-01-10-00-00_02_forward_pass.ipynb", "{}")
        zf.writestr("ps_alice_attempt_2024-03-02-09-00-00_02_forward_pass.ipynb", '{"newer": 1}')
        zf.writestr("ps_bob_attempt_2024-03-01-11-30-00_02_forward_pass.ipynb", "{}")
        zf.writestr("../../escape_attempt.ipynb", "{}")
        zf.writestr("carol/02_forward_pass/02_forward_pass.ipynb", '{"layout": 1}')
    found = submissions.find(archive, "02_forward_pass", tmp_path / "scratch", config, log=lambda *a: None)
    assert [s.student for s in found] == ["alice", "bob"]
    alice = found[0].folder
    assert (alice / "02_forward_pass.ipynb").read_text() == '{"newer": 1}'
    assert (alice / "timestamp.txt").read_text().strip() == "2024-03-02 09:00:00"
    assert not list(tmp_path.glob("escape*")) and not list((tmp_path / "scratch").rglob("escape*"))
    layout = tmp_path / "layout.zip"
    with zipfile.ZipFile(layout, "w") as zf:
        zf.writestr("carol/02_forward_pass/02_forward_pass.ipynb", '{"layout": 1}')
    found = submissions.find(layout, "02_forward_pass", tmp_path / "scratch2", config, log=lambda *a: None)
    assert [s.student for s in found] == ["carol"]
    assert (found[0].folder / "02_forward_pass.ipynb").read_text() == '{"layout": 1}'


def test_a_zip_members_name_cannot_drive_the_instructors_terminal(tmp_path, capsys):
    """An LMS keeps the name a student uploaded under: `grade` names a member it skips on the terminal, where an
    escape sequence in it would set the window's title, erase lines and write a false summary."""
    from autograder.grading import course

    evil = "mallory_\x1b]0;GRADES ALL DONE\x07\x1b[2K\x1b[1A\u202egraded 40 submission(s).ipynb"
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(evil, "{}")
    submissions.find(archive, "02_forward_pass", tmp_path / "scratch", course.load_config(), log=grade._say)
    said = capsys.readouterr().err
    assert "skipping mallory_" in said and "GRADES ALL DONE" in said  # named, as text
    assert not set(said) & {"\x1b", "\x07", "\u202e"}, repr(said)
    assert "\\x1b]0;GRADES ALL DONE\\x07" in said and "\\u202e" in said


# ---------------------------------------------------------------- progress


def test_progress_line_has_an_eta():
    stream = io.StringIO()
    bar = Progress(4, stream=stream)
    bar.advance("alice: graded")
    line = stream.getvalue().strip()
    assert line.startswith("[######------------------] 1/4 students") and "ETA" in line and "alice" in line


# ---------------------------------------------------------------- what the clean re-run runs


def test_cells_know_what_they_read_and_bind():
    cell = _cells("import numpy as np\nx = [v.shape for v in items]\ndef f(a):\n    return np.sum(a) + d\n")[0]
    assert cell.stores == {"np", "x", "f"} and cell.defines == {"f"}
    assert cell.loads >= {"items", "np", "d"} and "v" not in cell.loads and "a" not in cell.loads


def test_the_learner_cells_an_answer_needs_are_found_through_assignments_and_aliases():
    found = _cells("import numpy as np", "def mine(x):\n    return np.sum(x)", "unrelated = 1", "_f = mine",
                   "_g, _h = _f, len", "def ffn_forward(x): return _g(x)", roles={i: "learner" for i in range(5)})
    answer, others = found[-1], found[:-1]
    assert [c.index for c in cells.needed(found, answer.loads, others)] == [0, 1, 3, 4]


def _fixpoint(cells_, wanted, providers):
    """What `needed` chooses, by its definition: pass over the providers until none is added."""
    wanted, chosen, changed = set(wanted), set(), True
    while changed:
        changed = False
        for cell in providers:
            if cell.index not in chosen and cell.stores & wanted:
                chosen.add(cell.index)
                wanted |= cell.loads
                changed = True
    return [c for c in cells_ if c.index in chosen]


def test_needed_chooses_the_cells_its_definition_does_in_time_that_follows_the_names():
    rng = np.random.default_rng(7)
    names = [f"n{i}" for i in range(12)]
    for _ in range(300):
        found = [types.SimpleNamespace(index=i, stores=frozenset(rng.choice(names, rng.integers(0, 3))),
                                       loads=frozenset(rng.choice(names, rng.integers(0, 4)))) for i in range(10)]
        providers = [c for c in found if rng.random() < 0.8]
        wanted = set(rng.choice(names, 2))
        assert cells.needed(found, wanted, providers) == _fixpoint(found, wanted, providers)
    # a chain handed on upwards, one link a cell (`a1 = a2` above `a0 = a1`): a pass over every cell per link,
    # as the definition goes, takes about half a minute here
    n = 20_000
    chain = [types.SimpleNamespace(index=i, stores=frozenset([f"a{n - 1 - i}"]), loads=frozenset([f"a{n - i}"]))
             for i in range(n)]
    started = time.process_time()
    assert len(cells.needed(chain, {"a0"}, chain)) == n
    assert time.process_time() - started < 1.0


def test_course_cells_are_cut_to_what_the_answers_use():
    setup = ("import numpy as np\nimport ffn_helpers as ref\nfrom ffn_helpers import checks, mistakes, plots\n"
             "np.random.seed(0)")
    assert cells.slim(setup, {"np", "checks"}) == "import numpy as np\nfrom ffn_helpers import checks"
    assert cells.slim(setup, set()) == "pass"


def test_leftover_sandbox_processes_are_cleared(box):
    box, _ = box
    if box.uid is None:
        pytest.skip("clearing a sandbox uid needs root (the uid is shared with the user otherwise)")
    proc = subprocess.Popen(box.command([sys.executable, "-c", "import time; time.sleep(60)"]), start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not any(_owned_by(box.uid)) and time.monotonic() < deadline:
            time.sleep(0.01)  # polling: until the sandbox's process runs as its uid
        assert any(_owned_by(box.uid))
        assert sandbox.clear_uid(box.uid) >= 1
        assert not any(_owned_by(box.uid))
    finally:
        proc.kill()
        proc.wait()


def _owned_by(uid):
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    yield int(entry)
            except OSError:
                pass


_SYNCHRONOUS = """
import sys
from autograder import upstream
from autograder.grading import course
from autograder.grading.scoring import gradebook
from nbgrader.api import Gradebook
course.ensure_bin_on_path()
scratch, kept = (f"sqlite:///{path}" for path in sys.argv[1:3])
upstream.reuse_gradebook_engines()
gradebook.scratch_writes(scratch)
for url in (scratch, kept):
    with Gradebook(url) as gb:
        gb.add_student("s1")  # nbgrader's own writes, through the engine the worker uses
        print(gb.db.connection().exec_driver_sql("PRAGMA synchronous").scalar())
"""


def test_only_the_workers_scratch_gradebook_skips_the_disk_flush(tmp_path):
    """scratch_writes: nbgrader's per-cell commits to the scratch copy are not flushed; another gradebook's are."""
    done = subprocess.run([sys.executable, "-c", _SYNCHRONOUS, str(tmp_path / "scratch.db"), str(tmp_path / "kept.db")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["0", "2"]  # OFF for the scratch copy; FULL, SQLite's default, for the other


def test_every_reference_answer_in_ffn_helpers_is_known_to_the_integrity_check():
    """A function of ffn_helpers named like an exercise answers it: calling it must be found out."""
    import importlib
    import inspect
    import pkgutil

    import ffn_helpers

    modules = {f"ffn_helpers.{m.name}" for m in pkgutil.iter_modules(ffn_helpers.__path__)
               if not m.name.startswith("_")}
    assert modules == set(integrity.REFERENCE_MODULES[1:]) | set(integrity.NOT_REFERENCES), \
        "list each ffn_helpers module in integrity.REFERENCE_MODULES or NOT_REFERENCES"
    exercises = {gid for aid in nbtools.graded_assignments() for gid in nbtools.answer_ids(nbtools.source(aid))}
    for name in integrity.REFERENCE_MODULES:
        module = importlib.import_module(name)
        for exercise in exercises & {n for n, f in vars(module).items() if inspect.isfunction(f)}:
            assert f"{name}.{exercise}" in integrity.reference_names(exercise), (name, exercise)


def test_calling_a_reference_changes_no_module_the_clean_run_guards():
    """An answer may use another exercise's reference (ffn_forward inside moe_forward, say): on a large input that
    takes ffn_helpers' threaded path, which must not look like a patch ('changed ffn_helpers._fast...')."""
    script = (
        "import numpy as np, ffn_helpers\n"
        "from ffn_helpers import _fast\n"
        "from autograder.grading.gate_beside import clean_runner\n"
        "_fast._N_THREADS = 2  # the threaded path on any machine\n"
        "rng = np.random.default_rng(0)\n"
        "x, W1, W2 = rng.normal(size=(300, 64)), rng.normal(size=(64, 256)), rng.normal(size=(256, 64))\n"
        "assert _fast.splits(x, 256, 'gelu')\n"
        "before = clean_runner._snapshot()\n"
        "ffn_helpers.ffn_forward(x, W1, np.zeros(256), W2, np.zeros(64), activation='gelu')\n"
        "print(clean_runner._changes(before, clean_runner._snapshot()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_the_catalogue_of_mistakes_is_a_reference_of_every_exercise():
    """forward_pass.ffn_variant with its defaults is the FFN: calling any catalogue function is found out."""
    from ffn_helpers.mistakes import forward_pass

    machinery = integrity.answer_machinery()
    assert "ffn_helpers.mistakes.forward_pass.ffn_variant" in machinery
    assert "ffn_helpers.mistakes.for_exercise" in machinery
    assert all(name.startswith("ffn_helpers.mistakes") for name in machinery)
    for exercise in ("ffn_forward", "gelu", "FeedForwardNetwork"):
        assert set(machinery) <= set(integrity.reference_names(exercise))
    rng = np.random.default_rng(0)
    x, W1, b1, W2 = rng.normal(size=(3, 4)), rng.normal(size=(4, 8)), rng.normal(size=8), rng.normal(size=(8, 4))
    b2 = rng.normal(size=4)
    np.testing.assert_allclose(forward_pass.ffn_variant(x, W1, b1, W2, b2),
                               np.maximum(x @ W1 + b1, 0) @ W2 + b2, rtol=1e-12)  # why it must count as a reference


def test_a_workers_folder_is_closed_to_every_other_user(tmp_path):
    """A worker's folder holds its course files and its students' code, outputs and results: mode 0700, its
    user's alone (graded as root, each worker runs as a user of its own, which must not read another's)."""
    import sqlite3
    import stat

    from autograder.grading.dispatch import pool
    from autograder.grading.worker_setup import WorkerSetup

    scratch = tmp_path / "scratch"
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "nbgrader_config.py").write_text("c = get_config()\n")
    sqlite3.connect(tmp_path / "template.db").close()
    (tmp_path / "release").mkdir()
    scratch.mkdir()
    setup = WorkerSetup(model={}, scratch=str(scratch), limits={}, isolate=True, course_notebooks={},
                        uid_base=sandbox.uid_base(), template_db=str(tmp_path / "template.db"),
                        course_root=str(tmp_path / "config"), release_dir=str(tmp_path / "release"))
    worker = pool.WorkerProcess(0, setup, tmp_path / "worker.log", 0)
    try:
        job = types.SimpleNamespace(student="someone", folder=tmp_path / "release")
        taken = Path(worker.take_in(job))
        for folder in (worker.home, taken):
            info = os.stat(folder)
            assert stat.S_IMODE(info.st_mode) == 0o700, f"{folder} has mode {stat.S_IMODE(info.st_mode):o}"
            assert info.st_uid == (worker.uid if worker.uid is not None else os.getuid()), folder
    finally:
        worker.kill()


def test_once_a_test_times_out_its_exercise_s_later_tests_get_the_short_limit_then_are_not_run():
    """A looping answer costs one cell timeout in the notebook run, not one per test (09 has three visible tests
    of ffn_module_backward); another exercise keeps the full limit."""
    from autograder.grading import execute
    from autograder.grading.gate_in.loop_budget import AFTER_TIMEOUT

    nb = nbformat.v4.new_notebook()
    for gid, role in [("f", "solution"), ("test_f_a", "grade"), ("test_f_b", "grade"), ("test_f_c", "grade"),
                      ("g", "solution"), ("test_g", "grade")]:
        cell = nbformat.v4.new_code_cell("f()")
        cell.metadata["nbgrader"] = {"grade_id": gid, role: True}
        nb.cells.append(cell)
    ex = execute.SandboxExecute(timeout=60)
    ex.nb = nb
    ex._start("nb", nb)
    assert [ex._timeout_of(c) for c in nb.cells] == [60] * 6
    ex._timed_out(1)  # test_f_a ran past its 60 s
    assert [ex._timeout_of(c) for c in nb.cells[2:]] == [AFTER_TIMEOUT, AFTER_TIMEOUT, 60, 60]
    ex._timed_out(2)  # test_f_b ran past the short limit too: test_f_c is not run at all
    cell = ex.execute_cell(nb.cells[3], 3)
    assert [(o["ename"], o["evalue"]) for o in cell.outputs] == [
        ("NotRun", "not run: f already ran past its time in test_f_a and test_f_b")]


def test_one_loop_budget_decides_both_runs():
    """The notebook run and the clean re-run keep the same LoopBudget: the short limit after one overrun, nothing
    after two, in the same words; no other module of the grader words the decision again."""
    from autograder.grading.gate_in.loop_budget import AFTER_TIMEOUT, LoopBudget

    loops = LoopBudget(60)
    assert (loops.seconds("f"), loops.not_run_why("f"), loops.shortened_why("f")) == (60, "", "")
    loops.overran("f", "test_f_a")
    assert loops.seconds("f") == AFTER_TIMEOUT and loops.seconds("g") == 60
    assert loops.shortened_why("f") == \
        f" (f had run past the 60 s limit in test_f_a: its later tests get {AFTER_TIMEOUT:g} s)"
    loops.overran("f", "test_f_b")
    assert loops.seconds("f") is None and loops.shortened_why("f") == ""
    assert loops.not_run_why("f") == "not run: f already ran past its time in test_f_a and test_f_b"
    assert LoopBudget(2).short == 2 and LoopBudget(None).short is None  # never more than the cell's own limit
    root = Path(__file__).resolve().parents[1]
    worded = [path.relative_to(root).as_posix() for path in sorted((root / "autograder").rglob("*.py"))
              if "already ran past its time" in path.read_text(encoding="utf-8")]
    assert worded == ["autograder/grading/gate_in/loop_budget.py"], worded


@pytest.mark.parametrize("stuck", ["blocking call", "never ends"])
def test_a_watchdog_kills_at_the_deadline_without_a_kernel(stuck):
    """Past the cell's hard deadline the kill runs in the watchdog's own thread, even while the event loop is held
    by a blocking call; the cell then ends as a timeout, whatever the run made of the kill."""
    import asyncio

    from autograder.grading.gate_in.watchdog import Watchdog

    killed = threading.Event()

    async def run():
        if stuck == "blocking call":
            killed.wait(30)  # holds the event loop until the kill, as a kernel client stuck in a read would
            return "ended by the kill"
        await asyncio.sleep(3600)

    watchdog = Watchdog(killed.set, grace=0.5)
    assert watchdog.deadline(None) is None and watchdog.deadline(10) == 12 and watchdog.deadline(10, 5) == 17
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        loops.run(watchdog.guard(run(), 0.2))
    assert killed.is_set() and watchdog.expired and time.monotonic() - started < 5
    on_time = Watchdog(lambda: pytest.fail("killed a cell that ended in time"), grace=0.5)

    async def quick():
        return "done"

    assert loops.run(on_time.guard(quick(), 0.5)) == "done" and not on_time.expired


def test_a_notebook_run_records_into_the_recorder_it_is_given(monkeypatch):
    """The worker's recorder, passed through nbgrader's configuration (which copies what it sets), is the one the
    run records into and tells which cell starts; the module's default record is left alone."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    from autograder.grading import execute

    seen = []
    recorder = execute.Recorder(on_cell=lambda name, cells, index: seen.append((name, index)))
    ex = execute.SandboxExecute(config=Config({"SandboxExecute": {"recorder": recorder}}), timeout=60)
    assert ex.recorder is recorder

    async def ran(self, cell, *args, **kwargs):
        return cell

    monkeypatch.setattr(NotebookClient, "async_execute_cell", ran)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("y = 2")])
    ex.nb = nb
    ex._start("recorded", nb)
    ex.execute_cell(nb.cells[1], 1)
    assert seen == [("recorded", 1)]
    other = execute.SandboxExecute(timeout=60)  # given none, a run has a recorder of its own: nothing is shared
    assert other.recorder is not recorder and other.recorder is not execute.SandboxExecute(timeout=60).recorder
    assert recorder.runs["recorded"]["timeouts"] == [] and recorder.runs["recorded"]["seconds"]["cells"] > 0


def test_the_exchanges_secret_stays_in_autograded_only_as_nbgrader_writes_it(tmp_path):
    """release_feedback needs submission_secret.txt beside the graded notebook; the student's own `nbgrader
    submit` wrote it and formgrader serves it, so anything but a short hex string, as nbgrader writes, goes."""
    from autograder.grading.student.folders import check_secret

    secret = tmp_path / "submission_secret.txt"
    secret.write_text("3f1c9a2b7d5e4f60a1b2c3d4e5f6a7b8\n")
    check_secret(secret)
    assert secret.read_text() == "3f1c9a2b7d5e4f60a1b2c3d4e5f6a7b8\n"
    for bad in ("<script>alert(1)</script>\n", "a" * 400, "two words\n", "", "3f1c<svg/onload=x>"):
        secret.write_text(bad)
        check_secret(secret)
        assert not secret.exists(), bad
    secret.symlink_to(tmp_path / "elsewhere")
    check_secret(secret)
    assert not secret.is_symlink()


def test_without_util_linux_the_unsandboxed_limits_are_set_by_python(monkeypatch):
    """A learner's `check` on a machine with no `prlimit` (macOS) runs without the sandbox (it needs none), still
    under the memory, CPU and file-size limits: the same command, with Python's resource module setting them."""
    import shutil as shutil_module

    real_which = shutil_module.which
    monkeypatch.setattr(sandbox.shutil, "which", lambda name, *a, **k: None if name == "prlimit" else real_which(name))
    box = sandbox.Sandbox(isolate=False, limits=sandbox.Limits(memory=3 * sandbox.GiB, cpu=123, fsize=5 * sandbox.MiB))
    argv = box.command([sys.executable, "-c", "import resource as r; print(r.getrlimit(r.RLIMIT_AS)[0], "
                        "r.getrlimit(r.RLIMIT_CPU)[0], r.getrlimit(r.RLIMIT_FSIZE)[0])"])
    assert argv[0] == sys.executable and "prlimit" not in argv
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(3 * sandbox.GiB), "123", str(5 * sandbox.MiB)]


# ---------------------------------------------------------------- where a submission's time goes (timing.jsonl)


def test_the_timing_breakdown_splits_the_notebook_run_and_keeps_the_rest():
    from autograder.grading.student.timing import breakdown as _breakdown

    timing = {"notebook run": 5.0, "notebook run: kernel start": 1.0, "notebook run: cells": 2.5,
              "notebook run: kernel stop": 0.25, "clean re-run": 1.0, "feedback": 0.5}
    out = _breakdown(timing, 7.0, [0.75, 0.5])
    assert out["notebook run: nbgrader"] == 1.25  # 5 - 1 - 2.5 - 0.25: nbgrader's own part
    assert out["other"] == 0.5  # 7 - 5 - 1 - 0.5
    assert (out["total"], out["worker cpu"], out["reaped children cpu"]) == (7.0, 0.75, 0.5)
    assert _breakdown({}, 1.0, [0, 0])["notebook run: cells"] == 0.0  # nothing ran: every stage is there, at 0


def test_the_timing_log_keeps_only_bounded_numbers_from_the_worker():
    from autograder.grading.dispatch.driver import log_timing as _log_timing

    log = io.StringIO()
    reply = {"timing": {"cells": 2.0, "junk": "x" * 100, "inf": float("inf"), "negative": -1, "flag": True,
                        "k" * 200: 1.0, "nested": {"a": 1}}}
    _log_timing(log, "s01", reply, 0.125)
    _log_timing(log, "s02", {"timing": ["not", "a", "dict"]}, 0.5)
    first, second = map(json.loads, log.getvalue().splitlines())
    assert first == {"student": "s01", "stages": {"cells": 2.0, "k" * 60: 1.0, "publish": 0.125}}
    assert second == {"student": "s02", "stages": {"publish": 0.5}}


def test_of_an_outputs_metadata_only_a_pngs_text_alternative_crosses_bounded():
    """The grader's run keeps a figure's alt text (the pages show it), as a string of at most 1,500 characters;
    nothing else of the kernel's output metadata, and nothing for an output without a PNG."""
    from autograder.grading.gate_in.outputs import _image_alt

    png = {"image/png": "iVBOR"}
    assert _image_alt({"image/png": {"alt": "a plot", "width": '1" onerror="x'}, "x": 1}, png) == \
        {"image/png": {"alt": "a plot"}}
    assert _image_alt({"image/png": {"alt": "a" * 5000}}, png) == {"image/png": {"alt": "a" * 1500}}
    for metadata in ({"image/png": {"alt": ["a plot"]}}, {"image/png": {"alt": ""}}, {"image/png": "alt"}, "alt",
                     None, {"text/html": {"alt": "a plot"}}):
        assert _image_alt(metadata, png) == {}, metadata
    assert _image_alt({"image/png": {"alt": "a plot"}}, {"text/plain": "x"}) == {}


# ---------------------------------------------------------------- the clean re-run's watch for a reference

@pytest.mark.parametrize("activation, reference", [("gelu", "gelu"), ("silu", "silu")])
@pytest.mark.parametrize("rows", [1, 300])  # one token: the plain path; 300 tokens: split across threads
def test_an_ffn_on_an_identity_network_runs_the_activations_reference(monkeypatch, activation, reference, rows):
    """An answer to gelu_exact or silu_stable that asks the grader for ffn_forward(z, 1, 0, 1, 0) gets σ(z): the
    reference's own code must run on the way, so the watch refuses the call, in the rows' threads too."""
    from ffn_helpers import _fast, activations, ffn

    monkeypatch.setattr(_fast, "_N_THREADS", 2)  # the threaded path on any machine
    z = np.linspace(-4.0, 4.0, rows * 256).reshape(rows, 256)
    W1, W2 = np.eye(256), np.eye(256)
    assert _fast.splits(z, 256, activation) == (rows > 1)
    value, reached = may_call.computed_without([getattr(activations, reference)], ffn.ffn_forward,
                                             (z, W1, None, W2, None), {"activation": activation})
    assert (value, reached) == (None, f"ffn_helpers.activations.{reference}")
    unwatched, nothing = may_call.computed_without([activations.relu], ffn.ffn_forward, (z, W1, None, W2, None),
                                                 {"activation": activation})
    assert nothing is None and np.array_equal(unwatched, getattr(activations, reference)(z))


def test_a_worker_setup_with_an_unknown_or_missing_field_is_refused_naming_them():
    """grade, check and a Dask task make one WorkerSetup; a message that is not one says what it lacks or adds."""
    from autograder.grading.worker_setup import WorkerSetup

    setup = WorkerSetup(model={}, scratch="/s", limits={}, isolate=True, course_notebooks={}, template_db="/t",
                        release_dir="/r", course_root="/c", hidden=("/h",))
    assert WorkerSetup.from_dict(setup.to_dict()) == setup  # what crosses the pipe as JSON comes back the same
    with pytest.raises(ValueError, match=r"unknown: \['seed'\], missing: \['template_db'\]"):
        WorkerSetup.from_dict({**{k: v for k, v in setup.to_dict().items() if k != "template_db"}, "seed": 1})


def test_release_feedback_gives_the_student_a_page_to_read_and_the_course_keeps_its_own_private(tmp_path):
    """The course writes feedback pages 0600; nbgrader's release_feedback copies a page's mode into the exchange,
    where the student (another account) could not read it. The course's config names ReleaseFeedback: the page
    in the exchange is 0644, found only by its secret name in a folder nobody may list, as nbgrader's own are."""
    root = nbtools.scratch_course(tmp_path / "course", "02_forward_pass")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    folder = root / "feedback" / "s1" / "02_forward_pass"
    folder.mkdir(parents=True)
    page = folder / "02_forward_pass.html"
    page.write_text("<p>feedback</p>")
    (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    (folder / "submission_secret.txt").write_text("3f1c9a2b7d5e4f60a1b2c3d4e5f6a7b8")
    page.chmod(0o600)
    done = nbtools.nbgrader("release_feedback", "02_forward_pass", f"--Exchange.root={exchange}",
                            "--CourseDirectory.course_id=ffn", cwd=root)
    assert done.returncode == 0, done.stderr
    released = list((exchange / "ffn" / "feedback").glob("*.html"))
    assert [p.read_text() for p in released] == ["<p>feedback</p>"], done.stderr
    assert stat.S_IMODE(released[0].stat().st_mode) == 0o644
    assert stat.S_IMODE(page.stat().st_mode) == 0o600


def test_a_run_stopped_by_ctrl_c_says_how_to_grade_the_others():
    """The same command grades the others (the ledger skips what was graded), unless it has --force: that grades
    everyone again. test_leftovers stops a real run and reads the line."""
    assert "the same command grades the others" in grade.stopped()
    assert "the same command without --force grades the others" in grade.stopped(force=True)
