"""Which of the course's functions an exercise's answer may call: the allow-list of the clean re-run's judge.

An answer cell of an authored source may list, in its cell metadata (cells.MAY_CALL), the
functions of ffn_helpers its answer may call, by their names under the package
(`may_call=["ffn_forward"]`, `"moe.router_topk"`). The default is none: numpy, scipy and
the notebook's own earlier answers are the learner's own work. While an exercise is graded,
the judge computes only the listed functions, and those a test itself hands over
(`checks.substitute`); every other course function is refused, and the test fails as for an
unimplemented function (grading/gate_beside/rerun.py).

The same metadata is the sentence the learner reads (`sentence`, which the build appends to
the exercise's description) and what the judge serves (`AllowList`): one source for the text
and the rule. The build refuses a name that is no function of ffn_helpers (`problems`).
"""

import contextlib
import importlib
import inspect
import sys

from .cells import MAY_CALL, is_solution

PACKAGE = "ffn_helpers"


def resolve(name):
    """The course function `name` stands for (a dotted name under ffn_helpers); LookupError if it is none."""
    expected = f"the name of a function of {PACKAGE} under it, such as 'ffn_forward' or 'moe.router_topk'"
    if not isinstance(name, str) or not name or any(not part.isidentifier() or part.startswith("_")
                                                    for part in name.split(".")):
        raise LookupError(f"{MAY_CALL}: expected {expected}, got {name!r}")
    value = importlib.import_module(PACKAGE)
    for part in name.split("."):
        value = getattr(value, part, None)
    home = str(getattr(value, "__module__", "") or "")
    if not (inspect.isfunction(value) or inspect.isclass(value)) or home.split(".")[0] != PACKAGE \
            or any(part.startswith("_") for part in home.split(".")):
        raise LookupError(f"{MAY_CALL}: expected {expected}, got {name!r}, which is "
                          f"{'not there' if value is None else 'no public function of ' + PACKAGE}")
    return value


def problems(assignment_id, nb):
    """Why the MAY_CALL metadata of a notebook (nbformat) is wrong (`cell_problems` of each cell)."""
    return [problem for cell in nb.cells for problem in cell_problems(assignment_id, cell)]


def cell_problems(assignment_id, cell):
    """Only an answer cell carries MAY_CALL, as a list of distinct names of course functions."""
    if MAY_CALL not in cell.metadata:
        return []
    meta = cell.metadata.get("nbgrader", {})
    where = f"{assignment_id}: cell {meta.get('grade_id') or cell.get('id')}"
    names = cell.metadata[MAY_CALL]
    if cell.cell_type != "code" or not is_solution(cell):
        return [f"{where} has {MAY_CALL}, which only an answer cell may have"]
    if not isinstance(names, list) or len(set(map(str, names))) != len(names):
        return [f"{where}: {MAY_CALL} should be a list of distinct names, got {names!r}"]
    found = []
    for name in names:
        try:
            resolve(name)
        except LookupError as exc:
            found.append(f"{where}: {exc}")
    return found


def sentence(names, exercise, origin=None):
    """What the learner reads under the exercise: the course functions its answer may call, and what the others do.

    `origin(name)`: the notebook where the learner wrote that function (an assignment id), or None."""
    refused = "is refused, by this notebook's checks as by the grader, and that test fails as for an unfinished answer."
    if not names:
        return (f"**Course functions you may call here:** none: numpy, scipy and your own answers only. A function "
                f"of `{PACKAGE}` that your code calls while `{exercise}` is checked {refused}")
    shown = []
    for name in names:
        where = origin(name) if origin is not None else None
        shown.append(f"`{name}`" + (f" ({where.split('_')[0]}'s exercise)" if where else ""))
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return (f"**Course functions you may call here:** {listed}, from `{PACKAGE}`. The grader runs "
            f"{'it' if len(shown) == 1 else 'them'} for your answer. Any other function of `{PACKAGE}` that your "
            f"code calls while `{exercise}` is checked {refused}")


