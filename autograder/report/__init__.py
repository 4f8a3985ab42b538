"""The class report: per-exercise results, likely mistakes, students to follow up, answers to look at.

    class_report.py  the command (`python -m autograder report`): the numbers, the HTML page and the CSV
    results.py       reads the graded results JSON and the course's layout
    figures.py       the report's figures; similarity.py: answers that are near copies
"""
