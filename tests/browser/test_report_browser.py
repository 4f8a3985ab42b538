"""The class report as an instructor opens it: in Chromium, from a file, with no network.

The screenshots land in artifacts/browser/: report.png (the top of the page),
report-full.png (all of it) and report-exercises.png (from "Credit per exercise" to the
first exercise's misconceptions: the picture in autograder/REPORT.md).
"""

import importlib

from report_fixtures import (  # tests/ is on sys.path (tests/conftest.py)
    answer_cells,
    renamed,
    synthetic_class,
    write_class,
    write_notebooks,
)

from autograder import SOLUTIONS_DIR
from autograder.report import class_report as report

AID = "02_forward_pass"


def test_report_renders_with_its_figures_loaded_and_described(page, artifacts, tmp_path):
    records, construction = synthetic_class(40, seed=9)
    results = write_class(tmp_path / "results", records)
    copier, first, second = sorted(construction.scores)[:3]
    solution = answer_cells(SOLUTIONS_DIR / f"{AID}.ipynb")["ffn_forward"]
    shared = importlib.import_module(f"submissions.{AID}").CORRECT["loop"]["dead_fraction"].replace(
        "total = 0\n", "total = 0  # <script>window.pwned = 1</script>\n")
    notebooks = write_notebooks(tmp_path / "autograded", AID, {
        copier: {"ffn_forward": renamed(solution, "mine")}, first: {"dead_fraction": shared},
        second: {"dead_fraction": renamed(shared, "b")}})
    out = tmp_path / "report.html"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--salt", "browser-test",
                        "--anonymise", "--notebooks", str(notebooks)]) == 0
    outside = []  # every request that is not the file itself or an embedded image
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    assert page.title() == f"Class report: {AID}"
    images = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => ({alt: i.alt, complete: i.complete, w: i.naturalWidth, h: i.naturalHeight,"
               " shown: i.getBoundingClientRect().width}))")
    assert len(images) == 3
    for image in images:
        assert image["complete"] and image["w"] > 0 and image["h"] > 0 and image["shown"] > 0, image
        assert len(image["alt"]) > 40
    assert outside == []
    heading = page.locator("h4", has_text="ffn_forward").first.inner_text()
    failed = len(construction.failed("ffn_forward"))
    assert heading == f"ffn_forward: {failed} of {len(construction.scores)} students failed it"
    page.screenshot(path=str(artifacts / "report.png"))
    page.screenshot(path=str(artifacts / "report-full.png"), full_page=True)
    top = page.locator("h3", has_text="Credit per exercise").bounding_box()["y"] - 20
    bottom = page.locator("h4").nth(1).bounding_box()["y"] - 10
    body = page.locator("body").bounding_box()
    page.screenshot(path=str(artifacts / "report-exercises.png"), full_page=True,
                    clip={"x": body["x"] - 10, "y": top, "width": body["width"] + 20, "height": bottom - top})
    assert (artifacts / "report.png").stat().st_size > 10_000

    section = page.locator("#look")
    assert section.locator("h2").inner_text() == "Answers to look at"
    captions = section.locator("caption").all_inner_texts()
    assert captions == [f"{AID} ffn_forward: answers to look at", f"{AID} dead_fraction: answers to look at"]
    codes = section.locator("pre")
    assert codes.count() == 4 and all(codes.nth(i).is_visible() for i in range(4))
    left, right = codes.nth(0).bounding_box(), codes.nth(1).bounding_box()
    assert right["x"] > left["x"] + left["width"] - 1 and abs(right["y"] - left["y"]) < 1  # side by side
    assert "<script>window.pwned = 1</script>" in section.inner_text()  # shown as text, never run
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert report.pseudonym(copier, "browser-test") in section.inner_text() and copier not in section.inner_text()
    section.screenshot(path=str(artifacts / "report-look.png"))
