"""The feedback learners see: compare's messages, check's handling of unfinished or crashing code."""

import warnings

import numpy as np
import pytest

from ffn_helpers import checks, mistakes
from ffn_helpers._checks import hidden
from ffn_helpers.checks import assert_close, call, check, check_equal, compare, diagnose


@pytest.fixture(autouse=True)
def no_warnings():
    """Feedback must never write a warning: nbgrader gives 0 points to a cell with stderr output."""
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        yield


# --- compare ---------------------------------------------------------------------------------------

def test_equal_says_equal():
    r = compare([1.0, 2.0], np.array([1.0, 2.0]), name="y")
    assert r.ok and r.message == "y: equal" and r.max_abs == 0.0 and r.max_rel == 0.0


def test_close_reports_largest_absolute_and_relative_difference():
    r = compare([1.0 + 1e-9, 2.0], [1.0, 2.0], name="y")
    assert r.ok
    assert r.message.startswith("y: close (largest absolute difference 1e-09, largest relative difference 1e-09")
    assert r.max_abs == pytest.approx(1e-9, rel=1e-6, abs=0) and r.max_rel == pytest.approx(1e-9, rel=1e-6, abs=0)


def test_not_close_reports_count_tolerance_worst_index_and_both_values():
    expected = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = np.array([[1.0, 2.5], [3.0, 4.0 + 1e-3]])
    r = compare(got, expected, name="ffn_forward(...)")
    assert not r.ok
    lines = r.message.splitlines()
    assert lines[0] == ("ffn_forward(...) is not close to the expected value: 2 of 4 entries differ "
                        "(tolerance: |got - expected| <= 1e-12 + 1e-07·|expected|).")
    assert lines[1] == "  largest absolute difference 0.5 at index (0, 1), largest relative difference 0.25"
    assert lines[2].startswith("  expected: [[1. 2.]") and lines[4].startswith("  got:      [[1.    2.5  ]")
    assert r.max_abs == 0.5 and r.max_rel == 0.25


def test_tolerances_are_the_ones_given():
    assert not compare([1.001], [1.0]).ok
    r = compare([1.001], [1.0], rtol=1e-2, atol=0)
    assert r.ok and "close" in r.message
    assert "(tolerance: |got - expected| <= 0 + 1e-05·|expected|)" in compare([1.001], [1.0], rtol=1e-5,
                                                                              atol=0).message
    assert not compare([1e-13], [0.0], atol=0).ok and compare([1e-13], [0.0]).ok


def test_relative_difference_against_zero_is_infinite():
    r = compare([1e-3], [0.0])
    assert not r.ok and r.max_rel == np.inf and "largest relative difference inf" in r.message


@pytest.mark.parametrize("got, expected, hint", [
    (np.ones((3, 2)), np.ones((2, 3)), "the expected shape reversed: computed along another axis than the one asked, "
                                       "or transposed"),
    (np.ones(6), np.ones((2, 3)), "same number of elements: check for a reshape, a squeeze or a flattening"),
    (np.ones((1, 3)), np.ones(3), "same number of elements"),
    (np.ones(4), np.ones(3), None),
])
def test_shape_mismatch_message(got, expected, hint):
    r = compare(got, expected, name="y")
    assert not r.ok
    assert r.message.startswith(f"y has shape {np.shape(got)}, expected shape {np.shape(expected)}")
    assert "expected: " in r.message and "got: " in r.message
    if hint:
        assert hint in r.message
    else:
        assert "the expected shape" not in r.message and "same number" not in r.message


def test_the_shape_of_a_single_number_is_said_in_words():
    """On main: "has shape (4,), expected ()", which a learner may not read as a single number."""
    said = compare(np.zeros(4), 1.0, name="y").message
    assert said.startswith("y has shape (4,), expected a single number (shape ())"), said
    said = compare(5.0, np.ones(3), name="y").message
    assert said.startswith("y is a single number (shape ()), expected shape (3,)"), said


