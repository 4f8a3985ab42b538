"""One normal form for code that parses, so disguises a copier adds change nothing the fingerprints see.

Read through Python's syntax tree (`ast`, which never runs the code) and written back with `ast.unparse`:
layout, comments and redundant parentheses vanish. Inside each function, what cannot reach its result is
dropped (statements after a `return`/`raise`/`break`/`continue`, branches of a constant test, loops and
`try` blocks around nothing, expressions without a call, `print` calls, docstrings, `pass`, assignments
to names nothing reads), and a temporary bound once and read once, in a later statement of its own
block and outside any loop, branch, lambda or comprehension there, is put back in the expression that
reads it when no statement in between names a local its value reads (a comprehension's first iterable is
read once, where it stands); a temporary whose value has no call, over names bound once that nothing
changes in place, is put back wherever it is read, however often. A name bound again in the function's
own block is a new name from there on (rebinding.py), so `x = np.asarray(x)` is a temporary too; an `if`
around nothing is dropped, and a list comprehension that is a call's only argument reads as a generator.
Module-level code is only tidied, never pruned: a later cell may read what an answer cell defines.
Code that does not parse raises SyntaxError (or ValueError, RecursionError, MemoryError on pathological
input): the caller falls back to tokens.
"""

import ast
from collections import Counter

from .rebinding import split_rebound
from .syntax import walk as _walk

ROUNDS = 20  # passes of pruning and inlining; each pass that changes anything removes a statement
MAX_NODES = 5_000  # a larger tree is only laid out anew: the course's longest answer has about 250 nodes
MAX_INLINED = 60  # nodes of a value put back in place of its temporary: a chain of them stays linear in time
_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_REPEATS = (ast.For, ast.AsyncFor, ast.While, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
            ast.GeneratorExp, *_SCOPES)
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)  # what has a block of statements
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_EFFECTS = (ast.Call, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)


def canonical(code):
    """(normal form, temporaries put back): the same string for the same code however laid out, commented
    or padded with dead code or single-use temporaries, and how many temporaries it took out."""
    tree = ast.parse(code)
    tree.body = _tidy(tree.body)
    inlined, nodes = 0, _walk(tree)
    if len(nodes) > MAX_NODES:  # hostile or generated code: pruning it could take seconds
        return ast.unparse(tree), inlined
    for fn in [n for n in _walk(tree, statements_only=True) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]:
        split_rebound(fn)
        inlined += _simplify(fn)
    _as_generators(_walk(tree) if inlined else nodes)  # a list put back may now be a call's argument
    return ast.unparse(tree), inlined


def _simplify(fn):
    """Prune and inline until nothing changes; the number of temporaries put back."""
    inlined = 0
    for _ in range(ROUNDS):
        fn.body = _prune(fn.body)
        nodes = _walk(fn)  # after _drop_unread, counts of reads and binds are too high: inlining only waits a round
        dropped = _drop_unread(fn, nodes)
        counts = _counts(nodes, fn)
        n = _inline_once_read(fn, nodes, counts)
        if not n:  # nothing put back: the counts still hold, unless an assignment was dropped
            n = _inline_pure(fn, *((_walk(fn), None) if dropped else (nodes, counts)))
        inlined += n
        if not (dropped or n):
            break
    return inlined


# ---------------------------------------------------------------- pruning


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _tidy(body):
    """A block without docstrings, imports and `pass` (one `pass` when nothing is left)."""
    kept = [s for s in body if not (_is_docstring(s) or isinstance(s, ast.Import | ast.ImportFrom | ast.Pass))]
    return kept or [ast.Pass()]


