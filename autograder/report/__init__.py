"""The class report: per-exercise results, likely mistakes, students to follow up, answers to look at.

    class_report.py  the command (`python -m autograder report`): the numbers, the page and the CSV
    templates/       the page, a Jinja2 template (every value escaped)
    results.py       reads the graded results JSON (autograder/schema.py) and the course's layout
    figures.py       the report's figures; similarity.py: answers that are near copies
"""
