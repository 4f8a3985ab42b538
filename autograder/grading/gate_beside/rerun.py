"""The clean re-run: each test judged by the grader's own objects, never by the submission's.

The notebook run (nbgrader's) executes tests in the same kernel as the student's
code, so a submission can patch whatever the tests use. Here the two are split:

- the student's process, in the sandbox, runs only the learner's cells (and the
  course cells they need) and answers calls to the learner's functions;
- the grader's process runs the course's own setup and test cells (hidden tests
  included), taken from the instructor's source notebook, never from the
  submission, in its own namespace. A test sees the learner's objects only
  under the exercise names (the answer cells' grade ids), each as a `Remote`
  handle; every other name it reads (checks, mistakes, np, the worked
  examples) is the course's. Whatever comes back through a handle is plain
  data, and the grader hands the learner nothing but data and callbacks
  (rpc.py's module doc).

No code that computes an answer runs beside the learner's: the student's process
imports the public build of ffn_helpers (public.py), whose functions are stubs
that ask the grader. While an exercise is graded (its answer cell runs, or one of
its tests), the grader computes only the course functions that exercise may call
(its answer cell's metadata) and those its test hands over (`checks.substitute`);
any other is refused, and the test fails as for an unimplemented function, whatever
path the learner's code took to make the call. An allowed function that runs the
exercise's own reference is refused too (the rule: autograder/may_call.py's AllowList).
Each call runs under the deadline of the cell or test that made it (rpc.Peer.perform).
An exercise's tests share one loop budget (gate_in/loop_budget.py), as in the notebook run.

A test passes here when it raises nothing in the grader's process. What its failure
tells the student is disclosure.py's decision.
"""

import ast
import builtins
import contextlib
import dataclasses
import hmac
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ... import may_call
from ...cells import needed, slim
from ...limits import MAX_MESSAGE_CHARS, MAX_TEST_MESSAGE_CHARS
from ..gate_in import confine, unsandboxed, zygote
from ..gate_in.loop_budget import LoopBudget
from . import disclosure, public, rpc
from .course_namespace import CourseNamespace
from .course_namespace import quiet as _quiet

_HERE = Path(__file__).resolve().parent


def runner_source():
    """The program the student's process runs: the channel code, then the limits the runner reads (nothing of the
    grader can be imported in the sandbox), then the runner."""
    rpc_text = (_HERE / "rpc.py").read_text(encoding="utf-8")
    runner = (_HERE / "clean_runner.py").read_text(encoding="utf-8")
    runner = "\n".join(line for line in runner.splitlines() if "# RPC-IMPORT" not in line)
    return rpc_text + f"\n\nMAX_MESSAGE_CHARS = {MAX_MESSAGE_CHARS}\n\n" + runner + "\n"


@dataclass
class TestResult:
    grade_id: str
    exercise: str | None
    max_points: float
    points: float = 0.0
    message: str = ""  # why it failed: the exception's type and message
    timed_out: bool = False
    incomplete: bool = False  # no verdict: the learner's process overran, died or garbled the channel
    mistakes: tuple = ()  # catalogue keys the failing check attached to its exception (checks.failure), as data
    public: str | None = None  # what the student reads instead of `message`, which quotes a private offering's data


@dataclass
class Note:
    """Something the student's process reported about itself (patched modules, reference calls, lying results)."""

    exercise: str | None
    kind: str
    detail: str


@dataclass
class CleanRunResult:
    tests: dict = field(default_factory=dict)  # grade_id -> TestResult
    cell_errors: list = field(default_factory=list)  # (cell label, message) of cells that failed here
    notes: list = field(default_factory=list)
    course_errors: list = field(default_factory=list)  # course cells that failed in the grader (a course bug)


