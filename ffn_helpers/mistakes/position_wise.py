"""Notebook 05's mistakes: the FFN applied token by token, and detectors of mixing between tokens.

A detector returns a verdict, True meaning "mixes"; each mistake is a detector
built the wrong way, and notebook 05 shows them failing.
"""

import numpy as np

from .forward_pass import FFN_FORWARD
from .mistake import Mistake


def _other_rows_move(f, X, tokens, delta_seed=0):
    """Do rows outside `tokens` of f(X) change when those tokens move together by a random step?"""
    X = np.asarray(X, float)
    moved = X.copy()
    moved[list(tokens)] += np.random.default_rng(delta_seed).normal(size=(len(tokens),) + X.shape[1:])
    before, after = np.asarray(f(X), float), np.asarray(f(moved), float)
    others = np.ones(len(X), dtype=bool)
    others[list(tokens)] = False
    return not np.allclose(before[others], after[others], rtol=1e-9, atol=1e-12)


def _permutation_detector(f, X):
    X = np.asarray(X, float)
    order = np.arange(len(X))[::-1]
    return not np.allclose(np.asarray(f(X[order]), float), np.asarray(f(X), float)[order], rtol=1e-9, atol=1e-12)


def _any_row_moves(f, X):
    X = np.asarray(X, float)
    moved = X + np.random.default_rng(0).normal(size=X.shape)
    return not np.allclose(np.asarray(f(moved), float), np.asarray(f(X), float), rtol=1e-9, atol=1e-12)


MIXES_POSITIONS = (
    Mistake("perturbs_first_token_only",
            "you only changed token 0: in a suffix sum (row i adds up tokens i..n-1), token 0 reaches no other "
            "row, yet every other token reaches row 0. Change every token in turn.",
            lambda f, X: len(X) > 1 and _other_rows_move(f, X, [0])),
    Mistake("perturbs_last_token_only",
            "you only changed the last token: in a prefix sum (row i adds up tokens 0..i), the last token reaches "
            "no other row, yet it depends on all of them. Change every token in turn.",
            lambda f, X: len(X) > 1 and _other_rows_move(f, X, [len(X) - 1])),
    Mistake("perturbs_ends_only",
            "you only changed the first and the last token: a function can mix tokens in the middle only. "
            "Change every token in turn.",
            lambda f, X: len(X) > 1 and (_other_rows_move(f, X, [0]) or _other_rows_move(f, X, [len(X) - 1]))),
    Mistake("permutation_test",
            "you tested whether permuting the tokens permutes the outputs. That is a different property: a mean "
            "over tokens (or attention without positions) is permutation-equivariant and still mixes, and adding "
            "a per-position vector is not equivariant yet mixes nothing. Change each token and watch the others.",
            _permutation_detector),
    Mistake("perturbs_all_at_once",
            "you changed every token at once, so you cannot tell a row's own token from the others: the "
            "position-wise FFN then looks like a mixer. Change one token at a time and watch the other rows.",
            _any_row_moves),
)

CATALOGUE = {"ffn_per_token": FFN_FORWARD, "mixes_positions": MIXES_POSITIONS}
