"""The grading account's nbgrader configuration (~/.jupyter/): the formgrader's course.

setup.sh installs it and writes COURSE, the course root (autograder/course/) in the account's home.
"""

COURSE = "/home/grader-ffn-course/ffn-course/autograder/course"

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)
c.CourseDirectory.root = COURSE
