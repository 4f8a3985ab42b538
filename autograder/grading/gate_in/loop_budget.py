"""The loop budget: how long an exercise's later tests get once one of its tests has run past its time.

An answer that loops loops on every call. So once a test of an exercise has run past the cell's time limit, that
exercise's later tests get AFTER_TIMEOUT seconds each, and after a second overrun they are not run at all: a looping
answer costs one cell timeout and a few seconds, not one timeout per test. Both runs keep one budget each, by this
one rule and in these words: the notebook run (execute.py, keyed by the exercise of each test cell) and the clean
re-run (gate_beside/rerun.py, which also counts the tests that timed out in the notebook run).
"""

# Seconds each later test of an exercise that overran gets. A correct answer to any test takes milliseconds.
AFTER_TIMEOUT = 3.0


class LoopBudget:
    """The time each test of a run gets, exercise by exercise. `cell_timeout`: the cell's limit in seconds (None or
    0: none). `looped`, `spent`: exercise -> the test in which it overran first, and second."""

    def __init__(self, cell_timeout):
        self.cell_timeout = cell_timeout
        self.looped, self.spent = {}, {}

    def overran(self, exercise, test):
        """`test` of `exercise` ran past the time it had (or timed out in the notebook run)."""
        (self.spent if exercise in self.looped else self.looped).setdefault(exercise, test)

    @property
    def short(self):
        """Seconds a later test of an exercise that looped gets: AFTER_TIMEOUT, never more than the cell's limit."""
        return min(self.cell_timeout, AFTER_TIMEOUT) if self.cell_timeout and self.cell_timeout > 0 \
            else self.cell_timeout

    def seconds(self, exercise):
        """Seconds a test of `exercise` gets now (the cell's limit, `short` once it looped), or None: not run
        (`not_run_why` says why). An exercise of None is no test: the cell's limit."""
        if exercise in self.spent:
            return None
        return self.short if exercise in self.looped else self.cell_timeout

    def not_run_why(self, exercise):
        """Why a test of `exercise` is not run at all, or ''."""
        if exercise not in self.spent:
            return ""
        return f"not run: {exercise} already ran past its time in {self.looped[exercise]} and {self.spent[exercise]}"

    def shortened_why(self, exercise):
        """Why a test of `exercise` gets less than the cell's limit (a clause to follow its failure), or ''."""
        if exercise not in self.looped or exercise in self.spent:
            return ""
        return (f" ({exercise} had run past the {self.cell_timeout:g} s limit in {self.looped[exercise]}: its later "
                f"tests get {self.short:g} s)")
