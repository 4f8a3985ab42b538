"""One mistake a learner makes, as the wrong result it produces."""

from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Mistake:
    """`key` names the mistake in grading reports; `explanation` is one line a teacher can read out.

    `compute` is the wrong function, called with the arguments the check gives the
    exercise. `part` says which result of an exercise it explains when the checks
    compare several on their own (kv_ffn's "W1", "b1", "W2"); None: the whole result.
    """

    key: str
    explanation: str
    compute: Callable
    part: str | None = None

    def computing(self, compute):
        """The same mistake, key and explanation, in an exercise that takes other arguments."""
        return replace(self, compute=compute)


def in_part(part, mistakes):
    """`mistakes` as the mistakes of one part of an exercise's result."""
    return tuple(replace(m, part=part) for m in mistakes)
