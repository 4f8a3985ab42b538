"""The JupyterHub test: marked `hub` (root and configurable-http-proxy; tests/system_needs.py),
`browser` (students click in Chromium) and `sandbox` (grading runs sandboxed)."""

import pytest


# tryfirst: the group must be marked before pytest-xdist's own hook puts it into the node id, which it does not
# when this conftest is the run's first (pytest tests/hub/...): the tests then failed as groupless.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/hub/" in str(item.fspath):
            for marker in (pytest.mark.hub, pytest.mark.browser, pytest.mark.sandbox, pytest.mark.xdist_group("hub")):
                item.add_marker(marker)
