"""Gate Out: what reaches a person.

The student's feedback page, formgrader's Autograde button turned off, the LMS exports; each applies
the one policy for learner-made content on its way to a page, a terminal, a CSV or formgrader
(autograder/sanitise.py, which the class report shares).
"""
