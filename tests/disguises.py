"""Disguised copies of an answer, made by code the way a copier would, for the similarity tests and benchmark.

Each disguise edits the source text where Python's syntax tree says a statement or expression lies, so
the copy keeps the original's layout everywhere else; report_fixtures.renamed then renames every name
and lays the code out anew. These are written from what copiers do, not from what the normaliser
undoes: a disguise the normaliser misses stays in the corpus and lowers the rate.
"""

import ast
import importlib
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:  # `submissions` and `report_fixtures`, as the tests import them
    sys.path.insert(0, str(Path(__file__).parent))

from report_fixtures import renamed  # noqa: E402  (found through the path just set)

DEAD = [  # statements that do not reach the result; {p} is one of the function's parameters
    "unused = {p}",
    "if False:\n    print('never')",
    "if 0:\n    {p} = None",
    "checked = len(str({p}))",
    "print('checking', type({p}).__name__)",
    "'''note to self: works on batches too'''",
    "_scratch = [0] * 3",
    "pass",
    "assert True",
    "def _helper(v):\n    return v * 2",
    "for _ in range(0):\n    pass",
    "try:\n    pass\nexcept Exception:\n    pass",
    "while False:\n    {p} = 0",
    "shape_of = getattr({p}, 'shape', None)",
]


def _function(tree):
    """The answer's first top-level function (or a method of its first class), None when there is none."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node
        if isinstance(node, ast.ClassDef):
            return next((n for n in node.body if isinstance(n, ast.FunctionDef)), None)
    return None


def _insert(lines, lineno, text, indent):
    """`lines` with `text` (a statement, maybe of several lines) inserted before 1-based line `lineno`."""
    block = [indent + line + "\n" for line in text.split("\n")]
    return lines[:lineno - 1] + block + lines[lineno - 1:]


def _indent(line):
    return line[:len(line) - len(line.lstrip())]


def with_dead_code(code, rng, n=2):
    """`code` with `n` dead statements put in its first function, before random statements or after its end."""
    for _ in range(n):
        tree = ast.parse(code)
        fn = _function(tree)
        if fn is None:
            return None
        lines = code.splitlines(keepends=True)
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        target = rng.choice(body)
        param = rng.choice([a.arg for a in fn.args.args if a.arg != "self"] or ["0"])
        text = rng.choice(DEAD).format(p=param)
        if isinstance(target, ast.Return) and target is fn.body[-1] and rng.random() < 0.5:
            code = "".join(_insert(lines, target.end_lineno + 1, text, _indent(lines[target.lineno - 1])))
        else:
            code = "".join(_insert(lines, target.lineno, text, _indent(lines[target.lineno - 1])))
    return code


def _hoistable(stmt):
    """Sub-expressions of a one-line return or assignment that a copier could name first."""
    if stmt.lineno != stmt.end_lineno or not isinstance(stmt, ast.Return | ast.Assign) or stmt.value is None:
        return []
    out, stack = [], [stmt.value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda | ast.IfExp | ast.BoolOp | ast.ListComp | ast.GeneratorExp | ast.DictComp |
                      ast.SetComp):
            continue  # evaluated lazily or repeatedly: naming it first would change the answer
        if isinstance(node, ast.Call | ast.BinOp) and node is not stmt.value:
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def with_temporaries(code, rng, n=2, tag="tmp"):
    """`code` with `n` sub-expressions of its first function named by new variables before their use: just
    before, or as early in the block as what they read allows."""
    for k in range(n):
        tree = ast.parse(code)
        fn = _function(tree)
        if fn is None:
            return None
        choices = [(block, i, e) for block in _blocks(fn) for i, s in enumerate(block) for e in _hoistable(s)]
        if not choices:
            return code if k else None
        block, i, expr = rng.choice(choices)
        stmt, at = block[i], block[i]
        reads = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        if rng.random() < 0.5:  # as early as its names allow
            for j in range(i - 1, -1, -1):
                if reads & {n.id for n in ast.walk(block[j]) if isinstance(n, ast.Name)} or \
                        _is_docstring(block[j]):
                    break
                at = block[j]
        lines = code.splitlines(keepends=True)
        line = lines[stmt.lineno - 1]
        start, end = _char(line, expr.col_offset), _char(line, expr.end_col_offset)
        name = f"{tag}{k}"
        lines[stmt.lineno - 1] = line[:start] + name + line[end:]
        at_line = lines[at.lineno - 1]
        code = "".join(_insert(lines, at.lineno, f"{name} = {line[start:end]}", _indent(at_line)))
    return code


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _blocks(fn):
    for node in ast.walk(fn):
        for field_ in ("body", "orelse", "finalbody"):
            block = getattr(node, field_, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _char(line, byte_offset):
    """ast's offsets count UTF-8 bytes; a str index counts characters."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8"))


