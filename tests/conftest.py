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

import run_locks  # noqa: E402  (found through the path just set)
import system_needs  # noqa: E402

pytest_plugins = ["inherited_signals"]  # every test leaves the signal handling a child inherits as it found it

MISSING = pytest.StashKey[list]()  # the system packages this machine lacks (system_needs.missing())
LOST_GROUP = pytest.StashKey[bool]()  # a test whose xdist_group the scheduler cannot see
OWN_LOCKS = pytest.StashKey[str]()  # the folder of the run's locks, if this process made it (run_locks.py)


def pytest_configure(config):
    config.stash[MISSING] = system_needs.missing()  # probed once per process: a few `which` look-ups
    config.stash[OWN_LOCKS] = run_locks.make_folder()  # by the controller, before it starts its workers


def pytest_unconfigure(config):
    folder = config.stash.get(OWN_LOCKS, None)
    if folder:
        run_locks.remove_folder(folder)


def _lock_waits(terminalreporter, config):
    """How long tests waited for the grading locks (run_locks.py), beside --durations: time a core may sit idle."""
    folder = config.stash.get(OWN_LOCKS, None)
    waits = run_locks.waits(folder) if folder else []
    if waits:
        terminalreporter.write_sep("=", f"waits for the grading locks: {sum(s for s, _ in waits):.0f} s in all")
        for seconds, test in waits[:10]:
            terminalreporter.write_line(f"{seconds:8.1f}s  {test}")


def pytest_report_header(config):
    """The preflight: one line per missing system package, at the top of the run (printed once, by the controller)."""
    return [need.header_line() for need in config.stash[MISSING]]


def pytest_itemcollected(item):
    """Give the tests that build the grading sandbox the `sandbox` marker (see system_needs.SANDBOX_TESTS)."""
    if system_needs.builds_sandbox(item):
        item.add_marker(pytest.mark.sandbox)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip (or, when required, fail) a test whose system package is missing, before its fixtures start anything;
    fail one whose xdist_group was lost (pytest_collection_modifyitems).

    Skipping here, not with a skip mark, makes every such skip report this one place, so the
    summary folds them into one line per reason.
    """
    if item.stash.get(LOST_GROUP, False):
        pytest.fail("--dist loadgroup cannot see this test's xdist_group, so its group could run on two workers at "
                    "once: a conftest marked it after pytest-xdist read the marks (mark it in a tryfirst hook), or "
                    "pytest is 9.2 or newer (pytest-xdist#1386; pyproject.toml asks for below 9.2). Or run "
                    "without -n.", pytrace=False)
    for need in item.config.stash[MISSING]:
        if item.get_closest_marker(need.marker) is not None:
            if need.required():
                pytest.fail(need.failure(), pytrace=False)
            pytest.skip(need.reason())


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Fail the tests of a `--dist loadgroup` run that lost their `xdist_group`, rather than run a group on two
    workers at once (two JupyterLab servers, one grading batch twice).

    pytest-xdist puts a test's group into its node id ("...@<group>"), where its scheduler reads it; under
    pytest 9.2 that no longer takes (pytest-xdist#1386), which is why pyproject.toml keeps pytest below 9.2.
    """
    result = yield  # pytest-xdist's own hook, in a worker, has named the groups by now
    if config.getoption("loadgroup", False):  # set by pytest-xdist in a worker of a loadgroup run, read by its hook
        for item in items:
            if any(item.iter_markers("xdist_group")) and "@" not in item.nodeid.rpartition("]")[2]:
                item.stash[LOST_GROUP] = True
    return result


def pytest_terminal_summary(terminalreporter, config):
    _notebook_times(terminalreporter)
    _lock_waits(terminalreporter, config)


def _notebook_times(terminalreporter):
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


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium per test process, shared by every test that drives one (tests/browser/, the hub's,
    the feedback pages'): Playwright's sync API holds the thread's event loop while it runs, so a second
    `sync_playwright()` in the same process, started after the first, is refused."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=system_needs.chromium(), args=system_needs.CHROMIUM_ARGS,
                                     headless=True)
        yield chromium
        chromium.close()