class StudentProcess:
    """The sandboxed interpreter that holds the learner's code."""

    def __init__(self, sandbox, python=sys.executable):
        public.stubbed()  # read ffn_helpers once here, before the judge forks: the build and the judge agree
        (self.sandbox, self.path), self.python = public.in_sandbox(sandbox), python
        self.proc = self.peer = None
        self.interrupts = 0  # sent to the process running now

    def spawn(self):
        """Start the sandboxed process; return the grader's end of its channel."""
        self.interrupts = 0
        if not self.sandbox.isolate:
            return self._spawn_connected()
        ours, theirs = socket.socketpair()
        extra = [self.path] if self.path else []
        warm = zygote.current("runner")
        if warm is not None and zygote.usable(self.sandbox, "runner") and self.python == sys.executable:
            try:
                self.proc = warm.start(self.sandbox, ["3", *extra], channel=theirs)
                theirs.close()
                return ours
            except zygote.ZygoteError as exc:
                print(f"the clean runner starts the plain way: {exc}", file=sys.stderr, flush=True)
        try:
            self.proc = subprocess.Popen(
                self.sandbox.command([self.python, "-c", runner_source(), str(theirs.fileno()), *extra]),
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, cwd=self.sandbox.cwd,
                preexec_fn=_sandboxed_child)
        finally:
            theirs.close()
        return ours

    def _spawn_connected(self):
        """Without the sandbox (a learner's `check` on macOS, Windows or Linux without bubblewrap), where Windows
        cannot hand a process a socket: it connects to a port of 127.0.0.1 and proves it is the process started
        here with a secret it reads on its standard input (after its own code, `_BOOTSTRAP`). Any other connection
        is closed unanswered."""
        secret, source = secrets.token_hex(16).encode(), runner_source().encode()
        with socket.create_server(("127.0.0.1", 0)) as server:
            self.proc = subprocess.Popen(
                self.sandbox.command([self.python, "-c", _BOOTSTRAP, f"tcp:{server.getsockname()[1]}",
                                      *([self.path] if self.path else [])]),
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.sandbox.cwd,
                **unsandboxed.new_group(), **({"preexec_fn": _ignore_sigint} if os.name == "posix" else {}))
            with contextlib.suppress(OSError):
                self.proc.stdin.write(b"%d\n" % len(source) + source + secret + b"\n")
                self.proc.stdin.close()
            deadline = time.monotonic() + 60  # start-up, as `connect` allows
            while time.monotonic() < deadline and self.proc.poll() is None:
                server.settimeout(0.5)
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                if hmac.compare_digest(_first_bytes(conn, len(secret)), secret):
                    conn.settimeout(None)
                    return conn
                conn.close()
        raise rpc.ChannelClosed("the learner's process ended, or did not connect, before it was ready")

    def start(self, on_reply, on_reference):
        """Spawn, and speak to it from this process (judge.Controlled speaks to it from the judge's)."""
        self.peer = connect(self.spawn(), on_reply, on_reference)

    def interrupt(self):
        """SIGINT to the sandbox's process group: bwrap ignores it, the runner raises KeyboardInterrupt."""
        self.interrupts += 1
        unsandboxed.interrupt(self.proc)

    def stop(self):
        if self.proc is None:
            return
        unsandboxed.kill_tree(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.peer is not None:
            self.peer.sock.close()
        self.proc = self.peer = None


# The runner (36 KB) comes on standard input, not as `-c` text: Windows caps a command line at 32,767 characters.
# Then the secret follows, which clean_runner reads.
_BOOTSTRAP = ("import sys\nsource = sys.stdin.buffer.read(int(sys.stdin.buffer.readline()))\n"
              "exec(compile(source, '<string>', 'exec'))\n")


def _first_bytes(conn, n, timeout=5.0):
    """The first `n` bytes a new connection sends (fewer if it stops or closes first)."""
    data, end = b"", time.monotonic() + timeout
    with contextlib.suppress(OSError):
        while len(data) < n and time.monotonic() < end:
            conn.settimeout(max(0.01, end - time.monotonic()))
            chunk = conn.recv(n - len(data))
            if not chunk:
                break
            data += chunk
    return data


def connect(sock, on_reply, on_reference):
    """The grader's end of the channel to a just-started learner's process, once it is ready."""
    peer = rpc.Peer(sock, "grader", "student")
    peer.on_reply, peer.on_reference = on_reply, on_reference
    peer.deadline = time.monotonic() + 60  # start-up: imports numpy and the course's helpers
    peer.request({"op": "ready"})
    return peer


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sandboxed_child():
    _ignore_sigint()
    confine.fresh_keyring()  # the sandbox's own (bubblewrap gives it none): not the worker's, not the last student's


INTERRUPT_GRACE = 3.0  # seconds the student's process gets to stop after an interrupt
COURSE_CELL_TIMEOUT = 120.0


def _split_last_expression(code, filename):
    """Compile a cell as nbgrader reads it: the body, and its last expression (a partial-credit score) if any."""
    tree = ast.parse(code, filename)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return compile(tree, filename, "exec"), compile(last, filename, "eval")
    return compile(tree, filename, "exec"), None


def _score(value, max_points):
    """nbgrader's partial credit, minus its gap: only a number is a score; None (no display) is full credit."""
    if value is None:
        return max_points, ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0, f"the test's last expression gave a {type(value).__name__}, not a score"
    return max(0.0, min(float(value), max_points)), ""


def _warning_class(name):
    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Warning) else UserWarning