def with_parentheses(code, rng, share=0.6):
    """`code` with redundant parentheses around a share of its one-line binary operations and calls."""
    tree = ast.parse(code)
    marks = {}  # (line, character) -> [closing, opening] parentheses to put there
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp | ast.Call) and n.lineno == n.end_lineno and rng.random() < share:
            line = code.splitlines()[n.lineno - 1]
            marks.setdefault((n.lineno, _char(line, n.col_offset)), [0, 0])[1] += 1
            marks.setdefault((n.lineno, _char(line, n.end_col_offset)), [0, 0])[0] += 1
    lines = code.splitlines(keepends=True)
    for (lineno, at), (close, open_) in sorted(marks.items(), reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:at] + ")" * close + "(" * open_ + line[at:]
    return "".join(lines)


def through_a_free_cell(code):
    """(answer cell, free cell): the answer's function or class moved to a cell of its own under another name,
    the answer cell a call to it (a subclass of it)."""
    tree = ast.parse(code)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    helper = f"my_{node.name}"
    lines = code.splitlines(keepends=True)
    keyword = "def" if isinstance(node, ast.FunctionDef) else "class"
    lines[node.lineno - 1] = lines[node.lineno - 1].replace(f"{keyword} {node.name}", f"{keyword} {helper}", 1)
    if keyword == "class":
        return f"class {node.name}({helper}):\n    pass\n", "".join(lines)
    params = ", ".join(a.arg for a in node.args.args)
    return f"def {node.name}({params}):\n    return {helper}({params})\n", "".join(lines)


def through_an_alias(code):
    """(answer cell, free cell): the answer verbatim in a free cell, bound to other names there by assignment,
    tuple unpacking and a lambda; the answer cell one line that calls the last (or a subclass of it)."""
    node = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    free = code.rstrip("\n") + f"\n_first = {node.name}\n_second, _spare = _first, None\n"
    if isinstance(node, ast.ClassDef):
        return f"class {node.name}(_second):\n    pass\n", free
    params = ", ".join(a.arg for a in node.args.args)
    free += "_call = lambda *args: _second(*args)\n"
    return f"def {node.name}({params}): return _call({params})\n", free


def _copied(code, tag):
    """(the answer's name, its parameters or None for a class, a free cell holding the answer verbatim under the
    name `<name>_<tag>`, beside a decoy `_ready_<tag> = True`): these copies test what is gathered, not what the
    normaliser undoes, and they run."""
    node = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef | ast.ClassDef))
    keyword = "def" if isinstance(node, ast.FunctionDef) else "class"
    lines, first = code.splitlines(keepends=True), node.lineno - 1
    lines[first] = lines[first].replace(f"{keyword} {node.name}", f"{keyword} {node.name}_{tag}", 1)
    params = ", ".join(a.arg for a in node.args.args) if keyword == "def" else None
    return node.name, params, f"_ready_{tag} = True\n" + "".join(lines)


def beside_a_decoy(code, tag):
    """(answer cell, free cell): issue 48's copy. The answer in a free cell beside a decoy the answer cell
    reads (`_ready`), the answer cell a lookup of the copy by a string, `globals()['<name>_<tag>']`."""
    name, params, free = _copied(code, tag)
    if params is None:
        return f"class {name}(globals()['{name}_{tag}'] if _ready_{tag} else object):\n    pass\n", free
    return f"def {name}({params}):\n    return globals()['{name}_{tag}']({params}) if _ready_{tag} else None\n", free


def looked_up_by_a_string(code, tag):
    """(answer cell, free cell, another answer cell): the answer in a free cell that only another answer
    cell reads (its decoy `_ready`), so that the clean re-run runs it; the answer cell reads no name of it and
    reaches the copy by `getattr(sys.modules[__name__], '<name>_<tag>')`."""
    name, params, free = _copied(code, tag)
    other = f"def other_answer():\n    return _ready_{tag}\n"
    if params is None:
        return (f"class {name}(getattr(__import__('sys').modules[__name__], '{name}_{tag}')):\n    pass\n",
                free, other)
    return (f"def {name}({params}):\n    import sys\n"
            f"    return getattr(sys.modules[__name__], '{name}_{tag}')({params})\n", free, other)


def disguises(code, tag, seed=0):
    """{kind: disguised copy} of one answer (a kind is left out when the code offers it no place)."""
    rng = random.Random(f"{seed}:{code}")
    out = {
        "renamed and commented": renamed(code, tag),
        "reformatted, redundant parentheses": renamed(with_parentheses(code, rng), tag),
        "dead code": (dead := with_dead_code(code, rng)) and renamed(dead, tag),
        "temporaries": (temps := with_temporaries(code, rng)) and renamed(temps, tag),
    }
    return {k: v for k, v in out.items() if v}


# ---------------------------------------------------------------- the corpus and its rates

SEEDS = 3  # disguised copies of each kind per answer

# Alternative answers that are the published solution with one line changed: not independent of it.
FROM_THE_SOLUTION = {
    ("03_residual_layernorm", "layer_norm", "vectorised"): "the solution with x.var for the variance",
    ("04_activations", "gelu_tanh", "erf-exp"): "the solution's formula with the tanh argument named",
    ("05_position_wise", "ffn_per_token", "ndindex-each-token"): "the solution's loop with h inlined",
    ("06_parameter_budget", "param_bytes", "formulas"): "the solution with another error message",
    ("11_mixture_of_experts", "router_topk", "renormalised-dense-formula"):
        "the solution's selection (four of its six lines) with the gates renormalised from the full softmax",
    ("11_mixture_of_experts", "moe_param_count", "renormalised-dense-formula"): "the solution with one name changed",
}


