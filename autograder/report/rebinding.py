"""A name bound again in a function's straight-line code is a new name from there on (static single assignment).

`x = np.asarray(x)` at the top of a function makes the parameter `x` a second variable under the same
name; a copier who writes `xs = np.asarray(x)` has two names. Giving each binding of the function's own
block its own name makes the two the same code, so the normal form can treat the new `x` as any other
temporary. Only names every binding of which is a parameter or a plain `name = value` in the function's
own block (not in a branch, loop, `with` or `try`), and which no nested function, lambda or class reads,
are renamed: there the binding in force at each read is known from the order of the statements alone.
"""

import ast

from .syntax import walk as _walk

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def split_rebound(fn):
    """Rename in place each later binding of a rebound name in `fn`'s own block, and the reads it reaches."""
    bound = [t.id for t in map(_plain_target, fn.body) if t is not None]
    if len(set(bound)) == len(bound) and not set(bound) & _parameters(fn):
        return  # nothing bound again in fn's own block (a binding elsewhere leaves a name alone anyway)
    names = _renamable(fn)
    if not names:
        return
    version = dict.fromkeys(names, 0)
    current = {n: n for n in names}
    for stmt in fn.body:
        _rename_reads(stmt, current)
        target = _plain_target(stmt)
        if target is not None and target.id in names:
            version[target.id] += 1
            if version[target.id] > 1 or target.id in _parameters(fn):
                current[target.id] = f"{target.id}_{version[target.id]}_rebound"
                target.id = current[target.id]


def _plain_target(stmt):
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0]
    return None


def _parameters(fn):
    a = fn.args
    return {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if p is not None}


def _renamable(fn):
    """Names bound more than once in `fn`, every binding a parameter or a plain assignment of its own block."""
    top = {id(s.targets[0]) for s in fn.body if _plain_target(s) is not None}
    plain, other, nested_reads = {}, set(), set()
    for node in _walk(fn)[1:]:  # a binding inside a nested scope is not plain either: its name is left alone
        if isinstance(node, _NESTED):
            nested_reads |= {n.id for n in _walk(node) if isinstance(n, ast.Name)}
            other |= {node.name} if not isinstance(node, ast.Lambda) else set()
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) in top:
                plain[node.id] = plain.get(node.id, 0) + 1
            else:
                other.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other |= set(node.names)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
    params = _parameters(fn)
    return {n for n, k in plain.items() if k + (n in params) > 1} - other - nested_reads


def _rename_reads(stmt, current):
    """Point every read in `stmt` of a renamed name at the binding in force before `stmt`."""
    for node in _walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in current:
            node.id = current[node.id]
