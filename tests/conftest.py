"""Shared set-up of the test suite.

The course tests (test_course_build, test_notebooks_execute, test_nbgrader_validate,
test_grading_variants) are parametrised over `autograder.assignments()`, so a new
notebook is tested as soon as its source lands. Their helpers are in `nbtools.py`;
the alternative answers they grade are in `submissions/`.

Notebook execution times are not asserted (benchmarks/bench_notebooks.py reports
them against their targets); tests record them as the user property
`notebook_seconds` and the summary at the end of the run lists them.
"""

import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:  # `import nbtools` and `import submissions`, whatever the import mode
    sys.path.insert(0, str(TESTS_DIR))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Make `--dist loadgroup` honour `xdist_group` marks under pytest >= 9.2.

    pytest-xdist (3.8) groups tests by appending "@<group>" to `item._nodeid`; pytest 9.2
    keeps the node id in `item._id` instead, so the suffix is lost and every test is
    scheduled on its own (two workers then both start the same JupyterLab server or
    grade the same batch). Where the suffix is missing, put it where pytest reads it.
    """
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        if not groups or "@" in item.nodeid.rpartition("]")[2]:
            continue
        nodeid = f"{item.nodeid}@{'_'.join(groups)}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(nodeid)
        else:
            item._nodeid = nodeid


def pytest_terminal_summary(terminalreporter):
    """List the notebook execution times recorded by the tests (xdist carries user properties to the controller)."""
    times = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "notebook_seconds":
                    times.update(value)
    if not times:
        return
    terminalreporter.section("notebook execution times (wall, kernel start-up included; not asserted)")
    for name, seconds in sorted(times.items()):
        terminalreporter.write_line(f"{name:<48} {seconds:6.1f} s")
    solutions = [s for name, s in times.items() if name.startswith("solutions/")]
    if solutions:
        terminalreporter.write_line(f"{'all solution notebooks':<48} {sum(solutions):6.1f} s")
