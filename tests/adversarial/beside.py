"""Attacks on the clean re-run's judge, which computes the course's functions for the learner's code (issue 41).

While the judge refused a course function only when it answered the exercise under
test (by its name, or by the reference code it ran), another course function that
computes the same answer earned the points. And a course function the judge ran for
the learner had no deadline: one slow call held the student's grading for minutes.

Each `Beside` is one answer of an assignment's notebook, every other answer being the
worked solution's (tests/test_allow_list.py runs them through the clean re-run).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Beside:
    name: str
    assignment: str
    exercise: str  # the answer replaced: each of its tests must earn nothing
    source: str  # the answer cell
    called: str  # the course function it calls (the dotted name the judge refuses)


ANOTHER_FUNCTION = (
    # 10's recall as the mean of the course's per-query hits (memory.recalled): on main, 4/4 and no flag.
    Beside("recall-by-recalled", "10_key_value_memory", "recall",
           "from ffn_helpers import memory as _memory\n\n"
           "def recall(W1, b1, W2, b2, keys, values):\n"
           "    return float(np.mean(_memory.recalled(W1, b1, W2, b2, keys, values)))\n",
           "ffn_helpers.memory.recalled"),
    # 08's sigmoid as the mixture of experts' softmax of [z, 0]: on main, 3/3 on every extreme, no flag.
    Beside("sigmoid-by-softmax", "08_limiting_behaviour", "sigmoid",
           "import ffn_helpers.moe as _moe\n\n"
           "def sigmoid(z):\n"
           "    z = np.asarray(z, dtype=float)\n"
           "    return _moe.softmax(np.stack([z, np.zeros_like(z)], axis=-1))[..., 0]\n",
           "ffn_helpers.moe.softmax"),
)

# One call to a slow course function, in a cell the answer needs, made only in the clean re-run (where the public
# build's link to the judge exists): on main the judge ran it for minutes, beyond every cell's time limit.
SLOW_CALL = ("import importlib.util\n"
             "from ffn_helpers import memory as _memory\n"
             "if importlib.util.find_spec('ffn_helpers._judge') is not None:\n"
             "    _memory.mean_recall(128, 512, 0.5, seeds=list(range(50_000)))\n")
