"""Every change the grader makes to another library's internals, each checked against the releases it was read in.

A library owes nobody its internals: a release may rename a private method, change a signature or stop importing
an optional module, and a patch written for the old shape would then do nothing, or the wrong thing, without a
word. So each patch here is one function that says which library and which internal it changes, and why, and
refuses (a RuntimeError naming the library, the release found and the range it was checked against) before it
changes anything, when the installed release is outside that range or the internal is not the one it was read as.
pyproject.toml pins each library to a range inside the one stated here (tests/test_upstream.py reads both), and
no other module of the course assigns to another library's modules or classes, or writes sys.modules
(tests/test_upstream.py scans them).

    check_nbclient               nbclient: the three internals execute.SandboxExecute overrides or reads
    check_jupyter_client         jupyter_client: the channel's _recv, which gate_in/kernel.py's BoundedChannel overrides
    reuse_gradebook_engines      nbgrader: Gradebook.__init__, one database engine per URL in a process
    refuse_formgrader_autograde  nbgrader: formgrader's AutogradeHandler.post, which would grade without a sandbox
    replace_distributed_decoders distributed: every way its client decodes a peer's bytes (dispatch/dask_guard.py)
    hide_rfc3987_syntax          jsonschema: its optional IRI checker, 2.7 s of CPU in every process that reads a
                                 notebook
    without_debugpy              ipykernel: its optional debugger, in each graded kernel (gate_in/kernel.py)

This module imports nothing of the course (`import autograder` applies hide_rfc3987_syntax), and the libraries it
checks only inside the function that needs them.
"""

import ast
import importlib.util
import re
import sys
from pathlib import Path

# inspect and importlib.metadata are imported where they are used: `import autograder` runs hide_rfc3987_syntax
# in every process, which needs no signature, and a release number only where jsonschema imports rfc3987_syntax.


class Checked:
    """The releases of one library a patch was read against: from `low` up to, not including, `below`."""

    def __init__(self, library, low, below):
        self.library = library  # the distribution's name, as pyproject.toml spells it
        self.low, self.below = low, below

    def __str__(self):
        return f">={self.low},<{self.below}"

    def admits(self, version):
        return version is not None and _release(self.low) <= _release(version) < _release(self.below)


NBCLIENT = Checked("nbclient", "0.11", "0.12")
# AsyncZMQSocketChannel's _recv and get_msg read the same in every release from 8.0.0 to 8.10.0.
JUPYTER_CLIENT = Checked("jupyter_client", "8.0", "9")
NBGRADER = Checked("nbgrader", "0.9", "0.10")
DISTRIBUTED = Checked("distributed", "2026.8.0", "2026.9")
# The two below hide an optional module: each release's imports of it were read, in jsonschema 4.25.0 (the first
# to import rfc3987_syntax) to 4.26.0 and in ipykernel 7.0.0 to 7.4.0, and are read again in the one installed.
JSONSCHEMA = Checked("jsonschema", "4.25", "5")
IPYKERNEL = Checked("ipykernel", "7.0", "8")
CHECKED = (NBCLIENT, JUPYTER_CLIENT, NBGRADER, DISTRIBUTED, JSONSCHEMA, IPYKERNEL)  # every range a patch here states

HIDE_DEBUGPY = 'sys.modules["debugpy"] = None'  # without_debugpy's statement (zygote_main.py states it too)


def _release(version):
    """A version's leading release numbers, as a tuple ("0.11.0rc1" -> (0, 11, 0)): what the ranges compare."""
    return tuple(int(part) for part in re.match(r"\d+(?:\.\d+)*", version)[0].split("."))


