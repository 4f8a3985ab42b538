"""The public build of ffn_helpers: what the learner's process of the clean re-run imports instead of the real one.

The real package holds code that computes answers: the reference of every
exercise, private kernels (`_fast`), the catalogue of mistakes (which computes
right answers under other names). None of it may run beside the learner's code,
which could take it out of any wrapper (a closure) or load it by a name built
from strings. So the sandbox shows this build in place of the package's folder:

- the modules of PUBLIC_MODULES, which compute no answer and import nothing of
  ffn_helpers but each other, are copied as they are (the checks' messages and their
  parts, the worked examples);
- every other public function and class is a stub of the same name that sends its
  arguments, as plain data, to the grader (`_judge.py` below, rpc.py's `reference`
  request); the grader runs the course's own function (rerun.CleanRun._on_reference),
  or refuses it while its exercise is under test;
- plain data (numbers, strings, and tuples, lists and dicts of them) is copied;
  private modules and names, and values that are neither, are left out.
"""

import atexit
import functools
import importlib
import inspect
import math
import os
import pkgutil
import shutil
import types
from pathlib import Path

from .. import tempfolders
from ..gate_in.sandbox import precompile

PACKAGE = "ffn_helpers"
# Modules copied as they are, a package with all its modules: no answer is computed there, and they import no module
# of ffn_helpers but each other (tests/test_public_build.py checks both). ffn_helpers._checks holds the parts of checks
# (its comparison and the grading protocol), which checks imports: private, so an answer has no reason to name it.
PUBLIC_MODULES = ("ffn_helpers.checks", "ffn_helpers._checks", "ffn_helpers.examples")

_JUDGE = '''"""The clean re-run's link to the grader: every function of this build of ffn_helpers is computed there."""

_send = None  # set by the learner's process of the clean re-run: (dotted name, args, kwargs) -> the grader's answer
_stubs = {}


def stub(dotted):
    """The function that stands for the course's `dotted` here: a call the grader answers, or refuses."""
    if dotted in _stubs:
        return _stubs[dotted]
    module, _, qualname = dotted.rpartition(".")

    def call(*args, **kwargs):
        if _send is None:
            raise RuntimeError(f"{dotted} is computed by the grader, and none is connected")
        return _send(dotted, args, kwargs)

    call.__module__, call.__qualname__, call.__name__ = module, qualname, qualname.rpartition(".")[2]
    call.__doc__ = f"The course's {qualname}, computed by the grader."
    _stubs[dotted] = call
    return call
'''


def _private(name):
    return any(part.startswith("_") for part in name.split(".")[1:])


@functools.cache
def modules():
    """The public module names of the real package, packages first."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        if not _private(info.name):
            names.append(info.name)
    return tuple(names)


@functools.cache
def copied():
    """The modules the build copies as they are: PUBLIC_MODULES, each package's modules with it."""
    names = []
    for name in PUBLIC_MODULES:
        names.append(name)
        module = importlib.import_module(name)
        if hasattr(module, "__path__"):
            names += [info.name for info in pkgutil.walk_packages(module.__path__, name + ".")]
    return tuple(names)


def _home(value):
    """The dotted name of a function or class of ffn_helpers that the build stubs, or None."""
    if not (inspect.isfunction(value) or inspect.isclass(value)):
        return None
    module = getattr(value, "__module__", "") or ""
    if module not in modules() or module in copied():
        return None
    return f"{module}.{value.__qualname__}"


def _literal(value, depth=0):
    """Python source for plain data (or a stub), or None when the value is neither."""
    if depth > 8:
        return None
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float:
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if (home := _home(value)) is not None:
        return f"_stub({home!r})"
    if type(value) in (tuple, list):
        items = [_literal(v, depth + 1) for v in value]
        if None in items:
            return None
        body = ", ".join(items) + ("," if type(value) is tuple and len(items) == 1 else "")
        return f"({body})" if type(value) is tuple else f"[{body}]"
    if type(value) is dict:
        pairs = [(_literal(k, depth + 1), _literal(v, depth + 1)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def _stub_module(name):
    """The source of module `name` in the public build, and the dotted names it stubs."""
    module = importlib.import_module(name)
    first = (module.__doc__ or "").strip().splitlines()[:1]
    lines = [repr(f"{first[0] if first else name} (public build: each function is computed by the grader)"),
             "", "from ffn_helpers._judge import stub as _stub"]
    stubs = set()
    if hasattr(module, "__path__"):  # a package: its public modules, as the real one has them
        children = [m.rpartition(".")[2] for m in modules() if m.rpartition(".")[0] == name]
        lines += [f"from . import {child}" for child in children]
    for key, value in sorted(vars(module).items()):
        if key.startswith("_") and key not in ("__all__", "__version__"):
            continue
        if isinstance(value, types.ModuleType):
            continue
        source = _literal(value)
        if source is None:
            continue
        lines.append(f"{key} = {source}")
        if (home := _home(value)) is not None:
            stubs.add(home)
    return "\n".join(lines) + "\n", stubs


@functools.cache
def _layout():
    """relative path -> file text of the whole build, and every dotted name the build stubs."""
    files, stubs = {"_judge.py": _JUDGE}, set()
    for name in dict.fromkeys([*modules(), *copied()]):
        module = importlib.import_module(name)
        parts = name.split(".")[1:]
        relative = "/".join(parts + ["__init__.py"]) if hasattr(module, "__path__") else "/".join(parts) + ".py"
        if name in copied():
            files[relative] = Path(module.__file__).read_text(encoding="utf-8")
            continue
        files[relative], found = _stub_module(name)
        stubs |= found
    return files, frozenset(stubs)


def stubbed():
    """Every dotted name the public build stubs: the only names the grader computes when asked."""
    return _layout()[1]


def real_folder():
    """The folder of the real package, which the sandbox hides under the public build."""
    return os.path.dirname(importlib.import_module(PACKAGE).__file__)


def write(root):
    """Write the public build as `root`/ffn_helpers, readable by anyone (the sandbox's user owns nothing)."""
    target = Path(root) / PACKAGE
    for relative, text in _layout()[0].items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
    precompile(target)
    for folder in [target, *(p for p in target.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)
    return target


@functools.cache
def built():
    """This process's copy of the public build, in its temporary folder (removed when the process ends; a grading
    worker, which ends with os._exit, has its TMPDIR in the run's folder, which grade removes): its package's folder."""
    root = str(tempfolders.make("public", 0o755))
    pid = os.getpid()
    atexit.register(lambda: os.getpid() == pid and shutil.rmtree(root, ignore_errors=True))
    return str(write(root))


def in_sandbox(sandbox):
    """`sandbox` with the public build where the real package's folder was, and the folder to put first on
    the learner's process's path: None in a sandbox, the build's own folder without isolation (`--unsafe`)."""
    folder = built()
    if sandbox.isolate:
        return sandbox.with_(replaced=(*sandbox.replaced, (folder, real_folder()))), None
    return sandbox, os.path.dirname(folder)


def resolve(dotted):
    """The course's own function or class that the stub `dotted` stands for; LookupError for any other name."""
    if dotted not in stubbed():
        raise LookupError(f"{str(dotted)[:200]!r} is no function of ffn_helpers' public build")
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)
