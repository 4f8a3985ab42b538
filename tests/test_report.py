"""The class report (`python -m autograder report`), on results JSON built with known numbers.

The hand-built class below is the construction every count is asserted against;
the grading-driven test at the end grades real submissions of 02_forward_pass
through `python -m autograder grade` first.
"""

import base64
import csv
import html.parser
import json
import re
import statistics
import subprocess
import sys
from dataclasses import replace

import pytest
from report_fixtures import (
    cell,
    flag,
    graded_cells,
    not_run_cells,
    student_record,
    synthetic_class,
    write_class,
)
from run_locks import one_batch

from autograder import REPO_ROOT, assignments
from autograder import exercise_of_test as exercise_of
from autograder.report import class_report as report
from autograder.report import figures as report_figures
from autograder.report.results import ReportError, course_layout, read_results
from autograder.schema import CellStatus, Diagnosis, Status, StudentResult
from ffn_helpers import mistakes, plots

AID = "02_forward_pass"
LAYOUT = course_layout(AID)
FFN_ALL = ("test_ffn_forward", "test_ffn_forward_hidden")
LIN_ALL = ("test_linear_torch", "test_linear_torch_hidden")
DEAD_HIDDEN = ("test_dead_fraction_hidden",)
WRONG_SHAPE = ()  # a failure no catalogued mistake explains


def _explanation(exercise, key):
    return next(m.explanation for m in mistakes.for_exercise(exercise) if m.key == key)


# Student id prefix -> (how many, what went wrong); every number below follows from this table.
CLASS = {
    "ok": (12, {}),
    "b1": (7, {"ffn_forward": (("missing_b1",), FFN_ALL)}),
    "noact": (4, {"ffn_forward": (("no_activation",), FFN_ALL)}),
    "ffnshape": (3, {"ffn_forward": (WRONG_SHAPE, FFN_ALL)}),
    "torch": (5, {"linear_torch": (("torch_layout",), LIN_ALL)}),
    "colvec": (3, {"linear_torch": (WRONG_SHAPE, ("test_linear_torch_hidden",))}),
    "deadb1": (2, {"dead_fraction": (("missing_b1",), DEAD_HIDDEN)}),
    "weak": (2, {"ffn_forward": (WRONG_SHAPE, FFN_ALL), "linear_torch": (WRONG_SHAPE, LIN_ALL),
                 "dead_fraction": (WRONG_SHAPE, ("test_dead_fraction", "test_dead_fraction_hidden"))}),
}
SCORED = sum(n for n, _ in CLASS.values()) + 3  # + the timeout, the flagged and the review-flag students
MISSING, UNREADABLE = ("miss-1", "miss-2"), ("broken-1",)


def hand_built_class(folder):
    """Write the class of CLASS plus one timeout, one flagged, one review flag, 2 missing and 1 unreadable."""
    records = []
    for prefix, (n, wrong) in CLASS.items():
        for i in range(1, n + 1):
            records.append(student_record(f"{prefix}-{i}", AID, graded_cells(LAYOUT, wrong)))
    records.append(student_record("slow-1", AID, graded_cells(LAYOUT, {}, timed_out=DEAD_HIDDEN), status="timeout"))
    reference = flag("reference", "ffn_forward", "calls the reference ffn_helpers.ffn_forward")
    records.append(student_record("cheat-1", AID, graded_cells(LAYOUT, {}, flagged=("ffn_forward",)),
                                  status="flagged", flags=[reference]))
    records.append(student_record("shell-1", AID, graded_cells(LAYOUT, {}),
                                  flags=[flag("review", "dead_fraction", "runs a shell command")]))
    for student in MISSING:
        records.append(student_record(student, AID, not_run_cells(LAYOUT, f"no notebook in submitted/{student}/{AID}/"),
                                      status="missing notebook"))
    records.append(student_record("broken-1", AID, not_run_cells(LAYOUT, "submitted/broken-1/02_forward_pass/"
                                                                           "02_forward_pass.ipynb is not JSON"),
                                  status="unreadable notebook"))
    return write_class(folder, records)


def expected_scores():
    """Every scored student's total, from the construction (ffn_forward 4 points, linear_torch 3, dead_fraction 3)."""
    points = {g: p for g, _, p in LAYOUT.cells}
    scores = {}
    for prefix, (n, wrong) in CLASS.items():
        lost = sum(points[g] for _, cells in wrong.values() for g in cells)
        scores.update({f"{prefix}-{i}": 10 - lost for i in range(1, n + 1)})
    scores.update({"slow-1": 10 - points["test_dead_fraction_hidden"], "cheat-1": 6, "shell-1": 10})
    return scores


