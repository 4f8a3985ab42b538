"""A walk over a syntax tree that both the normal form and the rebinding pass use."""

import ast


def walk(node, statements_only=False):
    """Every node under `node` (itself first), or every statement; ast.walk's job, without its generators."""
    out, i = [node], 0
    while i < len(out):
        n = out[i]
        i += 1
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, list):
                out += [v for v in value if isinstance(v, ast.stmt if statements_only else ast.AST)]
            elif isinstance(value, ast.AST) and name != "ctx" and not statements_only:
                out.append(value)
    return out
