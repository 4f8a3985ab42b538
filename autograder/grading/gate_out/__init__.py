"""Gate Out: what reaches a person.

One policy for everything learner-made on its way to a page, a terminal, a CSV or formgrader
(`sanitise`); the student's feedback page, formgrader's Autograde button turned off, the LMS exports.
"""
