"""The learner's JupyterLab as a person meets it: start-up to a ready kernel, and Run All on 00."""

import shutil
import tempfile
import time
from pathlib import Path

from benchmarks import Row


def rows():
    if not shutil.which("chromium"):
        return [Row("learner JupyterLab (browser)", float("nan"), "s", "", "skipped: Chromium is not installed")]
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, LabServer, scratch_course
    from tests.browser.jlab import open_notebook, run_all

    with tempfile.TemporaryDirectory(prefix="ffn-bench-lab-") as home, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.set_default_timeout(120_000)
        course = scratch_course(Path(home) / "course")  # as the browser tests serve it: the checkout stays as is
        server = LabServer("learner", Path(home), course)
        try:
            open_notebook(page, server, "notebooks/00_start_here.ipynb")
            to_kernel = time.perf_counter() - server.started
            t0 = time.perf_counter()
            run_all(page)
            run_all_s = time.perf_counter() - t0
        finally:
            server.stop()
            browser.close()
    return [
        Row("learner JupyterLab: start to 00_start_here's kernel idle", to_kernel, "s", "",
            f"server answering after {server.ready_after:.1f} s"),
        Row("Run All on 00_start_here in Chromium", run_all_s, "s"),
    ]