def emit_warnings(notes):
    """Raise again, in the grader, the warnings the learner's code raised during a call."""
    for w in notes.get("warnings", [])[:20] if isinstance(notes.get("warnings"), list) else []:
        if isinstance(w, dict):
            message = str(w.get("message", ""))[:MAX_MESSAGE_CHARS]
            warnings.warn(message, _warning_class(str(w.get("category"))), stacklevel=3)


class CleanRun:
    """Run the learner's cells in a fresh sandboxed process and judge each test cell in the grader."""

    def __init__(self, cells, sandbox, cell_timeout, references, course_cells, student=None, notebook_timeouts=(),
                 on_cell=None, course_namespace=None):
        """`cells`: the submission's code cells; `course_cells`: the instructor's source notebook's, whose
        setup, demonstrations and tests (hidden ones included) are what the grader runs. `student`: the
        learner's process (judge.Controlled in the worker's confined child; by default started from here).
        `notebook_timeouts`: the tests that timed out in the notebook run, which are not run again here.
        `on_cell(cell)`, if given, is called as each cell or test starts (the progress line's).
        `course_namespace`: course_cells' CourseNamespace, if already built (by default built here)."""
        self.on_cell, self.course_namespace = on_cell, course_namespace
        self.cells, self.sandbox, self.cell_timeout = cells, sandbox, cell_timeout
        self.notebook_timeouts = frozenset(notebook_timeouts)
        self.loops = LoopBudget(cell_timeout)  # keyed by exercise, as the notebook run's
        self._deadline = None  # of the test running now
        self.references, self.course_cells = references, course_cells
        self.student = student or StudentProcess(sandbox)
        self.result = CleanRunResult()
        self.exercises = {c.grade_id for c in course_cells if c.role == "answer" and c.grade_id}
        self.defined_by = _defined_by(cells)  # a name an answer defines -> its exercise (whose call a note is about)
        self._executed = []  # student cells run so far (replayed when the process is restarted)
        self._skipped = set()  # cells that killed or hung the process: not replayed
        self._current_exercise = None
        self._refused = []  # messages of the reference calls refused during the current test
        # what each exercise's answer may call, from the course's cells (never the submission's metadata)
        self.allow = may_call.AllowList({c.grade_id: c.may_call for c in course_cells
                                         if c.role == "answer" and c.grade_id}, self._references_of)
        self._handed = []  # a stack of the dotted names each checks.substitute block under way hands the learner

    # --- the student's process --------------------------------------------------------------------------
    def _on_reply(self, notes, root):
        if not isinstance(notes, dict):
            return
        exercise = (self.defined_by.get(root) if isinstance(root, str) else None) or self._current_exercise
        for kind in ("patched", "reference", "lying"):
            for detail in notes.get(kind, [])[:50] if isinstance(notes.get(kind), list) else []:
                self.result.notes.append(Note(exercise, kind, str(detail)[:300]))
        emit_warnings(notes)

    def _on_reference(self, dotted, args, kwargs):
        """A stub of the public build called: the course's function, if the allow-list lets the exercise under test
        have it computed (may_call.AllowList), else NotImplementedError, the refusal noted for the instructor."""
        handed = [public.resolve(d) for block in self._handed for d in block]
        try:
            with _quiet():
                return self.allow.call(self._current_exercise, dotted, public.resolve(dotted), args, kwargs, handed)
        except may_call.Refused as refused:
            self._refused.append(refused.message)
            note = Note(self._current_exercise, "reference", refused.detail)
            if note not in self.result.notes:
                self.result.notes.append(note)
            raise NotImplementedError(refused.message) from None

    def _references_of(self, exercise):
        """The dotted names of the course's functions that answer `exercise` (integrity.reference_names)."""
        from ..scoring.integrity import reference_names

        return self.references.get(exercise) or reference_names(exercise)

    def _start(self):
        self.student.stop()
        self.student.start(self._on_reply, self._on_reference)
        for cell in self._executed:  # replay what ran before the restart
            self._exec(cell, replay=True)

    def _recover(self, exc):
        """After a channel failure: interrupt an overrunning request, or restart the process; True if it lived."""
        if _interrupted(self.student, exc):
            return True
        self._start()
        return False

    def _audit(self, exercise):
        """Ask the student's process which guarded module attributes changed (only a hint: see the module doc)."""
        try:
            self.student.peer.deadline = time.monotonic() + self.cell_timeout
            patched = self.student.peer.request({"op": "audit"})
        except rpc.ChannelError:
            raise
        except Exception:
            return
        for detail in patched[:50] if isinstance(patched, list) else []:
            self.result.notes.append(Note(exercise, "patched", str(detail)[:300]))

    def _exec(self, cell, replay=False):
        """Run one cell in the student's process; return an error message or ''."""
        self._current_exercise = cell.exercise
        # The course's own cells (the setup's imports) are known to finish: on a loaded machine they get longer.
        limit = max(self.cell_timeout, COURSE_CELL_TIMEOUT) if cell.role == "instructor" else self.cell_timeout
        self.student.peer.deadline = time.monotonic() + limit
        try:
            self.student.peer.request({"op": "exec", "source": cell.python, "label": f"<{cell.label}>",
                                       "trusted": cell.role == "instructor"})
            error = ""
        except rpc.ChannelError as exc:
            message = _failure(exc, limit)
            if isinstance(exc, rpc.ProtocolError):
                self.result.notes.append(Note(cell.exercise, "channel", message))
            if replay:
                raise RuntimeError(f"{cell.label} failed when replayed: {message}") from None
            self._skipped.add(cell.index)  # it hung or killed the process: never replayed
            self._recover(exc)
            return message
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        if cell.role != "instructor" and not replay:
            self._audit(cell.exercise)
        return error

    # --- the whole run ----------------------------------------------------------------------------------
    def run(self):
        tests, student_side = _sides(self.cells, self.course_cells, self.exercises)
        course = self.course_namespace or CourseNamespace.build(self.course_cells)
        namespace = course.fresh()
        self.result.course_errors.extend(course.errors)
        for test in tests:
            self.result.tests[test.grade_id] = TestResult(test.grade_id, test.exercise, test.points)
        try:
            self._start()
            for kind, cell in _schedule(self.cells, student_side, tests):
                if self.on_cell is not None:
                    self.on_cell(cell)
                if kind == "test":
                    self._run_test(cell, namespace)
                    continue
                error = self._exec(cell)
                if error:
                    self.result.cell_errors.append((cell.label, error))
                if cell.index not in self._skipped:
                    self._executed.append(cell)  # replayed after a restart (errors included: partial state)
        except (RuntimeError, rpc.ChannelError, OSError) as exc:
            for outcome in self.result.tests.values():
                if not outcome.message and outcome.points == 0:
                    outcome.message = f"the clean re-run could not finish: {exc}"
                    outcome.incomplete = True
        finally:
            self.student.stop()
        return self.result

    @contextlib.contextmanager
    def _substitute(self, dotted):
        """checks.substitute's other half: the same names rebound in the learner's process for the block."""
        peer = self.student.peer
        peer.deadline = self._deadline  # the test's own: a block inside it gets no time of its own
        peer.request({"op": "substitute", "names": dotted})
        self._handed.append([d for d in dotted.values() if d in public.stubbed()])
        try:
            yield
        finally:
            self._handed.pop()
            peer.deadline = self._deadline
            peer.request({"op": "restore"})

    def _run_test(self, test, namespace):
        outcome = self.result.tests[test.grade_id]
        self._current_exercise = test.exercise
        self._refused = []
        limit, why_short = self._limit(test)
        if limit is None:  # timed out in the notebook run, or its exercise ran out of time: min() would be 0
            outcome.message, outcome.timed_out = why_short, True
            if test.grade_id in self.notebook_timeouts:
                self.loops.overran(_exercise_of(test), test.grade_id)
            return
        try:
            _bind(self.student.peer, test, test.loads & self.exercises, namespace, self.cell_timeout)
            body, last = _split_last_expression(test.python, f"<{test.label}>")
            self._deadline = self.student.peer.deadline = time.monotonic() + limit
            with _quiet(), _hooked(self._substitute):
                exec(body, namespace)
                value = eval(last, namespace) if last is not None else None
            outcome.points, outcome.message = _score(value, test.points)
            self._audit(test.exercise)
        except rpc.ChannelError as exc:
            outcome.points, outcome.message = 0.0, _failure(exc, limit) + why_short
            outcome.timed_out = isinstance(exc, rpc.ChannelTimeout)
            # Under the short limit an overrun is the same loop again: a timeout, not a run to try again.
            outcome.incomplete = not (outcome.timed_out and why_short)
            if outcome.timed_out and why_short:
                self.loops.overran(_exercise_of(test), test.grade_id)  # its second overrun: the rest are not run
            if isinstance(exc, rpc.ProtocolError):
                self.result.notes.append(Note(test.exercise, "channel", outcome.message))
            self._recover(exc)
        except Exception as exc:
            outcome.points, outcome.message = 0.0, f"{type(exc).__name__}: {exc}"[:MAX_TEST_MESSAGE_CHARS]
            outcome.mistakes = disclosure.mistakes(exc, test.exercise)  # named by the check, as data
            outcome.public = disclosure.for_student(exc, test)
        if self._refused:  # a verdict, whatever the learner's code made of the refusal (caught it, hung...)
            outcome.points, outcome.message = 0.0, f"NotImplementedError: {self._refused[0]}"
            outcome.timed_out = outcome.incomplete = False
            outcome.mistakes, outcome.public = (), None

    def _limit(self, test):
        """(seconds the test gets, or None not to run it; why it gets less than the cell's limit, or '')."""
        key = _exercise_of(test)
        if test.grade_id in self.notebook_timeouts:
            took = self.loops.short if key in self.loops.looped else self.cell_timeout
            return None, f"timed out after {took:g} s in the notebook run (not run again in the clean re-run)"
        return self.loops.seconds(key), self.loops.not_run_why(key) or self.loops.shortened_why(key)


