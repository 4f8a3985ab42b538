"""Gate Out: what reaches a person.

Each applies the one policy for learner-made content on its way to a page, a terminal, a CSV or formgrader
(autograder/sanitise.py, which the class report shares).

    feedback.py           the student's page: their code, outputs and failures, never a hidden test's source
    templates/            the feedback page's templates: feedback.html (Jinja2) and nbconvert's course_feedback
    release_feedback.py   nbgrader's release_feedback for a course whose feedback pages are their owner's only
    formgrader.py         formgrader's Autograde button (plain nbgrader autograde, unsandboxed), turned off
    exports.py            `export`: the class's grades for Canvas, Moodle, Blackboard, or per exercise
"""
