"""JupyterLab servers and a real Chromium for the browser tests.

Each server is started on 127.0.0.1 with a token by the same code as
`make lab` (autograder.authoring.lab.lab_command), in a scratch HOME so no user settings
leak in, and stopped after the session. The learner's server serves a scratch
copy of notebooks/ and solutions/: JupyterLab saves what the tests type and run
(Validate saves first), and the checkout must stay as committed. Screenshots go
to artifacts/browser/ (printed at the start); a failing test saves one too.
"""

import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import system_needs

from autograder.authoring import lab

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("FFN_ARTIFACTS", ROOT / "artifacts")) / "browser"
CHROMIUM = system_needs.chromium()
CHROMIUM_ARGS = system_needs.CHROMIUM_ARGS


# tryfirst: the group must be marked before pytest-xdist's own hook puts it into the node id, which it does not
# when this conftest is the run's first (pytest tests/browser/...): the tests then failed as groupless.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the browser tests; tests/conftest.py skips them (or, with FFN_REQUIRE_BROWSER, fails them)
    where Chromium or Playwright is missing."""
    for item in items:
        if "browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.xdist_group("browser"))  # one worker: servers and Chromium are shared


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """A running JupyterLab: `url(path)` adds the token; `stop()` ends it."""

    def __init__(self, role, home, root=None):
        self.role, self.port, self.token = role, _free_port(), secrets.token_hex(24)
        argv, env, root = lab.lab_command(role, port=self.port, open_browser=False, allow_root=True,
                                          extra=[f"--IdentityProvider.token={self.token}",
                                                 "--ServerApp.port_retries=0"], root=root)
        env.update(HOME=str(home), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"))
        env.pop("JUPYTER_CONFIG_DIR", None)
        # JupyterLab 4 renders only the cells in view; the tests read every cell's prompt and output.
        tracker = home / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True)
        tracker.write_text(json.dumps({"windowingMode": "none"}))
        self.root = root
        self.log = open(home / f"{role}-server.log", "w")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(argv, env=env, cwd=root, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self, timeout=90):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.role} JupyterLab exited: see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        self.ready_after = time.perf_counter() - self.started
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the {self.role} JupyterLab did not answer within {timeout} s: see {self.log.name}")

    def url(self, path="lab", token=True):
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path}" + (f"{sep}token={self.token}" if token else "")

    def shut_down_kernels(self):
        """Shut down every kernel the server runs: a notebook closed in the browser keeps its kernel, and each test
        opens its own, so without this a session ran one idle kernel per notebook any test had opened."""
        with urllib.request.urlopen(self.url("api/kernels"), timeout=30) as r:
            kernels = json.load(r)
        for kernel in kernels:
            request = urllib.request.Request(self.url(f"api/kernels/{kernel['id']}"), method="DELETE")
            with urllib.request.urlopen(request, timeout=30):
                pass

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"\nbrowser screenshots: {ARTIFACTS}")
    return ARTIFACTS


def _server(role, tmp_path_factory, root=None):
    return LabServer(role, tmp_path_factory.mktemp(f"{role}-home"), root)


def scratch_course(course):
    """A copy of notebooks/ and solutions/ in the folder `course` (JupyterLab saves into what it serves); return it."""
    for folder in ("notebooks", "solutions"):
        shutil.copytree(ROOT / folder, course / folder)
    return course


@pytest.fixture(scope="session")
def learner_lab(tmp_path_factory):
    server = _server("learner", tmp_path_factory, scratch_course(tmp_path_factory.mktemp("course")))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def instructor_lab(tmp_path_factory):
    server = _server("instructor", tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _no_kernel_outlives_its_test(request):
    """Each test's kernels end with it, once its page is closed (fixtures end in reverse order of their set-up)."""
    yield
    for name in ("learner_lab", "instructor_lab"):
        if name in request.fixturenames:
            request.getfixturevalue(name).shut_down_kernels()


@pytest.fixture
def page(browser, request, artifacts):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        page.screenshot(path=str(artifacts / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