def _interrupted(student, exc):
    """After a channel failure: whether the learner's process was interrupted out of an overrunning request and
    lives (False: it must be started again)."""
    if not isinstance(exc, rpc.ChannelTimeout) or exc.request_id is None:
        return False
    student.interrupt()
    student.peer.deadline = time.monotonic() + INTERRUPT_GRACE
    with contextlib.suppress(rpc.ChannelError):
        return _stopped(student, exc.request_id)
    return False


def _stopped(student, request_id):
    """Whether the interrupted request has ended and the process has received every interrupt sent to it. The
    request may have ended by itself just before its interrupt came (a loop whose calls to the grader stop at
    its deadline); an interrupt still on its way would stop the next cell instead. Waits at most until the
    peer's deadline; a channel failure is raised."""
    peer = student.peer
    try:
        peer.await_reply(request_id)
    except rpc.ChannelError:
        raise
    except Exception:  # noqa: S110 (the interrupted request's error, KeyboardInterrupt: it stopped)
        pass
    while True:
        try:
            count = peer.request({"op": "interrupts"})
        except rpc.ChannelError:
            raise
        except Exception:  # noqa: BLE001 (the learner's code changed the runner: start a new process)
            return False
        if type(count) is int and count >= student.interrupts:
            return True
        if time.monotonic() > peer.deadline:
            return False
        time.sleep(0.02)


