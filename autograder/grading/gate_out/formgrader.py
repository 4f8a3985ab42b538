"""Formgrader's ⚡ Autograde, turned off: a Jupyter server extension for every server that runs formgrader.

nbgrader's button runs plain `nbgrader autograde`: student code with the instructor's rights, no sandbox,
no clean re-run. With this extension enabled (jpserver_extensions "autograder.grading.gate_out.formgrader", in
jupyter/instructor/ and deploy/jupyterhub/grader/), the button answers with a message that names the
sandboxed command instead. Formgrader's other buttons (feedback, release) run no student code.
"""

import json
import shlex
from pathlib import Path

from ... import COURSE_ROOT, REPO_ROOT, upstream

REFUSAL = ("Autograding from formgrader is turned off for this course: it runs student code with your rights "
           "and no sandbox. Grade with the sandboxed grader, from the repository root:\n\n"
           "    {command}\n\n"
           "(--force grades again a student graded before.) Its statuses and flags then show here (a test cell that "
           "needs your look is marked for manual grading, and the answer cell carries the grader's comment).")


def grade_command(assignment, student, course_root=None):
    """The `grade` command for one student, as it runs pasted at the repository root: the course's submissions
    by their path from there (the course's own folder) or in full with --course (any other course root), and
    --force, without which a student graded before with the same files is skipped."""
    root, repo = Path(course_root or COURSE_ROOT).resolve(), REPO_ROOT.resolve()
    if root == COURSE_ROOT.resolve() and root.is_relative_to(repo):
        where = [str((root / "submitted").relative_to(repo))]
    else:
        where = [str(root / "submitted"), "--course", str(root)]
    args = ["python", "-m", "autograder", "grade", assignment, *where, "--student", student, "--force"]
    return shlex.join(args)


def refusal(assignment, student, course_root=None):
    """What formgrader's autograde request gets back: nbgrader's reply format, success false."""
    return {"success": False, "log": REFUSAL.format(command=grade_command(assignment, student, course_root)),
            "error": ""}


def turn_off_autograde():
    """Make nbgrader's autograde request handler refuse (it is shared by every formgrader page that has the button)."""
    from tornado import web

    @web.authenticated
    def post(self, assignment_id, student_id):
        self.write(json.dumps(refusal(assignment_id, student_id, self.coursedir.root)))

    upstream.refuse_formgrader_autograde(post)


def _jupyter_server_extension_points():
    return [{"module": "autograder.grading.gate_out.formgrader"}]


def _load_jupyter_server_extension(serverapp):
    turn_off_autograde()
    serverapp.log.info("formgrader's autograde button is off: grade with python -m autograder grade")


load_jupyter_server_extension = _load_jupyter_server_extension  # the name older Jupyter servers look for
