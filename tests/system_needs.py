"""System packages the test suite needs beyond .venv, and which tests need them.

`make test` installs Python packages only. Two kinds of tests also need a program from
the operating system:

- tests marked `sandbox` build the grading sandbox: bubblewrap (`bwrap`), plus
  `prlimit` and `setpriv` from util-linux, as `autograder.grading.gate_in.sandbox.probe` checks;
- tests marked `browser` drive JupyterLab in Debian's Chromium, through Playwright;
- tests marked `hub` (tests/hub/) deploy the course on JupyterHub with system users they
  create: they need root and JupyterHub's proxy, `configurable-http-proxy` from npm;
- tests marked `namespaces` start Dask workers in network and mount namespaces of their own:
  they need root, `ip` from iproute2 and `unshare` from util-linux (FFN_REQUIRE_SANDBOX).

Where one is missing, the run says so once (conftest's report header) and those tests
skip with the same one-line reason. CI must never pass by skipping: it sets
FFN_REQUIRE_SANDBOX=1, FFN_REQUIRE_BROWSER=1 and FFN_REQUIRE_HUB=1, which turn those skips into failures.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

# Tests that build the sandbox without saying so with a marker: the grading modules run
# `python -m autograder grade` (which refuses to grade without it), the rest build one directly.
SANDBOX_MODULES = ("test_grader_cli.py", "test_grader_adversarial.py", "test_public_build.py")
SANDBOX_TESTS = (
    "test_report.py::test_report_on_a_class_graded_by_the_grade_command",
    "test_grader_units.py::test_sandbox_probe_succeeds_here",
    "test_grader_units.py::test_sandbox_keeps_a_python_that_lives_under_tmp",
)
SANDBOX_FIXTURES = ("box",)  # test_grader_units' ready-made sandbox



CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def chromium():
    """The Chromium the browser tests launch: $FFN_CHROMIUM, else `chromium` on PATH, else Debian's."""
    return os.environ.get("FFN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@dataclass(frozen=True)
class Missing:
    """A system package this machine lacks, and the tests (by marker) that need it."""

    package: str  # what is missing, as a user would install it
    what: str  # what it is for
    install: str  # the command that installs it
    marker: str
    require_env: str  # set (to anything but "" or "0"): the tests fail instead of skipping

    def header_line(self):
        return f"missing: {self.package} ({self.what}); install it with: {self.install}"

    def reason(self):
        return f"{self.package} is not installed ({self.install}); needed for {self.what}"

    def required(self):
        return os.environ.get(self.require_env, "") not in ("", "0")

    def failure(self):
        return f"{self.require_env} is set, so this test must run, but {self.reason()}"


def missing():
    """The system packages this machine lacks, as `Missing` records (empty when nothing is missing)."""
    found = []
    tools = [t for t in ("bwrap", "prlimit") + (("setpriv",) if os.geteuid() == 0 else ()) if shutil.which(t) is None]
    if "bwrap" in tools:
        found.append(Missing("bubblewrap", "the grading sandbox", "apt-get install bubblewrap",
                             "sandbox", "FFN_REQUIRE_SANDBOX"))
    if set(tools) - {"bwrap"}:  # prlimit, setpriv: on every Debian, but not in every container image
        found.append(Missing("util-linux", "the grading sandbox's limits", "apt-get install util-linux",
                             "sandbox", "FFN_REQUIRE_SANDBOX"))
    if os.geteuid() != 0:
        found.append(Missing("root privileges", "the cluster test's network namespaces",
                             "sudo .venv/bin/python -m pytest tests/test_grader_cluster.py", "namespaces",
                             "FFN_REQUIRE_SANDBOX"))
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        found.append(Missing("iproute2 and util-linux", "the cluster test's network namespaces",
                             "apt-get install iproute2 util-linux", "namespaces", "FFN_REQUIRE_SANDBOX"))
    if not Path(chromium()).is_file():
        found.append(Missing("chromium", "the browser tests of JupyterLab", "apt-get install chromium",
                             "browser", "FFN_REQUIRE_BROWSER"))
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            found.append(Missing("playwright (Python)", "the browser tests of JupyterLab",
                                 "pip install -e '.[dev]'", "browser", "FFN_REQUIRE_BROWSER"))
    if os.geteuid() != 0:
        found.append(Missing("root privileges", "the JupyterHub test, which creates system users",
                             "sudo .venv/bin/python -m pytest tests/hub", "hub", "FFN_REQUIRE_HUB"))
    if shutil.which("configurable-http-proxy") is None:
        found.append(Missing("configurable-http-proxy", "the JupyterHub test",
                             "apt-get install nodejs npm && npm install --global configurable-http-proxy",
                             "hub", "FFN_REQUIRE_HUB"))
    return found


def builds_sandbox(item):
    """Does this test item build the grading sandbox (and so need bubblewrap)?"""
    if item.get_closest_marker("sandbox") is not None:
        return True
    module = Path(str(item.fspath)).name
    if module in SANDBOX_MODULES:
        return True
    if f"{module}::{getattr(item, 'originalname', item.name)}" in SANDBOX_TESTS:
        return True
    return any(f in getattr(item, "fixturenames", ()) for f in SANDBOX_FIXTURES)
