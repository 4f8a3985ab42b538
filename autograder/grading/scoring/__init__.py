"""From the two runs to points: each cell's result, the findings, the gradebook, the ledger, the class's grades.

    results.py     one student's result: each test cell's points from both runs, the flags, one status
    integrity.py   what a submission must not do, found by reading its code (monkeypatching, the reference)
    gradebook.py   the results into nbgrader's gradebook: scores, cells to review, the grader's comments
    ledger.py      what is graded already, against which course version: skipped next time
    classbook.py   the class's grades from the gradebook, late penalties applied as a sheet is published
    late.py        the course's late-penalty plugin for nbgrader: a share of the score per day late, capped
"""
