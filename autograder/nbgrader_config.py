"""nbgrader configuration of the FFN course (this folder is the course root).

Run nbgrader from this folder, e.g. `cd autograder && nbgrader generate_assignment 02_forward_pass`.
"""

import os

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

here = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = here
c.CourseDirectory.course_id = "ffn-course"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")

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
