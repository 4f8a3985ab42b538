"""The class report: per-exercise results, likely mistakes, students to follow up, answers to look at.

    class_report.py  the command (`python -m autograder report`): the numbers, the page and the CSV
    __main__.py      `python -m autograder.report`, the same command
    templates/       the page, a Jinja2 template (every value escaped)
    results.py       reads the graded results JSON (schema 1 only: autograder/schema.py) and the course's layout
    figures.py       the report's figures, as embedded PNGs with alt text
    similarity.py    answers that look copied: winnowed fingerprints of the code each answer runs
    normal_form.py   one normal form for code, so the disguises a copier adds change nothing the fingerprints see
    rebinding.py     a name bound again in a function's straight-line code becomes a new name (for the normal form)
    syntax.py        the walk over a syntax tree that the normal form and the rebinding share
"""
