"""The course's late-penalty plugin for nbgrader: a share of the score per day late, capped.

nbgrader asks its `AssignLatePenalties.plugin_class` for each late notebook's penalty (its own
LateSubmissionPlugin gives none, or all). The course's nbgrader_config.py names this one:

    c.AssignLatePenalties.plugin_class = "autograder.grading.scoring.late.SharePerDayLate"
    c.SharePerDayLate.per_day = 0.1   # a tenth of the score for each day late, a started day counting whole
    c.SharePerDayLate.cap = 0.5       # never more than half of it

`gradebook.late_penalties` applies it when results are published (grades.csv, the exports), from the
gradebook's submission time and the assignment's due date, so a new due date needs no grading.
"""

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float, TraitError, validate

DAY = 24 * 60 * 60  # seconds


class SharePerDayLate(LateSubmissionPlugin):
    """`per_day` of the notebook's score for each day (or part of a day) late, at most `cap` of it."""

    per_day = Float(0.1, help="The share of the score taken for each day late; a started day counts whole "
                              "(0.1: a tenth).").tag(config=True)
    cap = Float(0.5, help="The largest share of the score taken however late (0.5: half; 1: all of it).").tag(
        config=True)

    @validate("per_day", "cap")
    def _a_share(self, proposal):
        value, name = proposal["value"], proposal["trait"].name
        if not 0.0 <= value <= 1.0:
            raise TraitError(f"SharePerDayLate.{name} is a share of the score: expected a number from 0 to 1 "
                             f"(0.1 for a tenth), got {value!r}")
        return value

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        """The points taken from `score` for a notebook `total_seconds_late` seconds late (0 when on time)."""
        if total_seconds_late <= 0:
            return 0.0
        return score * self.share(total_seconds_late)

    def share(self, total_seconds_late):
        """The share of the score taken for `total_seconds_late` seconds late."""
        days = math.ceil(total_seconds_late / DAY)
        return min(self.cap, round(days * self.per_day, 12))  # 3 days of 0.1: 0.3, not 0.30000000000000004
