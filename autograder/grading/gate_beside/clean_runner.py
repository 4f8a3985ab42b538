"""The student's side of the clean re-run: a plain interpreter inside the sandbox.

It executes the cells the grader sends (the learner's answers and the setup
they need), then answers calls to the learner's functions. It never sees a
test or an expected value. Its `ffn_helpers` is the public build (public.py):
no code that computes an answer is here, and each course function is a stub
that asks the grader, which may refuse. What it reports about itself (patched
modules, results that only pretend to be data) is a hint for the grader, never
a reason to award a point.

Runs as `python -c <rpc.py + this file> FD [PATH]`, FD being its end of the channel and PATH,
without a sandbox (`--unsafe`), the folder that holds the public build.
"""

import builtins
import os
import signal
import socket
import sys
import warnings

import numpy as np

from ...limits import MAX_MESSAGE_CHARS  # RPC-IMPORT: inside the sandbox, rerun.runner_source states it
from .rpc import ChannelError, Codec, Peer, ProtocolError  # RPC-IMPORT: dropped inside the sandbox

_GUARDED_PREFIXES = ("ffn_helpers",)
_GUARDED_MODULES = ("builtins", "math", "numpy", "numpy.testing", "numpy.linalg", "numpy.random", "numpy.lib",
                    "numpy._core.numeric", "numpy._core.fromnumeric", "numpy._core.multiarray", "numpy._core.umath",
                    "numpy.core.numeric", "numpy.core.fromnumeric", "scipy.special")
_GUARDED_SYS = ("displayhook", "excepthook", "modules", "meta_path", "path_hooks")
_DATA_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict)
_LOOKALIKES = (np.ndarray, np.generic, int, float, complex, str, bytes, tuple, list, dict)


class _Shell:
    """Enough of `get_ipython()` for the magics learners use; everything else does nothing."""

    def __init__(self, namespace):
        self._namespace = namespace

    def run_line_magic(self, name, line, *args, **kwargs):
        return None

    def run_cell_magic(self, name, line, cell, *args, **kwargs):
        if name in ("time", "timeit", "capture", "prun"):
            exec(compile(cell, "<cell magic>", "exec"), self._namespace)
        return None

    def system(self, *args, **kwargs):
        return None

    def getoutput(self, *args, **kwargs):
        return ""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _snapshot():
    """Identity of every attribute of the modules a submission must not patch."""
    state = {}
    for name, module in list(sys.modules.items()):
        if module is None:
            continue
        if name in _GUARDED_MODULES or any(name == p or name.startswith(p + ".") for p in _GUARDED_PREFIXES):
            try:
                state[name] = {k: id(v) for k, v in list(vars(module).items())}
            except TypeError:
                continue
    state["sys"] = {k: id(getattr(sys, k, None)) for k in _GUARDED_SYS}
    state["sys.modules"] = {k: id(sys.modules.get(k)) for k in state if k not in ("sys", "sys.modules")}
    return state


def _changes(before, after):
    changed = []
    for module, attrs in before.items():
        now = after.get(module, {})
        for key, ident in attrs.items():
            if key in ("__warningregistry__", "__loader__", "__spec__", "_cache"):
                continue
            if key not in now:
                changed.append(f"{module}.{key} (deleted)")
            elif now[key] != ident:
                changed.append(f"{module}.{key}")
    return sorted(changed)


class _StudentCodec(Codec):
    """The student's side's values: as any side's, and a value that only pretends to be data (a subclass of a plain
    type, which the grader would read as the plain one) is noted for the grader."""

    def encode(self, value, buffers, depth=0, data_only=False, budget=None):
        t = type(value)
        if t not in _DATA_TYPES and t is not np.ndarray and t.__module__ != "numpy":
            if isinstance(value, _LOOKALIKES):
                self.peer.lying.append(f"a {t.__name__}, a subclass of {t.__mro__[1].__name__}, not the plain type")
        return super().encode(value, buffers, depth, data_only, budget)


