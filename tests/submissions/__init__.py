"""Alternative answers to the exercises, graded through nbgrader by the test suite.

Each `<assignment>.py` module here defines

    CORRECT: dict[str, dict[str, str]]
        variant name -> {answer cell grade_id (the function's name): full cell source}
        Every variant must earn full marks. Give each exercise at least two
        genuinely different correct implementations (loop, vectorised, einsum, ...).

    WRONG: list[Wrong]
        plausible mistakes, one exercise each; every one must lose points on
        the listed test cells, and, where `diagnosis` is given, the feedback
        must name that catalogue key (see ffn_helpers/mistakes.py).

A submission is the learner notebook with the named answer cells replaced.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    name: str  # a short id, used as the student id: letters, digits and '-'
    cell: str  # grade_id of the answer cell to replace
    source: str  # the wrong cell's full source
    loses: tuple  # grade_ids of the test cells that must score below their maximum
    diagnosis: str | None = None  # catalogue key the failure message must name