def _constant_test(test):
    """True or False for a test whose value is written in the code, None otherwise."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    return None


def _no_effect(stmt):
    """An expression statement that computes nothing anyone sees: no call (but `print`), no yield."""
    if not isinstance(stmt, ast.Expr):
        return False
    value = stmt.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print":
        return True
    return not any(isinstance(n, _EFFECTS) for n in _walk(value))


def _prune(body):
    """A block without what cannot reach its result, nested blocks included."""
    out = []
    for stmt in body:
        if isinstance(stmt, ast.If | ast.While) and (known := _constant_test(stmt.test)) is not None:
            if isinstance(stmt, ast.While) and known:
                out.append(stmt)  # `while True:` is a loop, not dead code
            else:
                out += _prune(stmt.body if known else stmt.orelse)
            continue
        if isinstance(stmt, ast.Assert) and _constant_test(stmt.test):
            continue
        if _no_effect(stmt) or isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if block and isinstance(block[0], ast.stmt):
                pruned = _prune(block)
                empty = len(pruned) == 1 and isinstance(pruned[0], ast.Pass)
                setattr(stmt, field, [] if empty and field != "body" and not isinstance(stmt, ast.Try) else pruned)
        for handler in getattr(stmt, "handlers", ()):
            handler.body = _prune(handler.body)
        if isinstance(stmt, ast.If) and _does_nothing(stmt.body) and not stmt.orelse and \
                not any(isinstance(n, _EFFECTS) for n in _walk(stmt.test)):
            continue  # `if <test without a call>: pass`
        if _does_nothing(stmt.body if isinstance(stmt, ast.Try | ast.For) else None):
            if isinstance(stmt, ast.Try):  # a `try` around nothing raises nothing: only its `finally` runs
                out += [s for s in stmt.finalbody if not isinstance(s, ast.Pass)]
                continue
            if not stmt.orelse and not any(isinstance(n, _EFFECTS) for n in _walk(stmt.iter)):
                continue  # a loop over a plain iterable that does nothing
            if isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name) and \
                    stmt.iter.func.id == "range" and not stmt.orelse:
                continue  # `for _ in range(...): pass`
        out.append(stmt)
        if isinstance(stmt, _ENDS):
            break
    return out or [ast.Pass()]


def _does_nothing(block):
    return block is not None and len(block) == 1 and isinstance(block[0], ast.Pass)


def _reads(nodes):
    """Names read anywhere in the function (nested scopes included), and names declared global or nonlocal."""
    names = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
    return names


def _drop_unread(fn, nodes):
    """Remove assignments (and nested definitions) of names nothing in the function reads; True if any."""
    read, changed = _reads(nodes), False

    def unread(stmt):
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
            targets = [stmt.target]
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return stmt.name not in read
        else:
            return False
        return all(isinstance(t, ast.Name) and t.id not in read for t in targets)

    for node, field, block in _blocks(nodes):
        kept = [s for s in block if not unread(s)]
        if len(kept) < len(block):
            changed = True
            setattr(node, field, kept or ([ast.Pass()] if field == "body" else []))
    return changed


# ---------------------------------------------------------------- inlining


def _counts(nodes, fn):
    """({name: times bound}, {name: times read}) in the function: assignments, loop targets, parameters..."""
    stores, loads = Counter(), Counter()
    for node in nodes:
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores)[node.id] += 1
        elif isinstance(node, ast.arg):
            stores[node.arg] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node is not fn:
            stores[node.name] += 1
        elif isinstance(node, ast.alias):
            stores[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stores[node.name] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            stores.update({n: 2 for n in node.names})  # never a temporary
    return stores, loads


def _own_expressions(stmt):
    """The expressions a statement evaluates itself, not those of the blocks it holds."""
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ast.expr):
                yield v
            elif isinstance(v, ast.withitem):
                yield v.context_expr


def _find_load(expr, name):
    """(parent, field, index) of the one load of `name` in `expr` outside loops, lambdas and comprehensions."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, _COMPREHENSIONS):
            node = node.generators[0]  # its first iterable is evaluated once, before the loop
            if isinstance(node.iter, ast.Name) and node.iter.id == name:
                return node, "iter", None
            stack.append(node.iter)
            continue
        if isinstance(node, _REPEATS):
            continue
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for i, v in enumerate(items):
                if isinstance(v, ast.Name) and v.id == name and isinstance(v.ctx, ast.Load):
                    return node, field, (i if isinstance(value, list) else None)
                if isinstance(v, ast.AST):
                    stack.append(v)
    return None


def _inline_once_read(fn, nodes, counts):
    """Put each temporary bound once and read once, in a later statement of its block, back where it is read;
    how many were.

    Inlining one moves its value's reads and removes its own: the counts of the other names still hold."""
    stores, loads = counts
    local, inlined = set(stores), 0
    for _, _, block in _blocks(nodes):
        i = 0
        while i < len(block):
            stmt = block[i]
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if isinstance(target, ast.Name) and stores[target.id] == 1 and loads[target.id] == 1 and \
                    len(_walk(stmt.value)) <= MAX_INLINED and _inline_into(block, i, target.id, stmt.value, local):
                inlined += 1
                continue  # block[i] is now the next statement
            i += 1
    return inlined