def test_every_entry_off_by_one_factor_is_said():
    """09's xavier_init with √(2 / d_model + d_ff): on main two raw matrices and nothing else."""
    expected = np.array([[0.5, -1.0], [2.0, 0.25]])
    assert "note: every entry is 2.38 times the expected one" in compare(2.38 * expected, expected).message
    assert "times the expected one" not in compare(expected + 0.1, expected).message


def test_dtype_note_when_equal_close_or_not():
    for got in (np.array([1, 2]), np.array([1.0, 2.0], dtype=np.float32)):
        r = compare(got, np.array([1.0, 2.0]))
        assert r.ok and f"note: dtype is {got.dtype}, expected float64" in r.message
    r = compare(np.array([1.0, 2.5], dtype=np.float32), np.array([1.0, 2.0]))
    assert not r.ok and "note: dtype is float32, expected float64" in r.message
    assert "note" not in compare(np.array([1.0, 2.0]), np.array([1.0, 2.0])).message


def test_nan_equals_nan_without_warning():
    assert compare(np.nan, np.nan).ok
    r = compare([1.0, np.nan], [1.0, np.nan])
    assert r.ok and r.message == "result: equal"
    assert compare([[np.nan, np.nan]], [[np.nan, np.nan]]).ok


def test_nan_against_a_number_is_a_difference():
    for got, expected in (([np.nan], [1.0]), ([1.0], [np.nan])):
        r = compare(got, expected)
        assert not r.ok and "1 of 1 entries differ" in r.message and r.max_abs == np.inf


def test_infinities():
    assert compare([np.inf, -np.inf], [np.inf, -np.inf]).ok
    assert not compare([np.inf], [-np.inf]).ok
    assert not compare([1e308], [np.inf]).ok
    assert not compare([np.inf], [1.0]).ok


def test_none_says_forgot_to_return():
    r = compare(None, [1.0], name="relu(...)")
    assert not r.ok and r.message == "relu(...) is None: did the function forget to `return` its result?"


@pytest.mark.parametrize("got, part", [("abc", "should hold numbers, got dtype <U3"),
                                       ([1 + 1j], "should hold numbers, got dtype complex128"),
                                       ([[1.0, 2.0], [3.0]], "could not be read as an array")])
def test_non_numeric_results(got, part):
    r = compare(got, [1.0])
    assert not r.ok and part in r.message


def test_empty_arrays_are_equal():
    assert compare(np.zeros((0, 3)), np.zeros((0, 3))).ok


def test_booleans_and_ints_compare_as_numbers():
    assert compare(np.array([True, False]), np.array([True, False])).ok
    assert not compare(np.array([True, True]), np.array([True, False])).ok


# --- call / check --------------------------------------------------------------------------------

def unfinished(x):
    # YOUR CODE HERE
    raise NotImplementedError()


def test_check_turns_not_implemented_into_implement_it():
    with pytest.raises(AssertionError) as info:
        check(unfinished, ([1.0],), [1.0])
    message = str(info.value)
    assert message.startswith("unfinished is not implemented yet: replace `raise NotImplementedError()`")
    assert "run that cell, then run this test again" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no traceback noise


def test_check_turns_a_crash_into_a_message_naming_the_exception():
    def crashes(x):
        return x @ np.ones((5, 5))

    with pytest.raises(AssertionError, match=r"^crashes raised ValueError: matmul") as info:
        check(crashes, (np.ones((2, 3)),), np.ones((2, 5)))
    assert isinstance(info.value.__cause__, ValueError)

    def key_error(x):
        return {}["missing"]

    with pytest.raises(AssertionError, match=r"^key_error raised KeyError: 'missing'"):
        check(key_error, (1,), 1.0)


def test_check_with_a_function_returning_none():
    def forgot_return(x):
        np.maximum(x, 0)

    with pytest.raises(AssertionError, match=r"forgot_return\(\.\.\.\) is None: did the function forget to `return`"):
        check(forgot_return, ([1.0],), [1.0])