def installed(distribution):
    """The installed release of `distribution`, or None: the one view of a version every check here takes."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _refuse(checked, patch, found=None, differs=None):
    """The error of a patch that will not apply: the library, the release found, the range, what differs."""
    found = installed(checked.library) if found is None else found
    return RuntimeError(
        f"{patch}, checked against {checked.library} {checked}; found {checked.library} {found}"
        f"{'' if differs is None else f', where {differs}'}. Install the release pyproject.toml pins, or check "
        f"the patch against {checked.library} {found} and update its range in {__name__}.")


def _require(checked, patch):
    """Refuse unless the installed release of the library is in the range the patch was checked against."""
    found = installed(checked.library)
    if not checked.admits(found):
        raise _refuse(checked, patch, found)


def _parameters(function):
    import inspect

    return list(inspect.signature(function).parameters)


# ------------------------------------------------------------------------------------------------------- nbclient

def check_nbclient():
    """nbclient: execute.SandboxExecute overrides `_async_handle_timeout(self, timeout, cell)` (a cell's timeout:
    it records which cell, to shorten its exercise's later tests) and `_async_cleanup_kernel(self)` (timed), and
    reads `_display_id_map` ({display_id: {cell index: [output index, ...]}}: what a display update rewrites,
    counted against the output budget). A subclass, no assignment: if a release renamed them, the timeouts
    would go unrecorded and the budget miscounted without a word. Checked when execute is imported."""
    from nbclient import NotebookClient

    patch = ("autograder.grading.execute relies on nbclient's _async_handle_timeout(self, timeout, cell), "
             "_display_id_map and _async_cleanup_kernel(self)")
    _require(NBCLIENT, patch)
    on_timeout = _parameters(NotebookClient._async_handle_timeout)
    on_cleanup = _parameters(NotebookClient._async_cleanup_kernel)
    if on_timeout != ["self", "timeout", "cell"] or on_cleanup != ["self"] \
            or "_display_id_map" not in NotebookClient.class_trait_names():
        raise _refuse(NBCLIENT, patch, differs=f"_async_handle_timeout({', '.join(on_timeout)}), "
                      f"_async_cleanup_kernel({', '.join(on_cleanup)}), _display_id_map "
                      f"{'present' if '_display_id_map' in NotebookClient.class_trait_names() else 'absent'}")


# -------------------------------------------------------------------------------------------------- jupyter_client

def check_jupyter_client():
    """jupyter_client: gate_in/kernel.py's BoundedChannel overrides AsyncZMQSocketChannel's `_recv(self, **kwargs)`
    (a coroutine: one message's frames, read from the socket and deserialised by the session), so that a kernel's
    message is measured before anything of it is decoded (gate_in/messages.py). A subclass, no assignment; but if a
    release renamed `_recv`, or read messages in `get_msg` without it, every message would be decoded unmeasured
    without a word. Checked when kernel.py is imported."""
    import inspect

    from jupyter_client.channels import AsyncZMQSocketChannel

    patch = ("autograder.grading.gate_in.kernel overrides jupyter_client's AsyncZMQSocketChannel._recv(self, "
             "**kwargs), which get_msg awaits")
    _require(JUPYTER_CLIENT, patch)
    recv = AsyncZMQSocketChannel._recv
    kinds = [p.kind for p in inspect.signature(recv).parameters.values()]
    reads = "await self._recv()" in inspect.getsource(AsyncZMQSocketChannel.get_msg)
    if not inspect.iscoroutinefunction(recv) or kinds != [inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                            inspect.Parameter.VAR_KEYWORD] or not reads:
        raise _refuse(JUPYTER_CLIENT, patch, differs=f"_recv({', '.join(_parameters(recv))}) is "
                      f"{'a coroutine' if inspect.iscoroutinefunction(recv) else 'no coroutine'} and get_msg "
                      f"{'awaits' if reads else 'does not await'} it")


# -------------------------------------------------------------------------------------------------------- nbgrader

def reuse_gradebook_engines():
    """nbgrader: Gradebook.__init__, replaced by one that makes a URL's SQLAlchemy engine (and checks its schema,
    with a `create_all`) once per process and reuses it. nbgrader opens a new Gradebook about ten times per
    student; a grading run needs each gradebook's schema checked once. The replacement repeats nbgrader 0.9's
    __init__ minus the engine, so another release refuses. Idempotent; gradebook_engines() has the engines."""
    from nbgrader import api
    from sqlalchemy.orm import scoped_session, sessionmaker

    if getattr(api.Gradebook, "_ffn_engines", None) is not None:
        return
    patch = "reuse_gradebook_engines repeats nbgrader's Gradebook.__init__(self, db_url, course_id, authenticator)"
    _require(NBGRADER, patch)
    original = api.Gradebook.__init__
    params = _parameters(original)
    if params != ["self", "db_url", "course_id", "authenticator"]:
        raise _refuse(NBGRADER, patch, differs=f"__init__({', '.join(params)})")
    engines = {}

    def __init__(self, db_url, course_id="default_course", authenticator=None):
        if db_url not in engines:
            original(self, db_url, course_id, authenticator)
            engines[db_url] = self.engine
            return
        self.engine = engines[db_url]
        self.db = scoped_session(sessionmaker(autoflush=True, bind=self.engine, future=True))
        self.check_course(course_id=course_id)
        self.course_id = course_id
        self.authenticator = authenticator

    api.Gradebook.__init__ = __init__
    api.Gradebook._ffn_engines = engines


def gradebook_engines():
    """{db_url: engine} of every gradebook opened in this process since reuse_gradebook_engines (which must come
    first: without it, each Gradebook has an engine of its own and there is none to hand)."""
    from nbgrader import api

    engines = getattr(api.Gradebook, "_ffn_engines", None)
    if engines is None:
        raise RuntimeError("the gradebook's engines are kept only once reuse_gradebook_engines() has run")
    return engines


def refuse_formgrader_autograde(post):
    """nbgrader: formgrader's AutogradeHandler.post (the ⚡ Autograde button's request), replaced by `post`, which
    refuses. nbgrader's runs `nbgrader autograde`: student code with the instructor's rights and no sandbox. The
    handler is nbgrader's class, shared by every formgrader page: there is no setting to turn it off."""
    from nbgrader.server_extensions.formgrader import apihandlers

    patch = "gate_out/formgrader.py replaces nbgrader's AutogradeHandler.post(self, assignment_id, student_id)"
    _require(NBGRADER, patch)
    params = _parameters(apihandlers.AutogradeHandler.post)
    if params != ["self", "assignment_id", "student_id"]:
        raise _refuse(NBGRADER, patch, differs=f"post({', '.join(params)})")
    apihandlers.AutogradeHandler.post = post