class Tables(html.parser.HTMLParser):
    """The report's tables, by caption: each a list of rows, each a list of cell texts."""

    def __init__(self, text):
        super().__init__()
        self.tables, self._caption, self._rows, self._cell, self._in_caption = {}, None, None, None, False
        self.images = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._rows, self._caption = [], ""
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = ""
        elif tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        if tag == "table":
            self.tables[self._caption] = self._rows
            self._rows = None
        elif tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None:
            self._rows[-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._in_caption:
            self._caption += data
        elif self._cell is not None:
            self._cell += data

    def rows(self, caption):
        """{first cell: the other cells} of a table, header row dropped."""
        return {r[0]: r[1:] for r in self.tables[caption][1:]}


@pytest.fixture
def built(tmp_path):
    results = hand_built_class(tmp_path / "results")
    return report.build([AID], results, anonymise=False), results


def _exercise(b, name):
    return next(e for e in b.reports[0].exercises if e.exercise == name)


# ---------------------------------------------------------------- the numbers against the construction


def test_misconception_counts_match_the_construction(built):
    b, _ = built
    ffn = _exercise(b, "ffn_forward")
    failed_ffn = 7 + 4 + 3 + 2 + 1  # b1, noact, ffnshape, weak, and the flagged student's zero
    assert (ffn.scored, ffn.full, ffn.partial, ffn.zero) == (SCORED, SCORED - failed_ffn, 0, failed_ffn)
    named = {m.key: (m.students, m.failed) for m in ffn.mistakes}
    assert named == {"missing_b1": (7, failed_ffn), "no_activation": (4, failed_ffn)}
    assert (ffn.undiagnosed, ffn.flagged) == (3 + 2, 1)
    assert [m.key for m in ffn.mistakes] == ["missing_b1", "no_activation"]  # most common first
    assert ffn.mistakes[0].explanation == _explanation("ffn_forward", "missing_b1")

    lin = _exercise(b, "linear_torch")
    assert (lin.full, lin.partial, lin.zero) == (SCORED - 10, 3, 5 + 2)
    assert {m.key: m.students for m in lin.mistakes} == {"torch_layout": 5}
    assert lin.mistakes[0].explanation == _explanation("linear_torch", "torch_layout")

    dead = _exercise(b, "dead_fraction")  # missing_b1 here too: a key has one explanation in every exercise
    assert (dead.full, dead.partial, dead.zero) == (SCORED - 5, 2 + 1, 2)
    assert {m.key: (m.students, m.failed) for m in dead.mistakes} == {"missing_b1": (2, 5)}
    assert dead.mistakes[0].explanation == _explanation("dead_fraction", "missing_b1")
    assert dead.mistakes[0].explanation == ffn.mistakes[0].explanation


def test_the_html_states_the_counts_and_the_explanations(built):
    b, _ = built
    tables = Tables(b.html)
    ffn = tables.rows("ffn_forward: misconceptions named")
    assert ffn["missing_b1"] == ["7 of 17", "41%", _explanation("ffn_forward", "missing_b1")]
    assert ffn["no_activation"][:2] == ["4 of 17", "24%"]
    assert tables.rows("linear_torch: misconceptions named")["torch_layout"][:2] == ["5 of 10", "50%"]
    dead = tables.rows("dead_fraction: misconceptions named")
    assert dead["missing_b1"] == ["2 of 5", "40%", _explanation("dead_fraction", "missing_b1")]
    assert "5 of 17 failed without a named misconception" in b.html
    assert "1 of 17 lost it to an integrity flag" in b.html


def test_exercises_are_sorted_hardest_first_with_their_credit(built):
    b, _ = built
    rows = Tables(b.html).tables["Credit per exercise"][1:]
    assert [r[0] for r in rows] == ["ffn_forward", "linear_torch", "dead_fraction"]
    n = SCORED
    assert rows[0][1:] == ["4", f"{n - 17} ({(n - 17) / n:.0%})", f"0 ({0:.0%})", f"17 ({17 / n:.0%})",
                           f"{(n - 17) / n:.0%}"]
    mean_lin = (n - 10 + 3 * (1 / 3)) / n  # the partial ones lost the 2-point hidden test of 3 points
    assert rows[1][-1] == f"{mean_lin:.0%}" and abs(_exercise(b, "linear_torch").mean_credit - mean_lin) < 1e-12


def test_score_statistics_match_the_construction(built):
    b, _ = built
    scores = expected_scores()
    rep = b.reports[0]
    assert sorted(rep.scores) == sorted(scores.values())
    assert rep.max_score == 10 and rep.scored == SCORED == len(scores)
    assert abs(rep.mean - statistics.fmean(scores.values())) < 1e-12
    assert rep.median == statistics.median(scores.values())
    full = sum(s == 10 for s in scores.values())
    assert rep.full_share == full / len(scores)
    overview = Tables(b.html).rows("Overview")[AID]
    assert overview[:6] == [str(len(scores) + 3), str(len(scores)), f"{statistics.fmean(scores.values()):.2f}",
                            f"{statistics.median(scores.values()):g}", "10", f"{full / len(scores):.0%}"]


def test_students_needing_attention_with_their_reasons(built):
    b, _ = built
    rows = Tables(b.html).rows("Students needing attention")
    assert set(rows) == {*MISSING, *UNREADABLE, "slow-1", "cheat-1", "shell-1", "weak-1", "weak-2"}
    assert rows["miss-1"][:3] == [AID, "missing notebook", "–"]
    assert "no notebook in submitted/miss-1" in rows["miss-1"][3]
    assert rows["broken-1"][1] == "unreadable notebook" and "is not JSON" in rows["broken-1"][3]
    assert rows["slow-1"][1:3] == ["timeout", "8 / 10"]
    assert "timed out in test_dead_fraction_hidden" in rows["slow-1"][3]
    assert rows["cheat-1"][1] == "flagged" and "reference in ffn_forward" in rows["cheat-1"][3]
    assert rows["shell-1"][1] == "graded" and "for review (no points lost)" in rows["shell-1"][3]
    assert rows["weak-1"][1:] == ["graded", "0 / 10", "score below 50% of the points"]
    order = list(rows)
    assert order.index("miss-1") < order.index("slow-1") < order.index("weak-1")  # no score, problem, low score


def test_threshold_lists_every_scored_student_below_it(tmp_path):
    results = hand_built_class(tmp_path / "results")
    b = report.build([AID], results, threshold=0.7)
    below = {s for s, score in expected_scores().items() if score < 7}
    listed = {a.student for a in b.attention if "score below 70%" in a.reason}
    assert listed == below and len(below) == 7 + 4 + 3 + 2 + 1  # b1, noact, ffnshape, weak, cheat (6 points)


def test_csv_has_the_same_table(tmp_path):
    results = hand_built_class(tmp_path / "results")
    out, table = tmp_path / "report.html", tmp_path / "report.csv"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--csv", str(table)]) == 0
    with table.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == report.CSV_COLUMNS
    exercise_rows = [r for r in rows if not r["misconception"]]
    assert [r["exercise"] for r in exercise_rows] == ["ffn_forward", "linear_torch", "dead_fraction"]
    ffn = exercise_rows[0]
    assert (ffn["students_scored"], ffn["full"], ffn["zero"], ffn["failed"]) == (str(SCORED), str(SCORED - 17),
                                                                                   "17", "17")
    assert (ffn["failed_unexplained"], ffn["failed_flagged"]) == ("5", "1")
    b1 = [r for r in rows if r["misconception"] == "missing_b1"]
    assert [(r["exercise"], r["students_named"], r["failed"]) for r in b1] == [("ffn_forward", "7", "17"),
                                                                                ("dead_fraction", "2", "5")]
    assert float(b1[0]["share_of_failed"]) == pytest.approx(7 / 17, abs=5e-5)
    assert b1[1]["explanation"] == _explanation("dead_fraction", "missing_b1")


# ---------------------------------------------------------------- self-contained, with described figures


def test_the_html_is_self_contained_and_every_figure_has_alt_text(built):
    b, _ = built
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", b.html)
    assert "<script" not in b.html and "@import" not in b.html and "url(" not in b.html
    images = Tables(b.html).images
    assert len(images) == 3  # score histogram, credit per exercise, misconceptions
    for img in images:
        assert img["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(img["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(img["alt"]) > 40 and int(img["width"]) > 0 and int(img["height"]) > 0
    hist_alt = images[0]["alt"]
    scores = expected_scores().values()
    assert f"Mean {statistics.fmean(scores):.2f}" in hist_alt and f"{len(scores)} students" in hist_alt
    assert "ffn_forward: 59% full, 0% partial, 41% zero" in images[1]["alt"]
    assert "ffn_forward: missing_b1: 7" in images[2]["alt"]


def test_figures_have_titles_labelled_axes_and_the_course_palette():
    hist = report_figures.score_histogram(AID, [2, 6, 6, 10, 10], 10, 6.8, 6, 0.4)
    bars = report_figures.exercise_bars(AID, [("ffn_forward", 3, 1, 1), ("linear_torch", 4, 1, 0)])
    named = report_figures.mistake_bars(AID, [("ffn_forward: missing_b1", 7), ("linear_torch: torch_layout", 2)])
    palette = {c.lower() for c in (*plots.OKABE_ITO, plots.GREY, "#ffffff")}
    for image in (hist, bars, named):
        fig = image.figure
        assert fig.get_suptitle().startswith(AID)
        ax = fig.axes[0]
        assert ax.get_xlabel() and ax.get_ylabel()
        for patch in ax.patches:
            r, g, b_, _ = patch.get_facecolor()
            assert f"#{round(r * 255):02x}{round(g * 255):02x}{round(b_ * 255):02x}" in palette
    heights = [p.get_height() for p in hist.figure.axes[0].patches]
    assert heights == [0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2]  # one bar per possible score 0..10
    assert "Students per score: 2: 1; 6: 2; 10: 2." in hist.alt
    widths = [round(p.get_width(), 12) for p in bars.figure.axes[0].patches]
    assert widths == [0.6, 0.8, 0.2, 0.2, 0.2, 0.0]  # full, then partial, then zero, per exercise


def test_scores_off_the_grid_are_binned():
    scores = [0.1, 3.33, 9.99, 10.0]
    centres, counts, _ = report_figures._score_bins(scores, 10.0)
    assert len(centres) == 20 and sum(counts) == 4 and counts[0] == 1 and counts[-1] == 2


# ---------------------------------------------------------------- anonymised


def test_anonymise_replaces_every_id_with_a_stable_pseudonym(tmp_path):
    results = hand_built_class(tmp_path / "results")
    salt_file = tmp_path / "course" / ".report_salt"
    first = report.build([AID], results, anonymise=True, salt_file=salt_file)
    assert salt_file.stat().st_mode & 0o777 == 0o600 and len(salt_file.read_text().strip()) == 64
    again = report.build([AID], results, anonymise=True, salt_file=salt_file)
    students = [s.student for s in first.reports[0].students]
    for student in students:
        assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(student)}(?![A-Za-z0-9])", first.html), student
    listed = [a.student for a in first.attention]
    assert listed == [a.student for a in again.attention]
    assert all(re.fullmatch(r"S-[0-9a-f]{10}", p) for p in listed)
    salt = salt_file.read_text().strip()
    assert report.pseudonym("miss-1", salt) in listed
    assert f"no notebook in submitted/{report.pseudonym('miss-1', salt)}/" in first.html  # reasons scrubbed too
    other = report.build([AID], results, anonymise=True, salt="another course")
    assert not set(listed) & {a.student for a in other.attention}


def test_pseudonyms_depend_only_on_id_and_salt():
    assert report.pseudonym("alice", "k") == report.pseudonym("alice", "k")
    assert report.pseudonym("alice", "k") != report.pseudonym("alice", "k2")
    assert report.pseudonym("alice", "k") != report.pseudonym("bob", "k")


def test_salt_problems_are_clear_errors(tmp_path):
    empty = tmp_path / "empty_salt"
    empty.write_text("\n")
    with pytest.raises(ReportError, match="salt file .* is empty"):
        report.load_salt(salt_file=empty)
    with pytest.raises(ReportError, match="non-empty"):
        report.load_salt(salt="")


# ---------------------------------------------------------------- bad and odd input: clear report or clear error


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "autograder.report", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or REPO_ROOT, timeout=300)


