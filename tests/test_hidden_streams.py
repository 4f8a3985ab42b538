"""Each hidden test draws from a stream of its own (issue 48): keyed by its notebook's assignment id and its own
cell's grade id, under the offering's seed (ffn_helpers._checks.hidden.hidden_stream, re-exported by checks).

Before, each test named a hand-chosen number, and two tests could share one: 10's test_recall_hidden and 11's
test_router_topk_hidden both drew from 2011, so under any offering the directions of 10's hidden key rows were
those of 11's hidden router rows, and a learner who saw one (their own exception shows its inputs) knew the other.
"""

import ast

import numpy as np
import pytest

from autograder import SOURCE_DIR, assignments, authored, cells
from autograder.authoring.build import HIDDEN_BEGIN
from ffn_helpers import checks
from ffn_helpers._checks import hidden

DRAWS = ("hidden_rng", "hidden_seed", "hidden_stream")


def _draw_calls(source):
    """Every call of checks.hidden_rng / hidden_seed / hidden_stream in a cell's source, as ast.Call nodes."""
    tree = ast.parse(cells.to_python(source))
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in DRAWS and isinstance(node.func.value, ast.Name) and node.func.value.id == "checks"]


def _hidden_draws():
    """(assignment, grade id, the cell's draw calls) for every authored test cell with hidden tests."""
    found = []
    for aid in assignments():
        for cell in authored(SOURCE_DIR / aid / f"{aid}.py").cells:
            if cell.cell_type == "code" and cells.role_of(cell) == "test" and HIDDEN_BEGIN in cell.source:
                found.append((aid, cells._nbgrader(cell).get("grade_id"), _draw_calls(cell.source)))
    return found


def test_every_hidden_draw_is_keyed_by_its_own_notebook_and_cell():
    """Each draw's first two arguments are its notebook's assignment id and its own cell's grade id, as literals;
    the draws of one cell differ in their further parts. So no two hidden tests share a stream by construction."""
    wrong, calls = [], 0
    for aid, grade_id, draws in _hidden_draws():
        shown = []
        for call in draws:
            calls += 1
            text = ast.unparse(call)
            key = [a.value if isinstance(a, ast.Constant) else None for a in call.args[:2]]
            if key != [aid, grade_id] or call.keywords:
                wrong.append(f"{aid} {grade_id}: {text} (its key should start {aid!r}, {grade_id!r})")
            shown.append(ast.dump(ast.Tuple(call.args[2:])))
        if len(set(shown)) != len(shown):
            wrong.append(f"{aid} {grade_id}: two draws with one key: {[ast.unparse(c) for c in draws]}")
    assert calls >= 45 and not wrong, "\n".join(wrong)


def test_the_course_has_no_other_hidden_draw():
    """A draw outside a hidden test cell would not be read above (the build refuses one outside a hidden block)."""
    outside = [(aid, cells._nbgrader(cell).get("grade_id"))
               for aid in assignments() for cell in authored(SOURCE_DIR / aid / f"{aid}.py").cells
               if cell.cell_type == "code" and _draw_calls(cell.source)
               and not (cells.role_of(cell) == "test" and HIDDEN_BEGIN in cell.source)]
    assert outside == []


@pytest.fixture
def offering(monkeypatch):
    monkeypatch.setattr(hidden, "_offering_seed", None)  # put back whatever the test sets
    return checks.set_offering_seed


@pytest.mark.parametrize("seed", [None, 0, 2027])
def test_under_one_seed_two_keys_draw_two_streams_and_one_key_the_same(offering, seed):
    offering(seed)
    recall, router = ("10_key_value_memory", "test_recall_hidden"), ("11_mixture_of_experts", "test_router_topk_hidden")
    first = checks.hidden_rng(*recall).normal(size=64)
    np.testing.assert_array_equal(first, checks.hidden_rng(*recall).normal(size=64))
    assert not np.isin(first, checks.hidden_rng(*router).normal(size=64)).any()
    keys = [(aid, grade_id, *part) for aid, grade_id, _ in _hidden_draws() for part in ((), ("task", 1), ("task", 2))]
    seeds = {checks.hidden_seed(*key) for key in keys}
    assert len(keys) > 100 and len(seeds) == len(keys)  # 32-bit seeds: a clash among these is about 1 in a million


def test_an_offerings_streams_are_not_the_published_ones(offering):
    key = ("02_forward_pass", "test_ffn_forward_hidden")
    published = checks.hidden_rng(*key).normal(size=16)
    for seed in (0, 1, 2027, 2**40):
        offering(seed)
        assert not np.isin(checks.hidden_rng(*key).normal(size=16), published).any(), seed
    offering(None)
    np.testing.assert_array_equal(checks.hidden_rng(*key).normal(size=16), published)


def test_a_stream_is_the_same_on_every_machine_and_run():
    """SHA-256 of the key, never Python's hash(), which PYTHONHASHSEED changes from one process to the next: the
    published inputs are the same wherever the notebook runs."""
    assert checks.hidden_seed("02_forward_pass", "test_ffn_forward_hidden") == 3720918667


@pytest.mark.parametrize("key", [(201,), ("02_forward_pass",), ("02_forward_pass", 201), ("02 forward", "test"),
                                 ("02_forward_pass", "test_ffn_forward_hidden", -1),
                                 ("02_forward_pass", "test_ffn_forward_hidden", 1.5)])
def test_a_key_names_its_test(key):
    with pytest.raises((ValueError, TypeError)):
        checks.hidden_rng(*key)
