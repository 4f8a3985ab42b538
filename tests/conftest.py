"""Shared set-up of the test suite.

The course tests (test_course_build, test_notebooks_execute, test_nbgrader_validate,
test_grading_variants) are parametrised over `autograder.assignments()`, so a new
notebook is tested as soon as its source lands. Their helpers are in `nbtools.py`;
the alternative answers they grade are in `submissions/`.

Notebook execution times are not asserted (benchmarks/bench_notebooks.py reports
them against their targets); tests record them as the user property
`notebook_seconds` and the summary at the end of the run lists them.

System packages (see `system_needs.py`): a machine without bubblewrap or Chromium
gets one line per missing package at the top of the run, with the command that
installs it, and the tests that need it skip with that reason; with
FFN_REQUIRE_SANDBOX=1 / FFN_REQUIRE_BROWSER=1 (CI sets both) they fail instead.
"""

import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:  # `import nbtools` and `import submissions`, whatever the import mode
    sys.path.insert(0, str(TESTS_DIR))

import system_needs  # noqa: E402  (found through the path just set)


def pytest_configure(config):
    config._ffn_missing = system_needs.missing()  # probed once per process: a few `which` look-ups


def pytest_report_header(config):
    """The preflight: one line per missing system package, at the top of the run (printed once, by the controller)."""
    return [need.header_line() for need in config._ffn_missing]


def pytest_itemcollected(item):
    """Give the tests that build the grading sandbox the `sandbox` marker (see system_needs.SANDBOX_TESTS)."""
    if system_needs.builds_sandbox(item):
        item.add_marker(pytest.mark.sandbox)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip (or, when required, fail) a test whose system package is missing, before its fixtures start anything.

    Skipping here, not with a skip mark, makes every such skip report this one place, so the
    summary folds them into one line per reason.
    """
    for need in item.config._ffn_missing:
        if item.get_closest_marker(need.marker) is not None:
            if need.required():
                pytest.fail(need.failure(), pytrace=False)
            pytest.skip(need.reason())


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
