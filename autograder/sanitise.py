"""The one gate for what learner-made content becomes on its way to a person.

Everything a submission produced (outputs, markdown, messages, names) is hostile
until it passes through here: pages, notebooks for formgrader, JSON and CSV.
"""

import csv
import io

# OWASP's rule for CSV injection: a spreadsheet reads a cell that starts with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value safe for a spreadsheet: text that would start a formula gets a leading apostrophe.

    Numbers stay numbers (a negative score is not a formula); only strings are changed.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows, columns):
    """rows (dicts) -> CSV text with a header line, every cell through csv_cell."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    return buf.getvalue()
