"""Learner text the grader can read: every code cell buildable by Python, every string storable as UTF-8.

Two kinds of learner text would stop the grader's readers, and with them the whole notebook:

- a code cell Python cannot build (a 200,000-term sum `1+1+...`: RecursionError in the parser;
  `- - - ... 1` nested 100,000 deep: MemoryError), or one that builds but nests deeper than the
  grader's own readers (syntax-tree walkers, the similarity fingerprint) can follow;
- a lone surrogate (`"\\ud800"`: valid JSON, but no UTF-8 encoder takes it), in a cell's source
  or output, which fails every write of a notebook, a page, the gradebook or the JSON.

`screen` runs on each submitted notebook before anything else reads it: such a code cell is
replaced by one line that raises, with the reason (it is run, and graded, as a cell that fails,
as Python itself would fail it), and is reported; every other string has its lone surrogates
replaced by U+FFFD. `clean` does the same for what learner code produces while it runs (the
kernel's outputs, the clean re-run's messages) before the grader keeps it.
"""

import ast
import re

MAX_DEPTH = 200  # as deep as Python itself lets parentheses nest; far deeper than any honest cell
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text):
    """`text` with each lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def clean(value):
    """`value` with every lone surrogate in its strings (dict keys included) replaced by U+FFFD.

    Dicts and lists are changed in place (and returned); the walk uses no recursion, however deep the data."""
    if isinstance(value, str):
        return clean_text(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                child = item[key]
                if isinstance(key, str) and _SURROGATE.search(key):
                    del item[key]
                    key = clean_text(key)
                item[key] = clean_text(child) if isinstance(child, str) else child
                if isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str):
                    item[i] = clean_text(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value


def _depth(tree, limit):
    """The syntax tree's depth, counted up to `limit` + 1 (without recursion)."""
    deepest, stack = 0, [(tree, 1)]
    while stack and deepest <= limit:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def why_unreadable(source):
    """Why the grader cannot read this code cell's source, or '' when it can."""
    from .cells import analysable

    found = _SURROGATE.search(source)
    if found:
        line = source.count("\n", 0, found.start()) + 1
        return (f"it holds a lone surrogate character (U+{ord(found.group()):04X}, line {line}), "
                "which no text file can store")
    try:
        tree = ast.parse(analysable(source))
    except (SyntaxError, ValueError):
        return ""  # an ordinary syntax error: the kernel reports it, as for any learner
    except (RecursionError, MemoryError) as exc:
        return f"Python cannot build it ({type(exc).__name__}: an expression too long or nested too deep)"
    if _depth(tree, MAX_DEPTH) > MAX_DEPTH:
        return f"its code nests more than {MAX_DEPTH} levels deep, more than the grader reads"
    return ""


def stub(why):
    """The code that stands for an unreadable cell: it fails, saying why."""
    return f"raise SyntaxError({('the grader could not read this cell: ' + why)!r})\n"


def screen(nb):
    """Make a submitted notebook readable (in place); return [(cell index, why)] for the code cells replaced."""
    replaced = []
    for i, cell in enumerate(nb.get("cells", [])):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        why = why_unreadable(source) if cell.get("cell_type") == "code" and isinstance(source, str) else ""
        if why:
            cell["source"] = stub(why)
            cell["outputs"] = []
            replaced.append((i, why))
    clean(nb)
    return replaced
