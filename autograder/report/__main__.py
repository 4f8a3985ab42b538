"""`python -m autograder.report` is `python -m autograder report`."""

import sys

from .class_report import main

sys.exit(main())
