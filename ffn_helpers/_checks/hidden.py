"""The inputs of the hidden tests: an offering's own seed, and each hidden test's own stream.

A hidden test cell draws its inputs with `checks.hidden_rng(assignment, grade_id)` (or `hidden_seed`): the published
inputs while no seed is set, an offering's own once the grader's judge has set one (`set_offering_seed`).
"""

import hashlib
import json
import re

import numpy as np

# A private offering's own seed (autograder/AUTHORING.md, "A private offering"). It is never written here: this
# module is public, and copied into every sandbox. The grader's judge sets it, from the instructor's configuration
# outside the repository (autograder/offering.py), before it runs the hidden tests. None: the published inputs.
_offering_seed = None


def set_offering_seed(seed):
    """Draw every hidden test's inputs from an offering's own `seed` from now on (None: the published inputs)."""
    global _offering_seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"an offering's seed is a whole number >= 0 or None, got {seed!r}")
    _offering_seed = seed


def private_offering():
    """True while the hidden tests draw an offering's own inputs (`set_offering_seed`), not the published ones."""
    return _offering_seed is not None


# A hidden test's stream is named by its key: the notebook's assignment id, the test cell's grade id, and, where one
# test draws several streams (a loop over draws), further parts. The key is hashed (SHA-256: the same on every machine
# and Python, unlike hash()) together with the offering's seed, or "published" while none is set, into the entropy
# of numpy's SeedSequence. Two tests never share a stream unless they share a key (tests/test_hidden_streams.py holds
# every hidden test of the course to its own), and an offering's streams say nothing of the published ones'.
_KEY_PART = re.compile(r"[A-Za-z0-9_]+")


def hidden_stream(assignment, test, *parts):
    """The SeedSequence of the hidden test `test` (its cell's grade id) of `assignment` (its notebook's id);
    `parts` (names or whole numbers >= 0) tell apart several streams of one test. Published while no offering's
    seed is set, the offering's own otherwise."""
    key = [assignment, test, *parts]
    if not all(isinstance(k, str) and _KEY_PART.fullmatch(k) for k in key[:2]) or not all(
            (isinstance(p, str) and _KEY_PART.fullmatch(p)) or (type(p) is int and p >= 0) for p in parts):
        raise ValueError("a hidden stream's key is (assignment id, grade id, *parts), the ids and any named part "
                         f"made of letters, digits and _, any other part a whole number >= 0; got {tuple(key)!r}")
    offering = "published" if _offering_seed is None else _offering_seed
    digest = hashlib.sha256(json.dumps([offering, *key]).encode("ascii")).digest()
    return np.random.SeedSequence(int.from_bytes(digest, "big"))


def hidden_seed(assignment, test, *parts):
    """A hidden test's seed, a whole number below 2**32, for code that takes one (`reference.random_ffn(...,
    seed=)`): drawn from its stream (`hidden_stream`)."""
    return int(hidden_stream(assignment, test, *parts).generate_state(1, np.uint32)[0])


def hidden_rng(assignment, test, *parts):
    """The random generator of a hidden test: `checks.hidden_rng("02_forward_pass", "test_ffn_forward_hidden")`,
    its notebook's assignment id and its own cell's grade id (`hidden_stream`)."""
    return np.random.default_rng(hidden_stream(assignment, test, *parts))
