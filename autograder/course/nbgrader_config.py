"""nbgrader configuration of the FFN course (this folder is the course root).

Run nbgrader from this folder, e.g. `cd autograder/course && nbgrader generate_assignment 02_forward_pass`;
grade with `python -m autograder grade` (see autograder/README.md). The course's own code it names
(`autograder.grading.gate_out.feedback`) comes from the installed package (`make setup`), not from a path edit.
"""

import os
import sys

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

here = os.path.dirname(os.path.abspath(__file__))

# nbgrader creates a new gradebook.db by running the `alembic` executable: find the one installed next
# to this Python even from a shell whose PATH lacks the environment's bin/ (else: a half-made database).
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")
c.CourseDirectory.root = here
c.CourseDirectory.course_id = "ffn-course"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")

# source/<id>/<id>.py is the authored form of the notebook, solutions and hidden tests included:
# generate_assignment copies every other file of source/<id>/ into release/, so it must skip this one.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "[0-9][0-9]_*.py"]

# A learner's stub: the exercise cell keeps its `def` line and raises.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Grading: a deleted test cell is put back (otherwise the submission waits for
# manual grading); a cell gets 60 s, far above what a correct answer needs
# (the slowest, the capstone's training, takes a few seconds).
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True
# Keep feedback readable and the gradebook small when a submission floods output.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 60

# `nbgrader generate_feedback` would show each test cell whole, hidden tests included, and tracebacks
# quoting them: HideHiddenTests strips both, and gives the course's formulas as MathML. nbgrader's own
# template loads MathJax and jQuery from a CDN: the course's (for GenerateFeedback alone) runs no script,
# fetches nothing and meets WCAG 2.1 AA like the pages `grade` writes.
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import GetGrades  # noqa: E402

from autograder.grading.gate_out.feedback import NBCONVERT_TEMPLATE, NBCONVERT_TEMPLATES, HideHiddenTests  # noqa: E402

c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, HideHiddenTests]
c.GenerateFeedback.HTMLExporter.template_name = NBCONVERT_TEMPLATE
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [str(NBCONVERT_TEMPLATES)]
# nbformat's schema is checked once, after HideHiddenTests has made every cell id one it allows.
c.GenerateFeedback.HTMLExporter.optimistic_validation = True
# Code colours at 4.5 : 1 or more wherever nbconvert renders the course (autograder.pages.NOTEBOOK_CODE_STYLE).
c.CSSHTMLHeaderPreprocessor.style = "xcode"

# `nbgrader zip_collect` and `python -m autograder grade` given a .zip read an LMS download the same way, with the
# course's extractor and collector (Canvas, Moodle and Blackboard names; autograder/grading/intake.py): each
# download by its own LMS's names, the student and the time from the LMS's fixed part of a name, never from the
# name the learner uploaded under; a student's newest file kept, what cannot be read set aside and named. A
# `FileNameCollectorPlugin.named_regexp` is not used: zip_collect would read its time's final "-ss" as a UTC offset.
c.ZipCollectApp.extractor_plugin = "autograder.grading.submissions.LmsExtractor"
c.ZipCollectApp.collector_plugin = "autograder.grading.submissions.LmsCollector"
# The course's time zone, an IANA name: Blackboard's names give each attempt's time on its server's clock without
# a zone (timestamp.txt holds it in UTC), and due dates are shown in this zone beside UTC. Blackboard's names are
# not read until it is set; set it to your LMS's zone (autograder/README.md, "2. Collect the submissions"):
# c.LmsCollector.timezone = "Europe/Berlin"
# Which LMS's names to read; a download is read by the one of these that reads most of its files.
c.LmsCollector.formats = ["canvas", "moodle", "blackboard"]

# Student data is its owner's only: the pages generate_feedback writes are 0600, their folders 0700 (the hook), as
# everything `grade`, zip_collect, `export` and `report` write is.
from autograder.grading.gate_out.feedback import private_feedback  # noqa: E402

c.GenerateFeedback.permissions = 600
c.GenerateFeedback.post_convert_hook = private_feedback(here)
# ...while the copy release_feedback puts in the exchange is the student's to read, as nbgrader's own pages are.
c.ExchangeFactory.release_feedback = "autograder.grading.gate_out.release_feedback.ReleaseFeedback"

# Late work (autograder/README.md, "Late work"): the due date is the gradebook's (`nbgrader db assignment add
# 02_forward_pass --duedate="2026-12-01 17:00:00 Europe/Berlin"`); nbgrader's own plugin gives no penalty, the
# course's takes a share of the score for each day late, a started day counting whole, up to a cap. grades.csv and
# the exports apply it when they are written, so changing a due date or these numbers grades nobody again.
c.AssignLatePenalties.plugin_class = "autograder.grading.scoring.late.SharePerDayLate"
c.SharePerDayLate.per_day = 0.1
c.SharePerDayLate.cap = 0.5
