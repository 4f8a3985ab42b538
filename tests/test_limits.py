"""The grader's limits: each is one constant of autograder/limits.py, the instructor guide states it as it is there,
and no other module of the grader or of ffn_helpers writes its value again as a bare number."""

import ast
import operator
import re
from pathlib import Path

from autograder import limits
from autograder.grading.gate_in import channels
from autograder.grading.gate_in import limits as gate_in

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "autograder" / "README.md"
UNITS = {"MiB": limits.MiB, "GiB": limits.GiB}


def _limits():
    """{name: value} of every limit autograder.limits holds (its units are not limits)."""
    names = [name for name in vars(limits) if name.isupper() and not name.startswith("_") and name not in UNITS]
    return {name: getattr(limits, name) for name in [*names, *limits._FROM_FFN_HELPERS]}


def _words(name, value):
    """A limit as the guide writes it: "50 MiB", "2,000 characters", "900 s"; a count as a number ("1,000")."""
    if name.endswith("_BYTES") or name == "BUDGET":
        assert value % limits.MiB == 0, f"{name} is {value:,} bytes: the guide states whole MiB"
        return f"{value // limits.MiB:,} MiB"
    if name.endswith("_CHARS"):
        return f"{value:,} characters"
    if name.endswith("_SECONDS"):
        return f"{value:g} s"
    return f"{value:,}"


def _guide():
    return " ".join(GUIDE.read_text(encoding="utf-8").split())  # the prose is wrapped: one space for each break


# A row of the guide's table of limits: | what it bounds | the value in words | `CONSTANT` |
_ROW = re.compile(r"^\| [^|]+ \| (?P<value>[0-9][0-9,.]* (?:MiB|characters|s)) \| `(?P<name>[A-Z_]+)` \|$", re.M)


def test_the_guides_table_of_limits_is_the_modules():
    rows = {m["name"]: m["value"] for m in _ROW.finditer(GUIDE.read_text(encoding="utf-8"))}
    assert set(rows) == set(_limits()), f"the guide's table and autograder/limits.py name different limits: {rows}"
    wrong = {name: (said, _words(name, value)) for name, value in _limits().items()
             if (said := rows[name]) != _words(name, value)}
    assert not wrong, f"the guide's table of limits says (guide, autograder.limits): {wrong}"


# Where the guide's prose states a limit again: (module, constant, the words around it; {} is the value in words)
PROSE = [
    (limits, "MAX_FOLDER_BYTES", "skip FIFOs and devices with a `review` finding, and stop at {}."),
    (limits, "STUDENT_TIMEOUT_SECONDS", "`--timeout S` (wall-clock limit per student, default {})"),
    (channels, "BUDGET", "one place for the budget): at most {} in a kernel run"),
    (gate_in, "MESSAGE_BYTES", "a message larger than {} or of more than"),
    (gate_in, "MESSAGE_FRAMES", "or of more than {} parts stops the kernel the same way"),
    (gate_in, "DECODE_DEPTH", "nested at most {} deep"),
    (gate_in, "DECODE_BYTES", "and at most {} once decoded"),
    (gate_in, "OUTPUT_FLOOR", "each output counting at least {} characters however little it holds"),
    (gate_in, "CELL_OUTPUTS", "and at most {} outputs per cell"),
    (gate_in, "NOTEBOOK_OUTPUTS", "outputs per cell and {} per notebook are kept"),
]


def test_the_guides_prose_states_each_limit_as_the_code_has_it():
    guide = _guide()
    missing = [phrase.format(_words(name, getattr(module, name))) for module, name, phrase in PROSE
               if phrase.format(_words(name, getattr(module, name))) not in guide]
    assert not missing, "the guide no longer says (with the code's value):\n  " + "\n  ".join(missing)


