"""Wall time to execute each worked solution top to bottom, and all of them together.

Each notebook runs as a learner would run it: a fresh python3 kernel (its start-up
included), from the solutions/ folder. One untimed warm-up kernel imports the
course's libraries first, so the first notebook does not pay for cold caches
(matplotlib's font cache, the disk cache of the libraries).
"""

import time

import nbformat
from nbclient import NotebookClient

from autograder import SOLUTIONS_DIR, assignments
from benchmarks import Row

CAPSTONE = "09_ffn_module"  # the capstone, with the most checks: 30 s allowed instead of 15

WARM_UP = "import numpy, scipy.special, matplotlib.pyplot, ffn_helpers, ffn_helpers.plots"


def _run(nb):
    """Execute `nb` in place; return (wall seconds, number of cells that raised)."""
    client = NotebookClient(nb, kernel_name="python3", timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(SOLUTIONS_DIR)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    return seconds, sum(any(o.output_type == "error" for o in c.get("outputs", [])) for c in nb.cells)


def _target(aid):
    return "< 30" if aid == CAPSTONE else "< 15"


def rows():
    _run(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(WARM_UP)]))
    out, total = [], 0.0
    for aid in assignments():
        seconds, failed = _run(nbformat.read(SOLUTIONS_DIR / f"{aid}.ipynb", as_version=4))
        total += seconds
        out.append(Row(f"execute solutions/{aid}.ipynb", seconds, "s", _target(aid),
                       f"{failed} cell(s) raised" if failed else "kernel start-up included"))
    out.append(Row(f"execute all {len(out)} solution notebooks", total, "s", "< 90", "sum of the rows above"))
    return out
