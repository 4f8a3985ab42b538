"""No learner-supplied string reaches the feedback page or the class report as markup or as template code.

Every text a learner controls (student ids, exercise and test ids, messages, flags, mistake keys and
explanations, code, outputs, markdown) is given markup that would run script in an element or in a
single- or double-quoted attribute, and Jinja syntax: the page, parsed, has no such element or
attribute; the text is shown as it was (so it was escaped, not dropped); the Jinja syntax is shown,
not evaluated.
"""

import json
import re
from dataclasses import replace
from html.parser import HTMLParser

import nbformat
import pytest
from report_fixtures import cell, flag, student_record

from autograder.grading.gate_out import feedback
from autograder.report import class_report as report
from autograder.report import similarity
from autograder.report.results import course_layout
from autograder.schema import Diagnosis

PAYLOADS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "'><svg onload=alert(1)>",
            "{{ 7*7 }}", "{% raw %}{{ x }}{% endraw %}", "{# c #}")
AID = "02_forward_pass"
# The hostile exercise names are long axis labels: matplotlib warns that it cannot lay the figure out.
LONG_LABELS = pytest.mark.filterwarnings("ignore:constrained_layout not applied:UserWarning")


def hostile(field):
    """A learner's text for `field`: its name, then every payload."""
    return f"{field} " + " ".join(PAYLOADS)


class _Page(HTMLParser):
    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(page)
        self.close()
        self.text = re.sub(r"\s+", " ", "".join(self.text))

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def assert_escaped(page, shown):
    """No payload became markup; each text in `shown` is on the page as text."""
    parsed = _Page(page)
    assert not [t for t, _ in parsed.tags if t in ("script", "svg", "iframe", "object", "embed")]
    assert not [(t, a) for t, attrs in parsed.tags for a in attrs if a.startswith("on")]
    assert not [a for t, a in parsed.tags if t == "img" and not a.get("src", "").startswith("data:image/png;base64,")]
    lowered = page.lower()
    assert "<script" not in lowered and "<img src=x" not in lowered and "<svg" not in lowered
    missing = [text for text in shown if text not in parsed.text]
    assert not missing, missing  # escaped and shown, the Jinja syntax as written (not evaluated, not dropped)
    assert "{{ 7*7 }}" in parsed.text and "{% raw %}{{ x }}{% endraw %}" in parsed.text


@LONG_LABELS
def test_the_report_escapes_every_text_it_shows():
    e = report.ExerciseRow(hostile("exercise"), 2.0, scored=2, partial=1, zero=1, credit=0.5, undiagnosed=1,
                           mistakes=[report.MistakeRow(hostile("key"), 1, 2, hostile("explanation"), False)])
    rep = report.AssignmentReport(hostile("assignment"), ["s1", "s2"], 2.0, [1.0, 0.0], [e], in_course=False)
    attention = [report.Attention(hostile("student"), hostile("assignment"), hostile("status"), hostile("reason"),
                                  1.0, 2.0, 1)]
    match = similarity.Match(hostile("grade_id"), hostile("student"), hostile("classmate"), 0.9, hostile("code"),
                             hostile("other code"))
    looks = [report.LookAt(hostile("assignment"), [match], [hostile("look note")], 2, hostile("folder")),
             report.LookAt(hostile("assignment 2"), [], [hostile("not compared")], 0, "")]
    page = report.render_html([rep], attention, [hostile("note")], threshold=0.5, source=hostile("source"),
                              anonymised=False, looks=looks)
    assert_escaped(page, [hostile(f) for f in ("exercise", "key", "explanation", "assignment", "student", "status",
                                               "reason", "grade_id", "classmate", "code", "other code", "look note",
                                               "folder", "not compared", "note", "source")])


@LONG_LABELS
def test_the_report_escapes_what_the_results_files_hold(tmp_path):
    layout = course_layout(AID)
    cells = [cell(g, e, p, p) for g, e, p in layout.cells]
    message = f"{hostile('message')}\nLikely mistake (made_up_key): {hostile('explanation')}"
    # A results file is text anyone can edit: a diagnosis there may hold anything.
    named = (Diagnosis("made_up_key", hostile("explanation")),)
    cells.append(replace(cell(hostile("grade_id"), hostile("exercise"), 0.0, 1.0, message), diagnosis=named))
    record = student_record(hostile("student"), AID, cells, status="flagged",
                            flags=[flag(hostile("kind"), hostile("flagged exercise"), hostile("detail"))])
    results = tmp_path / "results"
    results.mkdir()
    (results / "one.json").write_text(json.dumps(record), encoding="utf-8")  # the id is no file name
    built = report.build([AID], results, notebooks=tmp_path / "none")
    assert built.reports[0].scored == 1, built.notes
    assert_escaped(built.html, [hostile(f) for f in ("student", "exercise", "explanation", "kind",
                                                     "flagged exercise", "detail")])


def _code(source, outputs=(), **nbgrader):
    code = nbformat.v4.new_code_cell(source)
    code.outputs = [nbformat.from_dict(o) for o in outputs]
    code.metadata["nbgrader"] = {"locked": False, "schema_version": 3, **nbgrader}
    return code


def test_the_feedback_page_escapes_every_text_it_shows():
    outputs = [{"output_type": "stream", "name": "stdout", "text": hostile("stdout")},
               {"output_type": "stream", "name": "stderr", "text": hostile("stderr")},
               {"output_type": "error", "ename": hostile("ename"), "evalue": hostile("evalue"), "traceback": []},
               {"output_type": "error", "ename": "E", "evalue": "v", "traceback": [hostile("traceback")]},
               {"output_type": "display_data", "metadata": {}, "data": {"text/plain": hostile("display")}}]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(hostile("markdown")),
        _code(hostile("code"), outputs, grade=False, solution=True, grade_id=hostile("answer id")),
        _code("check()", grade=True, solution=False, grade_id=hostile("test id"), points=1),
        nbformat.v4.new_raw_cell(hostile("raw"))])
    result = {"notebook": hostile("notebook"), "status": hostile("status"), "score": 0.0, "max_score": 1.0,
              "flags": [{"kind": hostile("kind"), "exercise": hostile("answer id"), "detail": hostile("detail")}],
              "cells": [{"grade_id": hostile("test id"), "points": 0.0, "max_points": 1.0, "status": "failed",
                         "message": hostile("message"),
                         "diagnosis": [{"key": hostile("key"), "explanation": hostile("explanation")}]}]}
    page = feedback.render(nb, result, hostile("student"))
    shown = [hostile(f) for f in ("markdown", "code", "answer id", "stdout", "stderr", "ename", "evalue", "traceback",
                                  "display", "test id", "raw", "notebook", "kind", "detail", "message",
                                  "explanation", "student")]
    assert_escaped(page, shown + [hostile("key")[:100], hostile("status")[:100]])  # the summary cuts these at 100