# ----------------------------------------------------------------------------------------------------- distributed

_DISTRIBUTED_ORIGINALS = {}  # (module, name) -> what replace_distributed_decoders replaced (empty: nothing yet)


def replace_distributed_decoders(loads, unpickle, clean_exception, pickle_module):
    """distributed: every way its client decodes what a peer sends, in this process (dispatch/dask_guard.py's
    replacements, given here): the wire protocol's `loads` (distributed.protocol.core, and its re-export in
    distributed.protocol), which unpickles whatever a peer marks pickled; the client's `loads` and `pickle`
    (a result's type, a task's error) and distributed.protocol.pickle.loads; `clean_exception` (distributed.core,
    and the client's import of it), which unpickles an error. A worker that student code took over could send
    any of them, and distributed has no setting that turns them off. Idempotent."""
    import pickle

    import distributed.client as client
    import distributed.core as dcore
    import distributed.protocol as protocol
    import distributed.protocol.core as core
    import distributed.protocol.pickle as dpickle

    if _DISTRIBUTED_ORIGINALS:
        return
    patch = ("dispatch/dask_guard.py replaces distributed's protocol loads, its client's loads, pickle and "
             "clean_exception, and distributed.protocol.pickle.loads")
    _require(DISTRIBUTED, patch)
    wire = _parameters(core.loads)
    same = {"distributed.protocol.loads is distributed.protocol.core.loads": protocol.loads is core.loads,
            "distributed.client.loads is distributed.protocol.pickle.loads": client.loads is dpickle.loads,
            "distributed.client.pickle is pickle": client.pickle is pickle,
            "distributed.client.clean_exception is distributed.core.clean_exception":
                client.clean_exception is dcore.clean_exception}
    if wire != ["frames", "deserialize", "deserializers"] or not all(same.values()):
        raise _refuse(DISTRIBUTED, patch, differs=f"loads({', '.join(wire)}); not so: "
                      f"{', '.join(k for k, v in same.items() if not v) or 'none'}")
    _DISTRIBUTED_ORIGINALS.update({(core, "loads"): core.loads, (protocol, "loads"): protocol.loads,
                                   (dpickle, "loads"): dpickle.loads, (client, "loads"): client.loads,
                                   (client, "pickle"): client.pickle,
                                   (client, "clean_exception"): client.clean_exception,
                                   (dcore, "clean_exception"): dcore.clean_exception})
    core.loads = protocol.loads = loads
    dpickle.loads = client.loads = unpickle
    client.pickle = pickle_module
    client.clean_exception = dcore.clean_exception = clean_exception