def setup_line(lists):
    """The lines the build adds to a notebook's setup cell: `lists` (exercise -> the names it may call) for the
    notebook's checks (ffn_helpers.checks.may_call), which refuse the other course functions as the grader does."""
    calls = [f"{exercise}={list(names)!r}".replace("'", '"') for exercise, names in lists.items()]
    lines, line = [], "checks.may_call("
    for i, call in enumerate(calls):
        piece = call + (", " if i < len(calls) - 1 else ")")
        if len(line) + len(piece.rstrip()) > 100:
            lines.append(line.rstrip())
            line = " " * len("checks.may_call(")
        line += piece
    return ("# What each exercise may call of ffn_helpers (the grader's rule, which these checks apply too):\n"
            + "\n".join(lines + [line]))


class Refused(Exception):
    """A course function the learner's code may not have computed now: `message` for the test, `detail` for the
    instructor's note (the function's dotted name, and the reference it runs)."""

    def __init__(self, message, detail):
        super().__init__(message)
        self.message, self.detail = message, detail


class AllowList:
    """The judge's rule while an exercise is graded: it computes only the course functions the exercise's answer
    cell lists, and those a test hands over (`checks.substitute`), and none that runs one of the course's own
    functions that answer the exercise (moe_forward with one expert is an FFN: ffn_forward's reference runs in it).
    With no exercise under way (the course's setup, a free cell) it computes any.

    `lists`: exercise -> the names its answer may call, read from the course's cells (never the submission's
    metadata); `references(exercise)`: the dotted names of the course functions that answer it."""

    def __init__(self, lists, references):
        self.lists, self._references = lists, references
        self._objects = {}  # exercise -> the course functions that answer it, as objects

    def allows(self, exercise, function, handed=()):
        """Whether `exercise` may call the course's `function`: its answer cell lists it, or it is among `handed`
        (a substitution under way: 03's block is graded with the course's layer_norm under the learner's name)."""
        listed = []
        for name in self.lists.get(exercise, ()):
            with contextlib.suppress(LookupError):  # the build refuses such a name (problems)
                listed.append(resolve(name))
        return any(function is f for f in listed + list(handed))

    def references_of(self, exercise):
        """The course's functions that answer `exercise`, as objects."""
        if exercise not in self._objects:
            found = []
            for dotted in self._references(exercise):
                module, _, name = dotted.rpartition(".")
                with contextlib.suppress(ImportError, AttributeError):
                    found.append(getattr(importlib.import_module(module), name))
            self._objects[exercise] = found
        return self._objects[exercise]

    def call(self, exercise, dotted, function, args, kwargs, handed=()):
        """function(*args, **kwargs), the course's `dotted`, computed for the learner's code while `exercise` is
        graded (None: none is), or Refused."""
        from ffn_helpers.checks import refusal  # the words the notebook's own checks use for the same rule

        references = self.references_of(exercise) if exercise is not None else []
        if any(function is r for r in references):
            raise Refused(_runs_reference(exercise, f"the course's own {dotted.rpartition('.')[2]} ({dotted}),"),
                          dotted)
        if exercise is not None and not self.allows(exercise, function, handed):
            raise Refused(refusal(exercise, dotted, self.lists.get(exercise, ())), dotted)
        value, reached = computed_without(references, function, args, kwargs)
        if reached is not None:
            raise Refused(_runs_reference(exercise, f"the course's {dotted}, which runs {reached},"),
                          f"{dotted} (runs {reached})")
        return value


def _runs_reference(exercise, how):
    return f"{exercise} uses {how} which the grader does not run for {exercise}: its test fails as for an " \
           f"unimplemented function"


def computed_without(references, function, args, kwargs):
    """(function(*args, **kwargs), None), or (None, the name of the first of `references` that ran in it): whatever
    path leads there, the reference's own code runs, and that is what a profile hook sees (its value is dropped)."""
    codes = {}
    for reference in references:
        members = vars(reference).values() if inspect.isclass(reference) else [reference]
        for member in members:
            member = inspect.unwrap(getattr(member, "__func__", member))
            if inspect.isfunction(member):
                codes[member.__code__] = f"{reference.__module__}.{reference.__qualname__}"
    if not codes:
        return function(*args, **kwargs), None
    reached = []

    def watch(frame, event, arg):
        if event == "call" and not reached and frame.f_code in codes:
            reached.append(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        value = function(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return (None, reached[0]) if reached else (value, None)
