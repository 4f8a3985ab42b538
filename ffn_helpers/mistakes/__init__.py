"""The mistakes learners make in each exercise, each as the wrong result it produces.

    checks.check(ffn_forward, args, expected, mistakes=mistakes.for_exercise("ffn_forward"))

`CATALOGUE` maps every graded exercise (its answer cell's function name) to the
`Mistake`s its checks recognise, an empty tuple where none is catalogued;
`checks.diagnose` compares a learner's result with each mistake's to name the
likely one. Within an exercise a key names one mistake; a key that recurs in
other exercises (`missing_b1`) has the same explanation everywhere, computed on
each exercise's own arguments. One module per notebook defines its exercises'
mistakes; to add one, see autograder/AUTHORING.md.
"""

from . import (
    activations,
    collapse_to_linear,
    ffn_module,
    forward_pass,
    key_value_memory,
    limiting_behaviour,
    low_precision,
    mixture_of_experts,
    parameter_budget,
    position_wise,
    relu_sign_cases,
    residual_layernorm,
    training,
)
from .mistake import Mistake

_NOTEBOOKS = (relu_sign_cases, forward_pass, residual_layernorm, activations, position_wise, parameter_budget,
              collapse_to_linear, limiting_behaviour, ffn_module, key_value_memory, mixture_of_experts, low_precision,
              training)

CATALOGUE = {exercise: mistakes for notebook in _NOTEBOOKS for exercise, mistakes in notebook.CATALOGUE.items()}


def for_exercise(exercise, part=None):
    """The mistakes `exercise`'s checks recognise; `part` names the result a check compares, if it has several."""
    if exercise not in CATALOGUE:
        raise ValueError(f"no exercise {exercise!r} in the mistakes catalogue; it has {', '.join(CATALOGUE)}")
    mistakes = CATALOGUE[exercise]
    parts = {m.part for m in mistakes} or {None}
    if part not in parts:
        named = ", ".join(repr(p) for p in sorted(parts - {None}))
        raise ValueError(f"{exercise}'s mistakes come in parts ({named}): name one, got {part!r}" if named else
                         f"{exercise}'s mistakes have no parts: call for_exercise({exercise!r}), got part={part!r}")
    return tuple(m for m in mistakes if m.part == part)


def by_key(key):
    """The mistakes named `key`, one per exercise's computation of it; they share one explanation."""
    found = {}
    for mistakes in CATALOGUE.values():
        for m in mistakes:
            if m.key == key:
                found.setdefault(m.compute, m)
    return tuple(found.values())


__all__ = ["CATALOGUE", "Mistake", "by_key", "for_exercise"]