# ------------------------------------------------------------------------------- optional modules, made absent

_TOLERANT = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}  # what may catch a failed import


def _catches_import_error(names):
    return any((n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)) in _TOLERANT for n in names)


def _tolerant_with(node):
    """A `with suppress(ImportError):` (contextlib's, by either name)."""
    for item in node.items:
        call = item.context_expr
        name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        if name == "suppress" and _catches_import_error(call.args):
            return True
    return False


def _tolerant_try(node):
    """A `try:` one of whose handlers catches a failed import (a bare `except:` does too)."""
    for handler in node.handlers:
        caught = handler.type
        if caught is None or _catches_import_error(caught.elts if isinstance(caught, ast.Tuple) else [caught]):
            return True
    return False


def guarded_imports(source, module):
    """[(line, tolerated)] of each import of `module` (or a submodule) in Python `source`: tolerated when a
    failed import is caught around it (`with suppress(ImportError)`, `try: ... except ImportError`)."""
    found = []

    def names(node):
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        return [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []

    def visit(node, tolerated):
        if any(name == module or name.startswith(module + ".") for name in names(node)):
            found.append((node.lineno, tolerated))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            tolerated = False  # its body runs when called, outside whatever was around the definition
        guards = _tolerant_with(node) if isinstance(node, ast.With) else \
            _tolerant_try(node) if isinstance(node, ast.Try) else False
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child, tolerated or guards and field == "body")

    visit(ast.parse(source), False)
    return found


def _imports_in(package, module):
    """[(file name, line, tolerated)] of each import of `module` in the installed `package`'s top-level modules
    (read, not imported: where jsonschema and ipykernel import theirs), or None when it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    found = []
    for path in sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.py")):
        source = path.read_text(encoding="utf-8", errors="replace")
        if module in source:
            found += [(path.name, line, tolerated) for line, tolerated in guarded_imports(source, module)]
    return found


def _absent_checked(checked, package, module, patch):
    """Refuse unless making `module` absent is safe in `package`: each of its imports of it catches the failure,
    in a release of the checked range. A release that never imports it (jsonschema before 4.25, whatever Python
    `make lab`'s first step finds) is not checked: the entry changes nothing there."""
    imports = _imports_in(package, module)
    if not imports:
        return
    bare = [f"{name}:{line}" for name, line, tolerated in imports if not tolerated]
    if bare:
        raise _refuse(checked, patch, differs=f"{', '.join(bare)} imports {module} without catching ImportError")
    _require(checked, patch)


def hide_rfc3987_syntax():
    """jsonschema: sys.modules["rfc3987_syntax"] = None, so that its `import rfc3987_syntax` fails. jsonschema
    (under nbformat and nbgrader) checks the "iri" format with that module when it is installed (jupyter_events
    asks for it), and importing it builds 38 parsers: about 2.7 s of CPU in every process that reads a notebook
    (`grade`, each worker, `check`). Nothing here validates IRIs; without the module, jsonschema leaves that
    format unchecked, as it documents. Must come before jsonschema's first import: `import autograder` does it."""
    _absent_checked(JSONSCHEMA, "jsonschema", "rfc3987_syntax",
                    "autograder hides rfc3987_syntax from jsonschema's format checker")
    sys.modules.setdefault("rfc3987_syntax", None)


def without_debugpy():
    """ipykernel: HIDE_DEBUGPY, the statement a graded kernel's launch runs before ipykernel is imported (the
    kernel's process writes it; this checks, in the grader, that it may). Importing debugpy is a tenth of a second
    of CPU in every graded kernel's start, and nobody debugs a graded run; ipykernel reads an unimportable debugpy
    as "no debugger" (debugger.py's `_is_debugpy_available`)."""
    _absent_checked(IPYKERNEL, "ipykernel", "debugpy", "a graded kernel hides debugpy from ipykernel")
    return HIDE_DEBUGPY