def _failure(exc, timeout):
    if isinstance(exc, rpc.ChannelTimeout):
        return f"timed out after {timeout:g} s"
    if isinstance(exc, rpc.ChannelClosed):
        return "the learner's code ended the process running it (os._exit, a kill or a crash)"
    return f"the learner's process garbled the grader's channel ({exc})"


def _sides(cells, course, exercises):
    """(the course's tests, the cells the learner's process runs). The grader runs the course's own cells that the
    tests need (course_namespace.py); the student's process runs the answers, and the submission's cells that define
    what the answers use (the course's cells among them cut to what is used)."""
    tests = [c for c in course if c.role == "test" and c.grade_id]
    answers = [c for c in cells if c.role == "answer" and c.grade_id in exercises]
    wanted = set().union(*(c.loads for c in answers))
    others = [c for c in cells if c.role in ("instructor", "learner")]
    providers = needed(cells, wanted, others)
    wanted = set().union(wanted, *(c.loads for c in providers), *(c.loads for c in answers))
    student_side = sorted(answers + [dataclasses.replace(c, python=slim(c.python, wanted))
                                     if c.role == "instructor" else c for c in providers],
                          key=lambda c: c.index)
    return tests, student_side


def _schedule(cells, student_side, tests):
    """The learner's cells and the tests in the submission's order, as the notebook run has them.

    A test runs after the answers above it and before those below, so that what a later
    cell does (hold 2 GiB, patch a module) reaches a test here exactly when it would there.
    """
    position = {c.grade_id: c.index for c in cells if c.role == "test" and c.grade_id}
    last = max((c.index for c in cells), default=0) + 1
    steps = [(c.index, 0, "cell", c) for c in student_side]
    steps += [(position.get(t.grade_id, last), 1, "test", t) for t in tests]
    return [(kind, cell) for _, _, kind, cell in sorted(steps, key=lambda s: s[:2])]