def test_check_returns_the_result_when_right_and_raises_the_compare_message_when_wrong():
    def double(x):
        return 2 * np.asarray(x, float)

    out = check(double, ([1.0, 2.0],), [2.0, 4.0])
    np.testing.assert_array_equal(out, [2.0, 4.0])
    with pytest.raises(AssertionError) as info:
        check(double, ([1.0, 2.0],), [2.0, 5.0], name="twice")
    assert str(info.value) == compare([2.0, 4.0], [2.0, 5.0], name="twice(...)").message


def test_check_passes_its_tolerances():
    def nearly(x):
        return np.asarray(x, float) + 1e-6

    with pytest.raises(AssertionError):
        check(nearly, ([1.0],), [1.0])
    check(nearly, ([1.0],), [1.0], rtol=1e-5)


def test_call_passes_arguments_and_returns():
    assert call(lambda a, b: a - b, 5, 3) == 2


def test_assert_close_adds_the_likely_mistake():
    x = np.array([[1.0, -1.0]])
    W1, b1 = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]]), np.array([0.5, -0.5, 0.5])
    W2, b2 = np.array([[1.0, -1.0], [0.0, 1.0], [1.0, 0.0]]), np.array([0.0, 1.0])
    right = np.maximum(x @ W1 + b1, 0) @ W2 + b2
    no_b2 = np.maximum(x @ W1 + b1, 0) @ W2
    with pytest.raises(AssertionError) as info:
        assert_close(no_b2, right, mistakes=mistakes.for_exercise("ffn_forward"), args=(x, W1, b1, W2, b2))
    assert str(info.value).endswith("\nLikely mistake (missing_b2): " + mistakes.by_key("missing_b2")[0].explanation)


# --- diagnose -------------------------------------------------------------------------------------

def test_diagnose_names_nothing_when_the_answer_is_right():
    z = np.array([-1.0, 2.0])
    assert diagnose(z * 0, mistakes.for_exercise("silu"), (z,), expected=z * 0) == []


def test_diagnose_survives_ragged_and_none_results():
    x = np.ones((2, 3))
    args = (x, np.ones((3, 4)), np.ones(4), np.ones((4, 3)), np.ones(3))
    assert diagnose([[1, 2], [3]], mistakes.for_exercise("ffn_forward"), args) == []
    assert diagnose(None, mistakes.for_exercise("ffn_forward"), args) == []


def test_diagnose_silences_warnings_from_the_wrong_formulas():
    # The unbiased variance divides by d - 1 = 0 for d = 1: numpy warns, the feedback must not.
    # Dividing 0 by 0 without eps warns too. A learner's all-NaN output matches both.
    x = np.array([[3.0], [4.0]])
    found = diagnose(np.full((2, 1), np.nan), mistakes.for_exercise("layer_norm"), (x,))
    assert [m.key for m in found] == ["unbiased_variance", "no_eps"]


def test_diagnose_skips_mistakes_that_crash_on_these_inputs():
    class Boom:
        key, explanation = "boom", "never"

        @staticmethod
        def compute(*args):
            raise RuntimeError("not possible here")

    assert diagnose(np.ones(2), [Boom], (np.ones(2),)) == []


# --- check_equal and ok --------------------------------------------------------------------------------

@pytest.mark.parametrize("actual, expected", [("A", "A"), (np.str_("C"), "C"), (True, True), (np.bool_(False), False),
                                              (3, 3), (np.int64(3), 3), (2.5, 2.5), (np.float64(2.5), 2.5)])
def test_check_equal_accepts_numpy_scalars_for_python_ones(actual, expected):
    check_equal(actual, expected)


@pytest.mark.parametrize("actual, expected, message", [
    ("B", "A", "sign_case: expected 'A', got 'B'"),
    (1, True, "sign_case should be of type bool (True), got type int: 1"),
    (True, 1, "sign_case should be of type int (1), got type bool: True"),
    (1.0, 1, "sign_case should be of type int (1), got type float: 1.0"),
    (np.array(["A"]), "A", "sign_case should be of type str ('A'), got type ndarray"),
    (None, "A", "sign_case should be of type str ('A'), got type NoneType: None"),
])
def test_check_equal_rejects_wrong_values_and_types(actual, expected, message):
    with pytest.raises(AssertionError) as info:
        check_equal(actual, expected, name="sign_case")
    assert str(info.value).startswith(message)