def test_an_empty_class_is_a_clear_error(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "grades.csv").write_text("student_id\n")
    done = _cli(AID, "--results", tmp_path / "results", "--out", tmp_path / "r.html")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "found no student results for 02_forward_pass" in done.stderr and "<student>.json" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_a_missing_results_folder_is_a_clear_error(tmp_path):
    done = _cli(AID, "--results", tmp_path / "nowhere", "--out", tmp_path / "r.html")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "does not exist" in done.stderr and "nowhere" in done.stderr


def test_bad_arguments_are_clear_errors(tmp_path):
    done = _cli(AID, "--results", tmp_path, "--out", tmp_path / "r.html", "--threshold", "1.5")
    assert done.returncode == 2 and "between 0 and 1" in done.stderr and "Traceback" not in done.stderr
    done = _cli(AID, "--results", tmp_path, "--out", tmp_path / "r.html", "--salt", "x", "--salt-file", "y")
    assert done.returncode == 2 and "not allowed with" in done.stderr
    results = hand_built_class(tmp_path / "results")
    done = _cli(AID, "--results", results, "--out", tmp_path / "no" / "such" / "dir" / "r.html")
    assert done.returncode == 2 and "could not write" in done.stderr and "Traceback" not in done.stderr


def test_a_class_where_nobody_submitted_gets_a_clear_report(tmp_path):
    records = [student_record(f"s{i}", AID, not_run_cells(LAYOUT, "no notebook"), status="missing notebook")
               for i in range(30)]
    results = write_class(tmp_path / "results", records)
    done = _cli(AID, "--results", results, "--out", tmp_path / "r.html", "--csv", tmp_path / "r.csv")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No submission of 02_forward_pass could be scored: all 30 students are listed" in page
    assert len(Tables(page).rows("Students needing attention")) == 30 and "<img" not in page
    with (tmp_path / "r.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["exercise"], r["students_scored"]) for r in rows] == [(e, "0") for e in LAYOUT.exercises]


def test_a_field_outside_the_schema_is_a_clear_note(tmp_path):
    results = hand_built_class(tmp_path / "results")
    data = json.loads((results / "ok-1.json").read_text())
    data["late_penalty"] = 0.5
    (results / "ok-1.json").write_text(json.dumps(data))
    b = report.build([AID], results)
    why = "ok-1.json: the record has the field(s) 'late_penalty', which schema 1 does not have"
    assert any(n.startswith(why) and n.endswith("its student is listed as needing attention") for n in b.notes)
    notes = b.html[b.html.index("<section id='notes'>"):]
    assert "ok-1.json: the record has the field(s) 'late_penalty'" in html.unescape(notes)
    rows = Tables(b.html).rows("Students needing attention")
    assert rows["ok-1"][1] == "results file unreadable" and rows["ok-1"][3].startswith(why)


def test_bad_statuses_schemas_and_files_are_listed_not_raised(tmp_path):
    results = hand_built_class(tmp_path / "results")
    (results / "garbled.json").write_text("{not json")
    odd = student_record("odd-1", AID, graded_cells(LAYOUT, {}))
    odd["status"] = "exploded"
    bad = student_record("bad-1", AID, graded_cells(LAYOUT, {}))
    bad["notebooks"][0]["cells"][0]["points"] = "two"
    old = student_record("old-1", AID, graded_cells(LAYOUT, {}))
    del old["schema"]
    new = dict(student_record("new-1", AID, graded_cells(LAYOUT, {})), schema=2)
    write_class(results, [odd, bad, old, new])
    (results / "run.json").write_text(json.dumps({"jobs": 2, "seconds": 31.5}))
    b = report.build([AID], results)
    rows = Tables(b.html).rows("Students needing attention")
    assert {rows[s][1] for s in ("garbled", "odd-1", "bad-1", "old-1", "new-1")} == {"results file unreadable"}
    assert "could not be read as JSON" in rows["garbled"][3]
    known = ", ".join(Status)
    assert f"odd-1.json: status 'exploded' is not one of schema 1's ({known})" in rows["odd-1"][3]
    assert known.startswith("results file unreadable, missing notebook, unreadable notebook, grader error, flagged")
    assert "bad-1.json: notebooks[0].cells[0].points should be a finite number, got 'two'" in rows["bad-1"][3]
    expected = 'should be a student\'s results with "schema": 1 (as `python -m autograder grade` writes them), got '
    assert rows["old-1"][3].startswith(f"old-1.json {expected}no schema field")
    assert rows["new-1"][3].startswith(f'new-1.json {expected}"schema": 2')
    assert any(n.startswith("skipped run.json: not a student's results") for n in b.notes)
    assert b.reports[0].scored == SCORED  # none of the unreadable ones has scores


def test_a_result_round_trips_through_json():
    """What the grader writes (StudentResult.to_dict, as JSON) reads back as the same records."""
    cells = graded_cells(LAYOUT, {"ffn_forward": (("missing_b1", "no_activation"), FFN_ALL)}, timed_out=DEAD_HIDDEN)
    record = student_record("rt-1", AID, cells, status="timeout", error="a traceback",
                            flags=[flag("review", None, "runs a shell command"), flag("lying", "ffn_forward", "x")])
    written = json.dumps(record, sort_keys=True)
    back = StudentResult.from_dict(json.loads(written))
    assert json.dumps(back.to_dict(), sort_keys=True) == written
    assert back.status is Status.TIMEOUT and back.error == "a traceback"
    assert back.score == sum(c.points for c in cells) < back.max_score == 10
    assert [(f.kind, f.costs_points) for f in back.flags] == [("review", False), ("lying", True)]
    ffn = back.cells[0]
    assert ffn.status == "failed" and ffn.mistakes == ("missing_b1", "no_activation") and ffn.notebook == AID
    assert back.cells[-1].status is CellStatus.TIMEOUT


def test_every_status_the_grader_writes_has_its_label_in_the_report(tmp_path):
    statuses = [s for s in Status if s is not Status.RESULTS_UNREADABLE]  # that one is the report's own
    records = [student_record(f"s-{i}", AID, not_run_cells(LAYOUT, "why") if status in ("missing notebook",
                              "unreadable notebook", "grader error") else graded_cells(LAYOUT, {}), status=status,
                              flags=[flag("reference", "ffn_forward", "x")] if status == "flagged" else ())
               for i, status in enumerate(statuses)]
    data = read_results(write_class(tmp_path / "r", records), [AID])
    assert [s.status_label for s in data.students[AID]] == [s.label for s in statuses] and not data.notes
    assert all(s.label and s.label == s.value for s in (*Status, *CellStatus))
    rows = Tables(report.build([AID], tmp_path / "r").html).rows("Students needing attention")
    assert {rows[f"s-{i}"][1] for i, s in enumerate(statuses) if s != "graded"} == {s for s in statuses} - {"graded"}


def test_keys_outside_the_catalogue_are_shown_as_they_came(tmp_path):
    # A results file from another version of the course may name a key this catalogue no longer has.
    odd = (Diagnosis("made_up_key", "you did something odd"),)
    cells = [replace(cell(g, e, 0.0, p, "AssertionError: off"), diagnosis=odd) if e == "ffn_forward"
             else cell(g, e, p, p) for g, e, p in LAYOUT.cells]
    b = report.build([AID], write_class(tmp_path / "r", [student_record("x-1", AID, cells)]))
    row = Tables(b.html).rows("ffn_forward: misconceptions named")["made_up_key"]
    assert row[:2] == ["1 of 1", "100%"] and row[2] == "you did something odd (not in the course's mistake catalogue)"


def test_a_duplicate_student_is_kept_once_with_a_note(tmp_path):
    results = hand_built_class(tmp_path / "results")
    sub = results / AID
    sub.mkdir()
    (sub / "ok-1.json").write_text((results / "ok-1.json").read_text())
    b = report.build([AID], results)
    assert sum(s.student == "ok-1" for s in b.reports[0].students) == 1
    assert any("a second result for ok-1" in n for n in b.notes)


def test_several_assignments_in_one_report(tmp_path):
    results = tmp_path / "results"
    write_class(results / AID, synthetic_class(12, seed=1)[0])
    other = "01_relu_sign_cases"
    records, built = synthetic_class(9, seed=2, assignment=other)
    write_class(results, records)  # flat, next to the other assignment's folder: each file names its assignment
    (results / "readme.json").write_text("[]")  # an empty list holds no student
    b = report.build([AID, other], results)
    assert [r.assignment for r in b.reports] == [AID, other]
    assert [len(r.students) for r in b.reports] == [12, 9]
    assert b.reports[1].max_score == course_layout(other).max_score
    assert sorted(b.reports[1].scores) == sorted(built.scores.values())
    overview = Tables(b.html).rows("Overview")
    assert set(overview) == {AID, other}
    assert f"id='{other}'" in b.html


def test_an_assignment_without_results_next_to_one_with_them(tmp_path):
    results = write_class(tmp_path / "results", synthetic_class(6, seed=4)[0])
    b = report.build([AID, "03_residual_layernorm"], results)
    assert [len(r.students) for r in b.reports] == [6, 0]
    assert "no results for 03_residual_layernorm" in b.notes
    assert "The results hold no student of 03_residual_layernorm." in b.html


def test_results_of_another_assignment_only_is_a_clear_error(tmp_path):
    results = write_class(tmp_path / "results", synthetic_class(5, seed=3)[0])
    with pytest.raises(ReportError, match=r"found no student results for 03_residual_layernorm .*holds results of "
                                          r"02_forward_pass only"):
        read_results(results, ["03_residual_layernorm"])


def test_an_assignment_outside_the_course_takes_its_exercises_from_the_results(tmp_path):
    cells = [cell("test_a", "a", 1.0, 1.0), cell("test_a_hidden", "a", 0.0, 2.0, "x\nLikely mistake (missing_b1): y"),
             cell("test_b", "b", 0.0, 3.0)]
    b = report.build(["homework_9"], write_class(tmp_path / "r", [student_record("s1", "homework_9", cells)]))
    rep = b.reports[0]
    assert not rep.in_course and rep.max_score == 6 and rep.scores == [1.0]
    assert [e.exercise for e in rep.exercises] == ["b", "a"]
    assert "is not an assignment of this course's source" in b.html


def test_a_random_class_matches_its_construction(tmp_path):
    records, c = synthetic_class(120, seed=7)
    b = report.build([AID], write_class(tmp_path / "results", records))
    rep = b.reports[0]
    assert sorted(rep.scores) == sorted(c.scores.values())
    for e in rep.exercises:
        failed = c.failed(e.exercise)
        assert e.failed == len(failed)
        assert {m.key: m.students for m in e.mistakes} == {k: len(v) for k, v in c.named[e.exercise].items() if v}
    assert {a.student for a in b.attention if a.rank == 0} == set(c.unscored)


# ---------------------------------------------------------------- the adapter's pieces


def test_course_layout_matches_jupytext_for_every_assignment():
    import jupytext

    from autograder import SOURCE_DIR

    for aid in assignments():
        nb = jupytext.read(SOURCE_DIR / aid / f"{aid}.py", fmt="py:percent")
        expected, answer = [], None
        for meta in (c.metadata.get("nbgrader", {}) for c in nb.cells):
            if meta.get("solution"):
                answer = meta["grade_id"]
            elif meta.get("grade"):  # every test cell of the course grades the answer cell above it
                expected.append((meta["grade_id"], answer, float(meta.get("points", 0))))
        # On main, 11's moe_forward header (nbgrader's JSON, then may_call=[...]) read as no metadata at all, and its
        # tests were given to router_topk above it.
        assert list(course_layout(aid).cells) == expected, aid
    assert course_layout("no_such_assignment") is None and course_layout("../etc") is None


def test_exercise_of_groups_visible_and_hidden_tests():
    assert exercise_of("test_ffn_forward") == exercise_of("test_ffn_forward_hidden") == "ffn_forward"
    assert exercise_of("test_gelu_tanh_visible") == "gelu_tanh"
    assert exercise_of("check_shapes", {"ffn_forward"}, "ffn_forward") == "ffn_forward"
    # An aspect's tests belong to their exercise wherever they stand; the longest exercise name wins.
    answers = {"relu", "relu_grad", "ffn_module_forward", "ffn_module_backward"}
    assert exercise_of("test_ffn_module_backward_layer2_hidden", answers) == "ffn_module_backward"
    assert exercise_of("test_relu_grad", answers, "relu") == "relu_grad"


def test_command_line_help_and_parser_registration():
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    report.add_parser(sub)
    args = parser.parse_args(["report", AID, "--results", "r", "--out", "o.html", "--anonymize", "--threshold", "40%"])
    assert args.command == "report" and args.anonymise and args.threshold == 0.4 and args.results == ["r"]
    done = _cli("--help")
    assert done.returncode == 0 and "--anonymise" in done.stdout and "--threshold" in done.stdout


# ---------------------------------------------------------------- the activation after W2 only

AFTER_W2 = "activation_after_W2_only"
AFTER_W2_ANSWERS = {  # σ((x W1 + b1) W2 + b2): the activation after W2 only, as a learner writes it
    ("02_forward_pass", "ffn_forward"): "import numpy as np\n\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
                                        "    return np.maximum((x @ W1 + b1) @ W2 + b2, 0)\n",
    # numpy and scipy only: a course function (ffn_helpers.get_activation) is refused, by the checks as by the grader
    ("09_ffn_module", "ffn_module_forward"): "import numpy as np\nfrom scipy import special\n\n\n"
                                             "def ffn_module_forward(x, W1, b1, W2, b2, activation='relu'):\n"
                                             "    sigma = {'relu': lambda z: np.maximum(z, 0.0), 'gelu': lambda z: "
                                             "z * special.ndtr(z),\n"
                                             "             'silu': lambda z: z * special.expit(z)}[activation]\n"
                                             "    return sigma((x @ W1 + b1) @ W2 + b2)\n",
}


@pytest.mark.parametrize("aid, exercise", list(AFTER_W2_ANSWERS), ids=[a for a, _ in AFTER_W2_ANSWERS])
def test_the_activation_after_w2_only_is_a_misconception_of_its_own_in_the_report(tmp_path, aid, exercise):
    """It was counted under "failed without a named misconception": the keys its failures carry come from the
    notebook's own test cells run on that answer; the report names it and explains it from the catalogue."""
    import nbtools

    from ffn_helpers import checks

    layout = course_layout(aid)
    raised = nbtools.run_in_process(aid, {exercise: AFTER_W2_ANSWERS[aid, exercise]})
    lost = tuple(g for g, e, _ in layout.cells if e == exercise)
    assert sorted(raised) == sorted(lost)  # both test cells of the exercise fail, and no other
    assert {checks.named_mistakes(raised[g]) for g in lost} == {(AFTER_W2,)}
    records = [student_record(f"afterW2-{i}", aid, graded_cells(layout, {exercise: ((AFTER_W2,), lost)}))
               for i in range(1, 4)]
    records += [student_record(f"ok-{i}", aid, graded_cells(layout, {})) for i in range(1, 3)]
    b = report.build([aid], write_class(tmp_path / "results", records), anonymise=False)
    row = _exercise(b, exercise)
    assert (row.failed, row.undiagnosed) == (3, 0)
    assert [(m.key, m.students, m.failed) for m in row.mistakes] == [(AFTER_W2, 3, 3)]
    explanation = _explanation(exercise, AFTER_W2)
    assert row.mistakes[0].explanation == explanation
    assert Tables(b.html).rows(f"{exercise}: misconceptions named")[AFTER_W2] == ["3 of 3", "100%", explanation]
    assert "failed without a named misconception" not in b.html


# ---------------------------------------------------------------- a class graded by `python -m autograder grade`


def _graded_class_construction():
    """student -> the Wrong answers in their notebook (tests/submissions/02_forward_pass.py), or a special case."""
    import importlib

    wrong = {w.name: w for w in importlib.import_module("submissions.02_forward_pass").WRONG}
    plan = {}
    for i in range(1, 7):
        plan[f"b1-{i}"] = [wrong["ffn-missing-b1"]]
    plan["b1-torch"] = [wrong["ffn-missing-b1"], wrong["lin-no-transpose"]]  # two mistakes in one notebook
    plan.update({f"torch-{i}": [wrong["lin-no-transpose"]] for i in range(1, 6)})
    plan.update({f"noact-{i}": [wrong["ffn-no-activation"]] for i in range(1, 4)})
    plan.update({f"outrelu-{i}": [wrong["ffn-relu-on-output"]] for i in range(1, 3)})
    plan.update({f"afterW2-{i}": [wrong["ffn-relu-after-W2-only"]] for i in range(1, 3)})
    plan.update({f"ffnT-{i}": [wrong["ffn-torch-layout"]] for i in range(1, 3)})  # a shape error: no diagnosis
    plan.update({f"colvec-{i}": [wrong["lin-column-vector"]] for i in range(1, 3)})  # fails the hidden test only
    plan.update({f"strict-{i}": [wrong["dead-strict-negative"]] for i in range(1, 3)})
    plan["deadb1-1"] = [wrong["dead-missing-b1"]]
    plan.update({f"ok-{i}": [] for i in range(1, 8)})
    return plan


@pytest.mark.grading
@pytest.mark.xdist_group("grade-report")
def test_report_on_a_class_graded_by_the_grade_command(tmp_path):
    import importlib

    import nbformat
    import nbtools

    variants = importlib.import_module("submissions.02_forward_pass").CORRECT
    plan = _graded_class_construction()
    course = nbtools.scratch_course(tmp_path / "course", AID)
    base = nbtools.completed_learner(AID)
    submitted = tmp_path / "submitted"
    notebooks = {}
    for k, (student, wrongs) in enumerate(plan.items()):
        correct = variants[sorted(variants)[k % len(variants)]]  # rotate the correct implementations
        answers = dict(correct)
        answers.update({w.cell: w.source for w in wrongs})
        notebooks[student] = nbformat.writes(nbtools.with_answers(base, answers))
    notebooks["unanswered-1"] = nbformat.writes(nbtools.learner(AID))
    notebooks["broken-1"] = '{"cells": [ this is not JSON'
    for student, text in notebooks.items():
        path = submitted / student / AID / f"{AID}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    (submitted / "absent-1").mkdir()  # a student folder without the assignment: missing notebook
    n = len(notebooks) + 1
    assert n >= 30

    results = tmp_path / "results"
    # One job: the report is under test here, not parallel grading, and a batch of two waited for every core
    # while another worker's long one-job batch held one (272 s of a core idle, tests/run_locks.py).
    with one_batch(jobs=1):
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", AID, str(submitted), "--out",
                               str(results), "--jobs", "1", "--course", str(course)], capture_output=True, text=True,
                              env=nbtools.nbgrader_env(), cwd=tmp_path, timeout=3 * 3600)
    assert done.returncode == 0, done.stderr[-3000:]
    out, table = tmp_path / "report.html", tmp_path / "report.csv"
    done = _cli(AID, "--results", results, "--out", out, "--csv", table)
    assert done.returncode == 0, done.stderr
    b = report.build([AID], results)
    rep = b.reports[0]
    assert len(rep.students) == n and rep.scored == n - 2 and not b.notes, b.notes

    # What the construction says, exercise by exercise: who fails it, and which misconceptions are named.
    points = {g: p for g, _, p in LAYOUT.cells}
    failed = {e: set() for e in LAYOUT.exercises}
    named = {e: {} for e in LAYOUT.exercises}
    scores = {}
    for student, wrongs in plan.items():
        lost = {g for w in wrongs for g in w.loses}
        scores[student] = 10 - sum(points[g] for g in lost)
        for w in wrongs:
            failed[w.cell].add(student)
            if w.diagnosis:
                named[w.cell].setdefault(w.diagnosis, set()).add(student)
    for e in LAYOUT.exercises:
        failed[e].add("unanswered-1")
    scores["unanswered-1"] = 0
    assert len(named["ffn_forward"]["missing_b1"]) == 7

    for e in rep.exercises:
        assert e.scored == n - 2 and e.failed == len(failed[e.exercise]), e.exercise
        assert {m.key: m.students for m in e.mistakes} == {k: len(v) for k, v in named[e.exercise].items()}
        assert all(m.failed == len(failed[e.exercise]) for m in e.mistakes)
    assert sorted(rep.scores) == sorted(scores.values())
    assert rep.exercises[0].exercise == "ffn_forward"  # 17 of 34 failed it: the hardest
    ffn = Tables(out.read_text(encoding="utf-8")).rows("ffn_forward: misconceptions named")
    assert ffn["missing_b1"][0] == f"7 of {len(failed['ffn_forward'])}" == "7 of 17"
    with table.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    b1 = next(r for r in rows if (r["exercise"], r["misconception"]) == ("ffn_forward", "missing_b1"))
    assert (b1["students_named"], b1["failed"]) == ("7", "17")

    attention = {a.student: a for a in b.attention}
    assert attention["absent-1"].status == "missing notebook" and attention["absent-1"].rank == 0
    assert attention["broken-1"].status == "unreadable notebook" and attention["broken-1"].rank == 0
    below = {s for s, score in scores.items() if score < 5}
    assert below == {"unanswered-1", "b1-torch"}
    assert set(attention) == below | {"absent-1", "broken-1"}


def test_a_lone_surrogate_in_a_result_is_replaced_and_the_page_still_writes(tmp_path):
    """A lone surrogate (valid JSON, no UTF-8 encoder takes it) in a student's result, e.g. from a grader that
    kept an exception's message as it came, costs that text its character, not the class its report."""
    results = hand_built_class(tmp_path / "results")
    data = json.loads((results / "ok-1.json").read_text())
    data["cells"][0]["message"] = "wrong \ud800 answer"
    data["student"] = "ok-1\udc00"
    data["status"], data["error"] = "grader error", "failed on \udfff"  # listed by name, with its reason
    (results / "ok-1.json").write_text(json.dumps(data, ensure_ascii=True))
    b = report.build([AID], results, anonymise=False)
    b.html.encode("utf-8")
    assert "ok-1\ufffd" in b.html
