"""Which course functions a learner's code runs while a check calls it.

`substitute` grades one exercise on its own: the learner's names of other exercises are the course's functions
while its block runs. `may_call` states, in a notebook's setup cell, the course functions each exercise's answer may
call; while a check calls the learner's function (`checks.call`), `_Rule` refuses every other one, in the words the
grader's clean re-run uses (`refusal`). In the clean re-run the grader does both itself: `substitute.hook` is set
there, and `_Rule` stands aside.
"""

import functools
import sys
import types

_MISSING = object()


class substitute:
    """Grade one exercise on its own: while the block runs, names of the learner's are the course's functions.

        with checks.substitute(layer_norm=norm.layer_norm):
            checks.check(post_ln_block, ...)   # the learner's block calls the reference layer_norm

    so that a slip in `layer_norm` costs points in its own tests only. It rebinds the
    names in the calling cell's globals (the notebook's namespace), and puts them back
    afterwards. Each value must be a function of `ffn_helpers`: the autograder's clean
    re-run (`substitute.hook`) rebinds the same names in the learner's process by the
    function's dotted name, so both runs grade exactly the same thing.
    """

    hook = None  # set by the autograder's clean re-run: dotted names -> a context manager
    handed = []  # a stack: the functions each block under way hands over (`_Rule` lets the learner's code call them)

    def __init__(self, **names):
        for name, function in names.items():
            if not str(getattr(function, "__module__", "")).startswith("ffn_helpers"):
                raise ValueError(f"substitute({name}=...) takes a function of ffn_helpers, got {function!r}")
        self.names = names

    def dotted(self):
        return {name: f"{f.__module__}.{f.__qualname__}" for name, f in self.names.items()}

    def __enter__(self):
        self._globals = sys._getframe(1).f_globals
        self._saved = rebind(self._globals, self.names)
        self._remote = substitute.hook(self.dotted()) if substitute.hook is not None else None
        if self._remote is not None:
            self._remote.__enter__()
        substitute.handed.append(tuple(self.names.values()))  # the course functions the learner may call meanwhile
        return self

    def __exit__(self, *exc):
        substitute.handed.pop()
        try:
            if self._remote is not None:
                self._remote.__exit__(*exc)
        finally:
            restore(self._globals, self._saved)
        return False


def rebind(namespace, values):
    """Bind `values` (name -> object) in `namespace`; return what to give `restore` to undo it."""
    saved = {name: namespace.get(name, _MISSING) for name in values}
    namespace.update(values)
    return saved


def restore(namespace, saved):
    """Undo `rebind`: each name gets its old object back, or is removed if it had none."""
    for name, value in saved.items():
        if value is _MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = value


# --- The course functions an answer may call ------------------------------------------------------------------
# While an exercise is graded, the grader's clean re-run computes only the course functions its answer cell lists
# (autograder/may_call.py) and those a test hands over (`substitute`); any other call is refused, and the test fails
# (`refusal`'s words). The build writes the same lists into the notebook's setup cell (`may_call`), so that the
# notebook's own checks refuse the same calls before the learner submits (`_Rule`).

_LISTS = "__course_may_call__"  # the notebook's global under which `may_call` keeps the lists
_PACKAGE = "ffn_helpers"
# the grader hands these modules to the learner's code as they are, and this package's (gate_beside/public.py)
_OPEN = ("ffn_helpers.checks", "ffn_helpers.examples", __package__)


def _open(module_name):
    return module_name in _OPEN or module_name.startswith(f"{__package__}.")


def may_call(**lists):
    """State, in the notebook that runs this (the build adds it to each setup cell, from the answer cells'
    metadata), the course functions each exercise's answer may call: `may_call(recall=["ffn_forward"], kv_ffn=[])`,
    by their names under ffn_helpers. While a check calls the learner's function of one of these exercises, every
    other course function the notebook's names reach is refused, as the grader refuses it."""
    sys._getframe(1).f_globals[_LISTS] = {exercise: tuple(names) for exercise, names in lists.items()}


def refusal(exercise, dotted, allowed):
    """The words of a refused call of the course's function `dotted` in `exercise`'s answer (the notebook's checks
    and the grader's clean re-run say the same); `allowed`: the names of the course functions it may call."""
    listed = ", ".join(allowed) or "none"
    return (f"{exercise} uses the course's {dotted} (the course functions it may call: {listed}), which the grader "
            f"does not run for {exercise}: its test fails as for an unimplemented function")