# ---- no second copy ---------------------------------------------------------------------------------------------
# Folders not scanned: the course's own notebooks, whose numbers are the lesson's (06 and 12 define MiB for learners).
NOT_SCANNED = (ROOT / "autograder" / "course" / "source",)
# (file, value): why that file may write a limit's value as a number. Each is another bound that happens to share
# the value, or a copy that cannot import autograder.limits.
ALLOWED = {
    ("ffn_helpers/_display.py", 1500): "MAX_ALT_CHARS's one definition: the course's figures decide it",
    ("ffn_helpers/training.py", 2000): "notebook 13's training steps, not characters",
    ("autograder/mathml.py", 2000): "MAX_LATEX_CHARS, one formula's LaTeX: mathml's own bound",
    ("autograder/sanitise.py", 20000): "MAX_MARKDOWN_CHARS, one markdown cell: sanitise's own bound",
    ("autograder/grading/gate_in/limits.py", 20000): "TRACEBACK_CHARS: an error's traceback, not a message",
    ("autograder/grading/check.py", 20000): "the end of nbgrader's log shown when the grader itself fails",
    ("autograder/grading/gate_beside/rpc.py", 20000): "an exception's message on the channel: rpc.py runs as source "
                                                      "inside the sandbox, where nothing of the grader is importable",
}
_OPERATORS = {ast.Mult: operator.mul, ast.Pow: operator.pow, ast.LShift: operator.lshift}
_IN_MIB = re.compile(r"\b([0-9][0-9,]*) MiB\b")


def _value(node):
    """The integer an expression of integers, units (MiB, GiB, x.MiB) and * ** << stands for, or None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name | ast.Attribute) and (node.id if isinstance(node, ast.Name) else node.attr) in UNITS:
        return UNITS[node.id if isinstance(node, ast.Name) else node.attr]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(left, int) and isinstance(right, int) and (isinstance(node.op, ast.Mult) or 0 <= right < 64):
            return _OPERATORS[type(node.op)](left, right)
    return None


def _copies(tree, rel):
    """What in one module's syntax tree writes a limit again: (line, what)."""
    by_value = {}
    for name, value in _limits().items():
        by_value.setdefault(value, []).append(name)
    sizes = {value for name, value in _limits().items() if name.endswith("_BYTES")}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, f"defines the unit {t.id}") for t in targets
                      if isinstance(t, ast.Name) and t.id in UNITS]
        value = _value(node) if isinstance(node, ast.Constant | ast.BinOp) else None
        if value is not None and value in by_value and (rel, value) not in ALLOWED:
            found.append((node.lineno, f"{ast.unparse(node)} (autograder.limits.{' or '.join(by_value[value])})"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for number in _IN_MIB.findall(node.value):
                if int(number.replace(",", "")) * limits.MiB in sizes:
                    found.append((node.lineno, f"the text {number} MiB"))
    return found


def _scanned():
    return [path for folder in ("autograder", "ffn_helpers") for path in sorted((ROOT / folder).rglob("*.py"))
            if path != Path(limits.__file__) and not any(path.is_relative_to(f) for f in NOT_SCANNED)]


def test_no_module_writes_a_limit_again():
    found = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in _scanned()
             for line, what in _copies(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(ROOT).as_posix())]
    assert not found, "import these from autograder.limits instead:\n  " + "\n  ".join(found)


def test_the_scan_finds_a_copy_however_it_is_written():
    for source in ("budget = 50 * 1024 * 1024", "budget = 50 * 2**20", "budget = 50 * MiB", "budget = 50 << 20",
                   "budget = 200 * limits.MiB", "text = s[:2000]", "text = plain(s, 2_000)",
                   "timeout = 900.0", "MiB = 1 << 20", "log('larger than 50 MiB')", "alt = alt[:1500]"):
        assert _copies(ast.parse(source), "autograder/grading/new.py"), source
    for source in ("budget = 64 * MiB", "text = s[:200]", "log('larger than 64 MiB')", "n = 50", "x = 2**20"):
        assert not _copies(ast.parse(source), "autograder/grading/new.py"), source
