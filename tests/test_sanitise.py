"""The sanitiser: what learner-made text becomes before a person opens it."""

import csv
import io

import pytest

from autograder import sanitise


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_csv_cell_neutralises_what_a_spreadsheet_reads_as_a_formula(text):
    assert sanitise.csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["alice", "a=b", "", 3, -2.5, None])
def test_csv_cell_keeps_plain_text_and_numbers(value):
    assert sanitise.csv_cell(value) == value


def test_csv_text_reads_back_with_every_formula_neutralised():
    text = sanitise.csv_text([{"student": "=cmd|' /C calc'!A0", "score": -1.5}], ["student", "score"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows == [{"student": "'=cmd|' /C calc'!A0", "score": "-1.5"}]
