"""The JupyterHub test: marked `hub` (root and configurable-http-proxy; tests/system_needs.py),
`browser` (students click in Chromium) and `sandbox` (grading runs sandboxed)."""

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/hub/" in str(item.fspath):
            for marker in (pytest.mark.hub, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.xdist_group("hub")):
                item.add_marker(marker)