def test_ok_prints_to_stdout_only(capsys):
    checks.ok("relu passes the positives.")
    out, err = capsys.readouterr()
    assert out == "✔ relu passes the positives.\n" and err == ""


# --- substitute: one exercise graded on its own, in both of the grader's runs


def _block(x):
    return layer_norm(x) + 1.0  # noqa: F821 (the learner's global, bound below)


def test_substitute_rebinds_the_learners_name_for_the_block_only():
    from ffn_helpers import norm

    def wrong_layer_norm(x):
        return np.zeros_like(x)

    globals()["layer_norm"] = wrong_layer_norm
    try:
        x = np.array([5.5, -1.0])
        with checks.substitute(layer_norm=norm.layer_norm):
            np.testing.assert_allclose(_block(x), norm.layer_norm(x) + 1.0, rtol=1e-12)
        assert globals()["layer_norm"] is wrong_layer_norm  # yours is back afterwards
        np.testing.assert_allclose(_block(x), [1.0, 1.0], rtol=0)
    finally:
        del globals()["layer_norm"]


def test_substitute_asks_the_hook_by_dotted_name_and_takes_only_course_functions():
    from ffn_helpers import activations

    seen = []

    class Hook:
        def __init__(self, names):
            seen.append(("enter", names))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            seen.append(("exit",))

    checks.substitute.hook = Hook
    try:
        with checks.substitute(silu=activations.silu):
            assert silu is activations.silu  # noqa: F821 (bound by substitute in this module's globals)
    finally:
        checks.substitute.hook = None
    assert seen == [("enter", {"silu": "ffn_helpers.activations.silu"}), ("exit",)]
    assert "silu" not in globals()  # a name that was not there is removed again
    with pytest.raises(ValueError, match="function of ffn_helpers"):
        checks.substitute(silu=np.tanh)


def test_an_offerings_seed_changes_every_hidden_input_and_none_keeps_the_published(monkeypatch):
    key = ("02_forward_pass", "test_ffn_forward_hidden")
    published, published_seed = checks.hidden_rng(*key).normal(size=4), checks.hidden_seed(*key)
    np.testing.assert_array_equal(published, checks.hidden_rng(*key).normal(size=4))
    monkeypatch.setattr(hidden, "_offering_seed", None)  # put back whatever the test changes
    checks.set_offering_seed(2027)
    assert checks.private_offering()
    assert not np.array_equal(checks.hidden_rng(*key).normal(size=4), published)
    np.testing.assert_array_equal(checks.hidden_rng(*key).normal(size=4), checks.hidden_rng(*key).normal(size=4))
    assert checks.hidden_seed(*key) != published_seed
    for bad in (-1, 2.5, "7", True):
        with pytest.raises(ValueError, match="whole number"):
            checks.set_offering_seed(bad)
    checks.set_offering_seed(None)
    assert not checks.private_offering() and checks.hidden_seed(*key) == published_seed


# --- the course functions an answer may call: the notebook's checks refuse what the grader refuses (issue 52, 0)

NOTEBOOK = '''
import numpy as np
import ffn_helpers as ref
from ffn_helpers import checks, memory, norm
from ffn_helpers.ffn import ffn_forward

checks.may_call(recall=["ffn_forward"], kv_ffn=[], block=[])


def sublayer(t):  # a course cell's function, handed to the answer as data
    return ffn_forward(t, np.eye(2), np.zeros(2), np.eye(2), np.zeros(2))
'''


def _notebook(answers):
    namespace = {"__name__": "__main__"}
    exec(NOTEBOOK + answers, namespace)
    return namespace


def _run(namespace, test):
    exec(test, namespace)


def test_a_course_function_the_exercise_does_not_list_fails_its_check_in_the_graders_words():
    nb = _notebook("def kv_ffn(keys, values, threshold=0.5):\n    return memory.kv_ffn(keys, values, threshold)\n")
    with pytest.raises(AssertionError) as info:
        _run(nb, "checks.call(kv_ffn, np.eye(2), np.eye(2))")
    assert str(info.value) == checks.refusal("kv_ffn", "ffn_helpers.memory.kv_ffn", ())
    assert "(the course functions it may call: none)" in str(info.value)
    assert type(nb["memory"]).__name__ == "module" and nb["ffn_forward"].__module__ == "ffn_helpers.ffn"  # put back


