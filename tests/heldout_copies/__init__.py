"""Held-out disguised copies of answers, to measure "Answers to look at" on code the course did not generate.

Written by hand, before reading the detector (autograder/report/normal_form.py, similarity.py) or the
generated disguises (tests/disguises.py), from the solutions and the learner notebooks' answer cells only.

One module per notebook; each holds PAIRS, a list of `Pair`: two students' answers to one answer cell.
`first` is the answer a copy was made from (SOLUTION: the course's solution cell, read from the
solutions notebook, so it has one source) or a classmate's own right answer; `second` is the copy,
disguised one way (`kind`), or, for kind "independent", a right answer written without seeing `first`,
which must not be reported. A "free_cell" copy puts the copied code in `free`, a free code cell of the
second student's notebook, and its answer cell only calls it.
"""

from dataclasses import dataclass

SOLUTION = "<the course's solution cell>"

COPY_KINDS = ("renamed", "reformatted", "commented", "parentheses", "dead_code", "temporaries",
              "free_cell", "reordered")
KINDS = COPY_KINDS + ("independent",)


@dataclass(frozen=True)
class Pair:
    """Two students' answers to the answer cell `cell`; `second` copies `first` unless kind is "independent"."""

    kind: str
    cell: str
    first: str
    second: str
    free: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind should be one of {', '.join(KINDS)}, got {self.kind!r}")
        if bool(self.free) != (self.kind == "free_cell"):
            raise ValueError(f"{self.cell}: only a free_cell pair has a free cell")
