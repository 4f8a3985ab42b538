"""No import circle anywhere in the course's code, imports made inside functions included.

pyproject.toml's import-linter contracts (`make lint`) keep the layers; this test keeps every module, in
any layer, out of a circle: two modules that need each other are one idea split in two, or a piece that
belongs below both.
"""

import grimp

PACKAGES = ("autograder", "ffn_helpers")


def _circles(graph):
    """Each set of modules that reach one another through imports (Tarjan's strongly connected components)."""
    imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(imports[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    circle = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        circle.add(member)
                        if member == node:
                            break
                    if len(circle) > 1:
                        circles.append(sorted(circle))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(imports[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return circles


def test_the_circle_finder_finds_a_circle_through_an_import_inside_a_function(tmp_path, monkeypatch):
    package = tmp_path / "circled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from . import c\n    return c\n")
    (package / "c.py").write_text("from .a import b\n")
    (package / "d.py").write_text("from . import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _circles(grimp.build_graph("circled")) == [["circled.a", "circled.b", "circled.c"]]


def test_no_module_of_the_course_is_in_an_import_circle():
    circles = _circles(grimp.build_graph(*PACKAGES, include_external_packages=False))
    assert circles == [], "import circles (move the shared piece below both): " + "; ".join(
        " <-> ".join(c) for c in circles)