def test_a_listed_function_runs_and_a_refusal_the_answer_catches_still_fails():
    nb = _notebook("def recall(x):\n    return ffn_forward(x, np.eye(2), np.zeros(2), np.eye(2), np.zeros(2))\n\n"
                   "def kv_ffn(x):\n    try:\n        ref.ffn_forward(x, 1, 2, 3, 4)\n    except Exception:\n"
                   "        pass\n    return x\n")
    _run(nb, "assert checks.call(recall, np.array([1.0, -2.0])).tolist() == [1.0, 0.0]")
    with pytest.raises(AssertionError, match=r"^kv_ffn uses the course's ffn_helpers\.ffn\.ffn_forward \(the course "
                                             r"functions it may call: none\)"):
        _run(nb, "checks.call(kv_ffn, np.ones(2))")


def test_what_a_test_hands_over_runs_the_course_functions_it_needs():
    """A course cell's function given as an argument (03's sublayer) runs as the course's, and a course function a
    substitution hands over may be called by any name, as in the grader's clean re-run."""
    nb = _notebook("def block(x, f):\n    return layer_norm(x + f(x))\n")
    _run(nb, "with checks.substitute(layer_norm=norm.layer_norm):\n"
             "    y = checks.call(block, np.array([1.0, -2.0]), sublayer)\n"
             "assert np.allclose(y, norm.layer_norm(np.array([2.0, -2.0])))")
    nb = _notebook("def block(x, f):\n    return norm.layer_norm(x) + ffn_forward(x, 1, 2, 3, 4)\n")
    with pytest.raises(AssertionError, match="block uses the course's ffn_helpers.ffn.ffn_forward"):
        _run(nb, "with checks.substitute(layer_norm=norm.layer_norm):\n"
                 "    checks.call(block, np.array([1.0, -2.0]), sublayer)")


def test_a_check_outside_a_notebook_that_states_the_lists_guards_nothing():
    """No may_call in the caller's globals (a test module, 00's demonstration): nothing is refused."""
    from ffn_helpers import memory

    def kv(keys):
        return memory.keys(keys)

    assert checks.call(kv, np.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]


# --- a diagnosis is confirmed, not just matched (issue 52, point 1)


