"""WCAG 2.1 AA in Chromium: axe-core (bundled by axe-playwright-python, nothing fetched) on a Playwright page.

`check(page, accepted, context)` runs axe's WCAG 2.0/2.1 A and AA rules and its best practices
(landmarks, one h1, headings in order) and fails on any violation of impact serious or critical,
and on any other that `accepted` does not list with the reason it is accepted.
"""

import json

RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
         "resultTypes": ["violations"]}
SEVERE = ("serious", "critical")


def violations(page, context=None):
    """axe's violations on the page (or within the CSS selector `context`), as dicts."""
    from axe_playwright_python.sync_playwright import Axe

    return Axe().run(page, context=context, options=RULES).response["violations"]


def _describe(v):
    nodes = "; ".join(f"{n['target']}: {n.get('failureSummary', '')[:200]!r}" for n in v["nodes"][:3])
    return f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']} [{nodes}]"


def check(page, accepted, context=None, known=None):
    """Fail on a serious or critical violation, and on any other that `accepted` ({rule id: why}) does not list.

    `known` ({rule id: why}): serious findings not fixed yet, which must still fire (so a fix is noticed).
    """
    known = known or {}
    found = violations(page, context)
    bad = [v for v in found if v["id"] not in known and (v["impact"] in SEVERE or v["id"] not in accepted)]
    assert not bad, f"axe-core on {page.url[:80]} ({context or 'whole page'}):\n" + "\n".join(map(_describe, bad))
    gone = set(known) - {v["id"] for v in found}
    assert not gone, f"{sorted(gone)} no longer fire on {page.url[:80]}: take them out of the known findings"
    return {v["id"] for v in found}


def dump(found):
    """The violations as JSON, for a failure message."""
    return json.dumps([_describe(v) for v in found], indent=1)
