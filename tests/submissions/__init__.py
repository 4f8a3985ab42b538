"""Alternative answers to the exercises, graded through nbgrader by the test suite.

Each `<assignment>.py` module here defines

    CORRECT: dict[str, dict[str, str]]
        variant name -> {answer cell grade_id (the function's name): full cell source}
        Every variant must earn full marks on every test cell. Give each exercise at
        least two genuinely different correct implementations (loop, vectorised,
        einsum, ...): sources that differ only in comments or layout count as one.

    WRONG: list[Wrong]
        plausible mistakes, one exercise each; every one must lose points on
        the listed test cells, and, where `diagnosis` is given, the feedback
        must name that key of the exercise's catalogue entry
        (ffn_helpers.mistakes.CATALOGUE[cell]). At least two different ones
        per exercise.

A submission is the learner notebook with every answer cell filled in from the
worked solution (solutions/<id>.ipynb), then the variant's cells put in: a
variant names only the cells it changes, so a CORRECT variant may cover one
exercise or all of them. (For a variant that names every answer cell, this is the
learner notebook with the named answer cells replaced.)

Variant names are student ids in nbgrader: letters, digits and '-', unique in the
module, and not `learner-notebook` or `reference-solution` (the test suite's two
reference students). tests/test_grading_variants.py grades them; a WRONG variant
whose function nothing else in the notebook uses may share a student with wrong
variants of other exercises (see that module).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    name: str  # a short id, used as the student id: letters, digits and '-'
    cell: str  # grade_id of the answer cell to replace
    source: str  # the wrong cell's full source
    loses: tuple  # grade_ids of the test cells that must score below their maximum (a tuple, even for one)
    diagnosis: str | None = None  # catalogue key the failure message must name