def test_integer_division_is_told_no_mistake_where_a_mistake_also_gives_zero():
    """02's dead_fraction written as np.sum(z <= 0) // z.size returns 0; on a batch with no unit off for every
    token, always_inactive_units gives 0 too. On main the check named it; 0 singles out nothing."""
    rng = np.random.default_rng(203)
    x, W1, b1 = rng.normal(size=(50, 8)), rng.normal(size=(8, 16)), rng.normal(size=16)
    z = x @ W1 + b1
    learner = int(np.sum(z <= 0) // z.size)
    catalogue = mistakes.for_exercise("dead_fraction")
    always = next(m for m in catalogue if m.key == "always_inactive_units")
    assert always.compute(x, W1, b1) == learner == 0
    assert checks.diagnose(learner, catalogue, (x, W1, b1), expected=float(np.mean(z <= 0))) == []
    with pytest.raises(AssertionError) as info:
        checks.check(lambda x, W1, b1: learner, (x, W1, b1), float(np.mean(z <= 0)), mistakes=catalogue)
    assert checks.named_mistakes(info.value) == () and "note: dtype is int64, expected float64" in str(info.value)


def test_a_result_that_computes_nothing_singles_out_no_mistake():
    """Zeros, one value everywhere, the input returned: an answer that computes nothing gives them too."""
    z = np.array([-2.0, -1.0, 0.5])
    relu = mistakes.for_exercise("relu")
    assert [m.key for m in checks.diagnose(np.abs(z), relu, (z,), expected=np.maximum(z, 0))] == ["abs_for_relu"]
    negative = np.array([-2.0, -1.0])  # min(0, z) is z itself here: what `return z` gives
    assert checks.diagnose(negative, relu, (negative,), expected=np.zeros(2)) == []
    constant = mistakes.Mistake("constant", "a constant.", lambda z: np.full(np.shape(z), 3.0))
    assert checks.diagnose(np.full(3, 3.0), (constant,), (z,), expected=np.maximum(z, 0)) == []


def test_mistakes_the_inputs_cannot_tell_apart_are_named_together_and_said_so():
    catalogue = (mistakes.Mistake("twice", "you doubled it.", lambda z: 2 * z),
                 mistakes.Mistake("plus_z", "you added z again.", lambda z: z + z))
    z = np.array([1.0, 3.0])
    found = checks.diagnose(2 * z, catalogue, (z,), expected=z)
    assert [m.key for m in found] == ["twice", "plus_z"]
    message = str(checks.failure("wrong", found))
    assert message.splitlines()[1] == checks.ALIKE and message.count("Likely mistake") == 2


def _judged(learner, cases):
    """checks.check_judged on (a + b, a * b), judged part by part; the learner's calls, and what it was told."""
    calls = []
    catalogue = {"sum": (), "product": (mistakes.Mistake("added", "you added.", lambda a, b: a + b, "product"),)}

    def judge(got, a, b):
        if not (isinstance(got, tuple) and len(got) == 2):
            raise checks.wrong_result("both(a, b)", "a pair (sum, product)", got)
        for part, value, want in zip(("sum", "product"), got, (a + b, a * b), strict=True):
            try:
                checks.check_equal(value, want, name=f"both({a:g}, {b:g}): {part}")
            except AssertionError as error:
                error.part = part
                raise

    def run(a, b):
        calls.append((a, b))
        return checks.call(learner, a, b, name="both")

    with pytest.raises(AssertionError) as info:
        checks.check_judged(run, [((a, b), lambda got, a=a, b=b: judge(got, a, b)) for a, b in cases],
                            lambda part: catalogue[part], expected=[(a + b, a * b) for a, b in cases],
                            parts=("sum", "product"))
    return calls, info.value


def test_check_judged_names_a_mistake_of_the_wrong_part_only_where_it_explains_every_input():
    """The product is wrong first on (1, 3); the learner's code still runs on (2, 5), and the mistake of that part
    ("added") is named only where it gives the learner's product there too. A result that is no pair names no part:
    nothing is named."""
    cases = [(2.0, 2.0), (1.0, 3.0), (2.0, 5.0)]
    calls, error = _judged(lambda a, b: (a + b, a + b), cases)
    assert calls == cases
    assert str(error).startswith("both(1, 3): product") and checks.named_mistakes(error) == ("added",)
    calls, error = _judged(lambda a, b: (a + b, a + b if b < 5 else 0.0), cases)
    assert calls == cases and checks.named_mistakes(error) == ()
    calls, error = _judged(lambda a, b: (a + b, a + b) if b < 5 else 1 / 0, cases)  # a crash there: no evidence
    assert checks.named_mistakes(error) == ("added",)
    calls, error = _judged(lambda a, b: [a + b], cases)
    assert calls == cases and "should return a pair (sum, product)" in str(error)
    assert checks.named_mistakes(error) == ()


def test_check_cases_confirms_a_single_number_on_every_input_of_the_test():
    """preactivation's W-1 case A gives 2.0 for b added to each of four products, and a learner's `return 2.0` too:
    only the other cases tell them apart."""
    from ffn_helpers.examples import W_1

    cases = [((W_1.cases[c].x, W_1.w, W_1.b), W_1.cases[c].z) for c in "ABC"]
    catalogue = mistakes.for_exercise("preactivation")
    every_term = ("bias_in_every_term",)
    for learner, told in ((lambda x, w, b: 2.0, ()), (lambda x, w, b: float(np.sum(x * w + b)), every_term)):
        with pytest.raises(AssertionError) as info:
            checks.check_cases(learner, cases, name="preactivation", mistakes=catalogue)
        assert checks.named_mistakes(info.value) == told
