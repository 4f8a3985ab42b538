"""nbgrader's environment-wide configuration: every user's nbgrader reads it, students' included.

setup.sh installs it as <environment>/etc/jupyter/nbgrader_config.py and writes EXCHANGE.
"""

EXCHANGE = "/srv/nbgrader/exchange"

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)
c.CourseDirectory.course_id = "ffn-course"  # one course: autograder/course/nbgrader_config.py's course_id
c.Exchange.root = EXCHANGE