def _inline_into(block, i, name, value, local):
    """Replace the read of `name` in block[i+1:] by `value` when no statement between names a local it reads.

    Calls on modules (np.exp) may change order: that changes what a warning filter sees, not what is compared."""
    reads = {n.id for n in _walk(value) if isinstance(n, ast.Name)} & local
    for later in block[i + 1:]:
        for expr in () if isinstance(later, ast.While) else _own_expressions(later):
            found = _find_load(expr, name) if not (isinstance(expr, ast.Name) and expr.id == name) else "self"
            if found is None:
                continue
            if found == "self":
                _replace_expression(later, expr, value)
            else:
                parent, field, index = found
                if index is None:
                    setattr(parent, field, value)
                else:
                    getattr(parent, field)[index] = value
            del block[i]
            return True
        names = {n.id for n in _walk(later) if isinstance(n, ast.Name)}
        if name in names:
            return False  # read inside a nested block or a loop: left as written
        if reads & names:
            return False  # it rebinds, or may change (a call on it), what `value` reads
    return False


def _replace_expression(stmt, old, new):
    for field, value in ast.iter_fields(stmt):
        if value is old:
            setattr(stmt, field, new)
            return
        if isinstance(value, list) and any(v is old for v in value):
            setattr(stmt, field, [new if v is old else v for v in value])
            return


def _blocks(nodes):
    """(node, field, block) of every statement list among `nodes`."""
    out = []
    for node in nodes:
        if not isinstance(node, _HOLDERS):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                out.append((node, field, block))
    return out


# ---------------------------------------------------------------- values without effects, and operand order

_PURE = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.BinOp, ast.UnaryOp,
         ast.BoolOp, ast.Compare, ast.IfExp, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _changed_in_place(nodes):
    """Names whose object the function may change without binding them, anywhere in it: stored into
    (`x[i] = `, `x.a = `), a method called on them (`x.sort()`) or passed by keyword (numpy's `out=x`).
    A positional argument is taken as read, as numpy's functions but `copyto` do."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Subscript | ast.Attribute) and not isinstance(node.ctx, ast.Load):
            base = node
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            names = [base]
        elif isinstance(node, ast.Call):
            names = [k.value for k in node.keywords]
            names += [node.func.value] if isinstance(node.func, ast.Attribute) else []
        else:
            continue
        out.update(n.id for n in names if isinstance(n, ast.Name))
    return out


def _inline_pure(fn, nodes, counts=None):
    """Put back wherever it is read (loops and branches too) a temporary bound once to a value without calls,
    over names bound at most once, when nothing changes it or them in place: it is the same value everywhere. How many
    were (one a round: the counts change)."""
    stores, loads = counts or _counts(nodes, fn)
    changed = _changed_in_place(nodes)
    for _, _, block in _blocks(nodes):
        for stmt in block:
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if not (isinstance(target, ast.Name) and stores[target.id] == 1 and loads[target.id]) or \
                    target.id in changed:
                continue
            inside = _walk(stmt.value)
            names = {n.id for n in inside if isinstance(n, ast.Name)}
            if all(isinstance(n, _PURE) for n in inside) and target.id not in names and \
                    not any(stores[n] > 1 or (stores[n] and n in changed) for n in names) and \
                    len(inside) * loads[target.id] <= MAX_INLINED:
                _put_back(fn, target.id, stmt.value)
                block.remove(stmt)
                return 1
    return 0


def _put_back(fn, name, value):
    """Replace every read of `name` in `fn` by a copy of `value`."""
    for node in _walk(fn):
        for field, child in ast.iter_fields(node):
            items = child if isinstance(child, list) else [child]
            for i, v in enumerate(items):
                if isinstance(v, ast.Name) and v.id == name and isinstance(v.ctx, ast.Load):
                    copy = _copy(value)
                    if isinstance(child, list):
                        child[i] = copy
                    else:
                        setattr(node, field, copy)


def _copy(node):
    new = type(node)(**{f: (_copy(v) if isinstance(v, ast.AST) else [_copy(x) if isinstance(x, ast.AST) else x
                                                                          for x in v] if isinstance(v, list) else v)
                        for f, v in ast.iter_fields(node)})
    return ast.copy_location(new, node) if hasattr(node, "lineno") else new


def _as_generators(nodes):
    """A list comprehension that is a call's only argument written as a generator: sum([..]) as sum(..)."""
    for node in nodes:
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], ast.ListComp):
            node.args[0] = ast.GeneratorExp(node.args[0].elt, node.args[0].generators)