def body(code):
    """The code's definitions without docstrings, as an AST dump: equal for the same code laid out otherwise."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and isinstance(node.body[0], ast.Expr) and \
                isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)], []))


def independent(aid, grade_id, solution):
    """{variant: code} of the alternatives to one cell that are not the solution's code, one per distinct code."""
    out, seen = {}, {body(solution)}
    for name, cells in sorted(importlib.import_module(f"submissions.{aid}").CORRECT.items()):
        code = cells.get(grade_id)
        if code is None or (aid, grade_id, name) in FROM_THE_SOLUTION or body(code) in seen:
            continue
        seen.add(body(code))
        out[name] = code
    return out


def graded_assignments():
    from autograder import assignments

    return [a for a in assignments() if importlib.util.find_spec(f"submissions.{a}") is not None]


def course_cells(aid):
    """({grade_id: solution}, {grade_id: starter}) of an assignment's answer cells, as the notebooks hold them."""
    from report_fixtures import answer_cells

    from autograder import NOTEBOOKS_DIR, SOLUTIONS_DIR

    return answer_cells(SOLUTIONS_DIR / f"{aid}.ipynb"), answer_cells(NOTEBOOKS_DIR / f"{aid}.ipynb")


@dataclass
class Rates:
    """Disguised copies reported, per kind, out of how many; the misses; the independent answers reported."""

    reported: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    misses: list = field(default_factory=list)  # (kind, assignment, grade_id, seed)
    false_alarms: list = field(default_factory=list)  # (assignment, grade_id, student, other or None)

    def count(self, kind, found, where):
        self.total[kind] += 1
        self.reported[kind] += bool(found)
        if not found:
            self.misses.append((kind, *where))

    def rate(self, kind):
        return self.reported[kind] / self.total[kind]


def _reported(grade_id, answers, solution, starter, student, other=None):
    from autograder.report import similarity

    matches, _ = similarity.compare_cell(grade_id, answers, solution, starter)
    return any((m.student, m.other) in ((student, other), (other, student)) for m in matches)


def rates(seeds=SEEDS):
    """Rates of the whole corpus: copies of each published solution and of each independent answer, disguised
    each way `seeds` times; the independent answers, plain and disguised, as controls."""
    from autograder.report import similarity

    out = Rates()
    for aid in graded_assignments():
        solutions, starters = course_cells(aid)
        for gid, solution in solutions.items():
            if gid in similarity.DICTATED:
                continue  # never compared: honest answers look alike
            starter, others = starters[gid], independent(aid, gid, solution)
            _controls(out, aid, gid, solution, starter, others, seeds)
            if not similarity.answer(solution).reportable:
                continue
            for seed in range(seeds):
                for kind, copy in disguises(solution, f"c{seed}", seed).items():
                    out.count(kind, _reported(gid, {"copier": copy}, solution, starter, "copier"), (aid, gid, seed))
                for kind, move in (("through a free cell", through_a_free_cell),
                                   ("bound by assignment in a free cell", through_an_alias)):
                    answer, free = move(solution)
                    copy = similarity.code_it_runs(renamed(answer, f"f{seed}"), [renamed(free, f"f{seed}")])
                    out.count(kind, _reported(gid, {"copier": copy}, solution, starter, "copier"), (aid, gid, seed))
                answer, free = beside_a_decoy(solution, f"d{seed}")
                copy = similarity.code_it_runs(answer, [free])
                out.count("beside a decoy in a free cell", _reported(gid, {"copier": copy}, solution, starter,
                                                                     "copier"), (aid, gid, seed))
                answer, free, other = looked_up_by_a_string(solution, f"s{seed}")
                copy = similarity.code_it_runs(answer, similarity.other_cells([free], answers=[answer, other]))
                out.count("looked up by a string", _reported(gid, {"copier": copy}, solution, starter, "copier"),
                          (aid, gid, seed))
    return out


def _controls(out, aid, gid, solution, starter, others, seeds):
    """Independent answers (plain and disguised) are not reported; a classmate's disguised copy of one is."""
    from autograder.report import similarity

    matches, _ = similarity.compare_cell(gid, others, solution, starter)
    out.false_alarms += [(aid, gid, m.student, m.other) for m in matches]
    out.total["independent answers"] += len(others)
    for name, code in others.items():
        for kind, copy in disguises(code, "i0").items():
            matches, _ = similarity.compare_cell(gid, {name: copy}, solution, starter)
            out.false_alarms += [(aid, gid, f"{name} ({kind})", m.other) for m in matches]
            out.total["independent answers"] += 1
            if similarity.answer(code).reportable:
                answers = dict(others) | {"copier": copy}
                out.count("classmate pairs", _reported(gid, answers, solution, starter, name, "copier"),
                          (aid, gid, f"{name}, {kind}"))
    out.reported["independent answers"] = len(out.false_alarms)
