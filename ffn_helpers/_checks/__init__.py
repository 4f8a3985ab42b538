"""The parts of `ffn_helpers.checks` a notebook does not call by name: the comparison every check makes, and the
grading protocol, what the grader sets in the checks and reads out of them. `checks` re-exports what notebooks and
the grader use (`checks.compare`, `checks.hidden_rng`, `checks.diagnose_cases`, `checks.substitute`, ...), so that
a test cell reads `checks.` only.

    compare.py     `compare`: how far a result is from the expected one, in one readable message
    diagnosis.py   which catalogued mistakes a learner's results confirm, on one input or on every case of a test
    verdicts.py    what a failure carries for the grader: the mistakes' keys, the text a student may read, the brief
    rule.py        `substitute` and `may_call`: which course functions a learner's code runs while a check calls it
    hidden.py      an offering's own seed (the judge sets it) and each hidden test's own stream of inputs

These modules import nothing of ffn_helpers outside this package and `checks` imports them, never the reverse: the
clean re-run's learner process gets them copied as they are, with `checks` (autograder's gate_beside/public.py).
"""
