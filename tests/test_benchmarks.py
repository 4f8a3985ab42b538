"""`make bench` can start: every import a bench makes, lazy ones included, resolves.

The benches run no test, so nothing else would notice a module that moved
(a bench imports `autograder.grading.scoring.gradebook`, the browser's LabServer...).
Timings are not checked here: the benches print them (`make bench`).
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted((ROOT / "benchmarks").glob("bench_*.py"))

# Imports each (module, name) pair the way `python -m benchmarks` would: from the repository root, after
# `import benchmarks`; prints what does not resolve.
_PROBE = """
import importlib, json, sys
import benchmarks
missing = []
for module, name in json.loads(sys.argv[1]):
    try:
        imported = importlib.import_module(module)
        if name and not hasattr(imported, name):
            importlib.import_module(f"{module}.{name}")
    except Exception as exc:
        missing.append(f"{module}{'.' + name if name else ''}: {exc!r}")
print("\\n".join(missing))
"""


def imports_of(path):
    """(module, name or None) of every import statement in a file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out += [(node.module, alias.name) for alias in node.names]
    return out


def test_the_probe_sees_a_missing_module():
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([["autograder.gradebook", "cell_scores"]])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "autograder.gradebook" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("bench", BENCHES, ids=lambda p: p.stem)
def test_every_import_of_a_bench_resolves(bench):
    wanted = imports_of(bench)
    assert wanted, f"{bench.name} imports nothing: the probe would prove nothing"
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(wanted)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{bench.name}: these imports fail under `python -m benchmarks`:\n{done.stdout}"