def _defined_by(cells):
    """{a name an answer cell defines (its grade id included): the cell's exercise}, the first answer's."""
    found = {}
    for cell in cells:
        if cell.role == "answer":
            found[cell.grade_id] = cell.exercise
            for name in cell.defines:
                found.setdefault(name, cell.exercise)
    return found


def _bind(peer, test, names, namespace, seconds):
    """Give the test the learner's objects under the exercise `names` it reads, and nothing else (`seconds` each to
    look up)."""
    for name in sorted(names):
        peer.deadline = time.monotonic() + seconds
        try:
            value = peer.request({"op": "lookup", "name": name}, root=name)
        except NameError:
            namespace.pop(name, None)  # never let a test fall back to a course object of that name
            continue
        if isinstance(value, rpc.Remote):
            object.__setattr__(value, "_r_name", name)
            object.__setattr__(value, "_r_root", name)
        namespace[name] = value


def _exercise_of(test):
    """What a test's loop budget is kept by: its exercise (or, a test of none, itself), as in the notebook run."""
    return test.exercise or test.grade_id


@contextlib.contextmanager
def _hooked(hook):
    """checks.substitute, while a test runs here, also rebinds the names in the learner's process."""
    from ffn_helpers import checks

    checks.substitute.hook = hook
    try:
        yield
    finally:
        checks.substitute.hook = None