def _course_function(value):
    """The dotted name of `value` if it is a function or class of ffn_helpers the grader refuses unless allowed."""
    if type(value) is not types.FunctionType and not isinstance(value, type):
        return None
    module = value.__dict__.get("__module__") if isinstance(value, type) else value.__module__
    if not isinstance(module, str) or _open(module) or module.split(".")[0] != _PACKAGE:
        return None
    return f"{module}.{value.__qualname__}"


def _course_module(value):
    return (type(value) is types.ModuleType and value.__name__.split(".")[0] == _PACKAGE
            and not _open(value.__name__))


def _resolve(name):
    """The course function `name` (dotted under ffn_helpers) stands for, or None."""
    value = sys.modules.get(_PACKAGE)
    for part in str(name).split("."):
        value = getattr(value, part, None)
    return value


class _Rule:
    """One check's call of a learner's function of `exercise`: while it runs, each name of the notebook bound to a
    course function it may not call (or to a module of them) is bound to one that refuses, and says why."""

    def __init__(self, namespace=None, exercise=None, allowed=()):
        self.namespace, self.exercise, self.allowed = namespace, exercise, tuple(allowed)
        self.refused = []  # the refusals' messages, in order
        self._saved = {}
        permitted = [_resolve(name) for name in self.allowed] + [f for block in substitute.handed for f in block]
        self._permitted = {id(f): f for f in permitted if f is not None}

    @classmethod
    def of(cls, fn, name):
        """The rule for a check's call of `fn`, named `name` by the check; one that does nothing where none holds."""
        namespace = _notebook_of_caller() if substitute.hook is None else None
        lists = namespace.get(_LISTS) if namespace is not None else None
        if not isinstance(lists, dict):
            return cls()
        for exercise in _exercises_of(fn, name):
            if exercise in lists:
                return cls(namespace, exercise, lists[exercise])
        return cls()

    def __enter__(self):
        if self.namespace is not None:
            for key, value in list(self.namespace.items()):
                guarded = self._guarded(value)
                if guarded is not value:
                    self._saved[key] = (value, guarded)
                    self.namespace[key] = guarded
        return self

    def __exit__(self, *exc):
        for key, (value, guarded) in self._saved.items():
            if self.namespace.get(key) is guarded:  # the learner's own rebinding of the name stays
                self.namespace[key] = value
        self._saved = {}
        return False

    def _guarded(self, value):
        if id(value) in self._permitted:
            return value
        dotted = _course_function(value)
        if dotted is not None:
            return self._refuser(dotted)
        return _GuardedModule(value, self) if _course_module(value) else value

    def _refuser(self, dotted):
        def refused(*args, **kwargs):
            message = refusal(self.exercise, dotted, self.allowed)
            self.refused.append(message)
            raise NotImplementedError(message)

        refused.__qualname__ = refused.__name__ = dotted.rpartition(".")[2]
        return refused

    def arguments(self, args):
        """`args`, each function among them run as the course's own (the grader runs them on its side)."""
        if self.namespace is None:
            return args
        return tuple(self._outside(a) if type(a) in (types.FunctionType, types.MethodType) else a for a in args)

    def _outside(self, function):
        @functools.wraps(function)
        def courses(*args, **kwargs):
            saved = dict(self._saved)
            self.__exit__()
            try:
                return function(*args, **kwargs)
            finally:
                self.__enter__() if saved else None

        return courses


class _GuardedModule(types.ModuleType):
    """A module of ffn_helpers as an answer under a `_Rule` reaches it: its functions refuse, unless permitted."""

    def __init__(self, module, rule):
        super().__init__(module.__name__, module.__doc__)
        self.__dict__["_course_parts"] = (module, rule)

    def __getattr__(self, key):
        module, rule = self.__dict__["_course_parts"]
        return rule._guarded(getattr(module, key))


def _notebook_of_caller():
    """The namespace of the nearest calling frame whose globals hold `may_call`'s lists (a notebook's), or None."""
    frame = sys._getframe(1)
    for _ in range(64):
        if frame is None:
            return None
        if _LISTS in frame.f_globals:
            return frame.f_globals
        frame = frame.f_back
    return None


def _exercises_of(fn, name):
    """The exercise names a check's call may be of: the check's own name for it, then the function's or class's."""
    found = [str(name).split(".")[0]] if name else []
    if type(fn) is types.MethodType:
        fn = fn.__func__
    if type(fn) is types.FunctionType:
        found.append(fn.__qualname__.split(".")[0])
    elif isinstance(fn, type):
        found.append(fn.__name__)
    else:
        found.append(type(fn).__qualname__.split(".")[0])
    return found