class StudentPeer(Peer):
    codec_class = _StudentCodec

    def __init__(self, sock):
        super().__init__(sock, "student", "grader", exports=True)
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        shell = _Shell(self.namespace)
        self.namespace["get_ipython"] = lambda: shell
        self.lying = []
        self.warned = []
        self.changed, self.watched = [], []
        self.substituted = []  # stack of {name: the learner's value} that checks.substitute replaced
        link = sys.modules.get("ffn_helpers._judge")  # the public build's link to the grader (see main)
        if link is not None:
            link._send = self.reference_call  # before the baseline: the link is no patch
        self.guard = _snapshot()
        self.serve_hook = self._notes

    def audit(self):
        """What changed in the guarded modules since the last audit (each change is reported once)."""
        now = _snapshot()
        patched = _changes(self.guard, now)
        self.guard = now
        return patched

    def _notes(self, message):
        notes = {}
        if self.lying:
            notes["lying"], self.lying = self.lying, []
        if self.warned:
            notes["warnings"], self.warned = self.warned[:20], []
        return notes

    def reference_call(self, dotted, args, kwargs):
        """A course function of the public build: the grader computes it from plain data (or refuses)."""
        return self.request({"op": "reference", "name": str(dotted)}, values={"args": list(args),
                                                                           "kwargs": dict(kwargs)})

    def watch(self, args, kwargs):
        self.watched = [(key, value, value.tobytes()) for key, value in [*enumerate(args), *kwargs.items()]
                        if type(value) is np.ndarray]

    def take_writeback(self):
        changed, self.changed = self.changed, []
        return changed

    def perform(self, message, buffers):
        global _running
        if message.get("op") == "interrupts":
            return _interrupts
        _running += 1
        try:
            return self._perform(message, buffers)
        finally:
            _running -= 1

    def _perform(self, message, buffers):
        if message.get("op") != "call":
            return super().perform(message, buffers)
        # Arrays the call changes in place go back to the grader's arrays, as if caller and callee shared them.
        self.watched = []
        # Warnings go back to the grader, which raises them again inside the test: a test that turns
        # warnings into errors judges the learner's code as it would in the notebook.
        errstate = message.get("errstate")
        if not (isinstance(errstate, dict) and set(errstate) <= {"divide", "over", "under", "invalid"}
                and all(v in ("ignore", "warn", "raise", "call", "print", "log") for v in errstate.values())):
            errstate = {}
        with warnings.catch_warnings(record=True) as caught, np.errstate(**errstate):
            warnings.simplefilter("always")
            try:
                return super().perform(message, buffers)
            finally:
                self.changed = [(key, array) for key, array, before in self.watched if array.tobytes() != before]
                for w in caught[:20]:
                    self.warned.append({"category": w.category.__name__, "message": str(w.message)[:MAX_MESSAGE_CHARS]})

    def perform_extra(self, op, message, buffers):
        if op == "exec":
            code = compile(str(message["source"]), str(message.get("label", "<cell>")), "exec")
            try:
                exec(code, self.namespace)
            finally:
                if message.get("trusted"):  # the course's own cell: whatever it sets up is the baseline
                    self.guard = _snapshot()
            return None
        if op == "lookup":
            name = str(message["name"])
            if name not in self.namespace:
                raise NameError(f"name '{name}' is not defined")
            return self.namespace[name]
        if op == "audit":
            return self.audit()
        if op == "substitute":  # checks.substitute in a test: the course's function under the learner's name
            import importlib

            from ffn_helpers import checks

            values = {}
            for name, dotted in dict(message.get("names") or {}).items():
                module_name, _, qualname = str(dotted).rpartition(".")
                if not module_name.startswith("ffn_helpers"):
                    raise ValueError(f"only a function of ffn_helpers can stand in, not {dotted!r}")
                values[str(name)] = getattr(importlib.import_module(module_name), qualname)
            self.substituted.append(checks.rebind(self.namespace, values))
            return None
        if op == "restore":
            from ffn_helpers import checks

            checks.restore(self.namespace, self.substituted.pop() if self.substituted else {})
            return None
        if op == "ready":  # the grader's first request: this process has started and imported what it needs
            return None
        raise ProtocolError(f"unknown request {op!r}")


_MAIN_PID = None  # this process's, set by main(): a warm runner (zygote.py) imported this module in its zygote
_interrupts = 0  # how many interrupts arrived: the grader sends no request until all it sent have (see rerun.py)
_running = 0  # requests being performed: an interrupt that comes between two has nothing to stop


def _interrupted(signum, frame):
    global _interrupts
    if os.getpid() != _MAIN_PID:
        os._exit(0)  # a process the learner's code forked: it has nothing to answer
    _interrupts += 1
    if _running:
        raise KeyboardInterrupt


def _channel(where):
    """The socket to the grader: descriptor `where` (the sandbox), or "tcp:PORT" of 127.0.0.1, which this process
    proves it may use with the secret the grader wrote on its standard input (no sandbox: see rerun.py)."""
    if not where.startswith("tcp:"):
        return socket.socket(fileno=int(where))
    secret = sys.stdin.buffer.readline().strip()
    sock = socket.create_connection(("127.0.0.1", int(where.removeprefix("tcp:"))))
    sock.sendall(secret)
    return sock


def main(where, public=None):
    global _MAIN_PID
    # The grader interrupts a cell or call that overruns its time with SIGINT to the sandbox's process
    # group (bwrap itself ignores it), on Windows with CTRL_BREAK: this process stops what it runs, its
    # forked copies just end.
    _MAIN_PID = os.getpid()
    signal.signal(signal.SIGINT, _interrupted)
    if hasattr(signal, "SIGBREAK"):
        signal.signal(signal.SIGBREAK, _interrupted)
    sock = _channel(where)
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):  # what the learner's code prints goes nowhere
        os.dup2(devnull, std)
    sys.path.insert(0, os.getcwd())
    if public:  # no sandbox to show the public build in the package's place: it comes first on the path
        sys.path.insert(0, public)
    # OpenBLAS takes its work buffers on the first matrix product and exits the process when it cannot:
    # take them now, before a learner's cell can use up the address space.
    np.ones((64, 64)) @ np.ones((64, 64))
    # The public build (public.py), loaded before any learner code: its state is the baseline. Without its link to
    # the grader this is the real package, whose references must not run here: no clean re-run then.
    import ffn_helpers._judge  # noqa: F401

    import ffn_helpers.checks  # noqa: F401

    peer = StudentPeer(sock)
    while True:
        try:
            message, buffers = peer.receive()
            if message.get("op") == "bye":
                break
            peer.serve(message, buffers)
        except ChannelError:
            break
        except KeyboardInterrupt:
            continue  # an interrupt that came as a request ended
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:3])
