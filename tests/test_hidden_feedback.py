"""A private offering's hidden test data stays out of the student's feedback (issue 41, item 5).

Under a private offering's seed a failed hidden test tells the student what failed (the shapes, how far off, the
likely mistake) without its inputs, its expected values or what came back (checks.failure's `public` text, chosen
by disclosure.for_student); the instructor's copy, `<student>.json`'s `clean_run.message`, keeps them. Without a seed
(the public course, whose hidden inputs are published) the message is the whole one, as before.
"""

import ast
import contextlib
import io
import json
import re
import types
import warnings

import nbformat
import nbtools
import numpy as np
import pytest
from adversarial import grading

from autograder import offering
from autograder.grading.gate_beside import disclosure
from autograder.grading.gate_out import feedback
from ffn_helpers import checks, ffn, mistakes, module

ASSIGNMENT = "02_forward_pass"
SEED = grading.OFFERING_SEED
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"


@pytest.fixture(autouse=True)
def _no_seed(monkeypatch):
    monkeypatch.delenv(offering.ENV, raising=False)
    yield
    checks.set_offering_seed(None)


def _missing_b1(x, W1, b1, W2, b2):
    return np.maximum(x @ W1, 0) @ W2 + b2


_missing_b1.__name__ = "ffn_forward"


def _numbers(*arrays):
    """Each entry of `arrays` with 6 or more decimals, as numpy prints it: in the checks' format (10 digits) and
    in numpy's own (8), the text a message or a notebook would hold."""
    found = set()
    for a in arrays:
        for text in (np.array2string(np.asarray(a), precision=10, threshold=10**6), repr(np.asarray(a))):
            found |= set(re.findall(_NUMBER, text))
    return found


def _printed(a):
    """The numbers of `a` a check's whole message prints (checks.compare's format: the corners of a big array)."""
    return set(re.findall(_NUMBER, np.array2string(np.asarray(a), precision=10, threshold=12, edgeitems=3,
                                                   max_line_width=100)))


def _in(text):
    return set(re.findall(_NUMBER, text))


_NUMBER = r"-?\d+\.\d{6,}"


def _draw(seed):
    """02's first hidden case of test_ffn_forward_hidden (its source's draws, in order) under `seed`: the inputs,
    the expected output and what a forgotten b1 returns."""
    checks.set_offering_seed(seed)
    try:
        rng = checks.hidden_rng("02_forward_pass", "test_ffn_forward_hidden")
        x = rng.normal(size=(5, 3))
        W1, b1 = rng.normal(size=(3, 4)) / np.sqrt(3), rng.normal(size=4)
        W2, b2 = rng.normal(size=(4, 3)) / np.sqrt(4), rng.normal(size=3)
    finally:
        checks.set_offering_seed(None)
    return (x, W1, b1, W2, b2), ffn.ffn_forward(x, W1, b1, W2, b2), _missing_b1(x, W1, b1, W2, b2)


def _failure(fn, *args, **kwargs):
    with pytest.raises(AssertionError) as caught:
        fn(*args, **kwargs)
    return caught.value


# ---------------------------------------------------------------- the checks' two texts


def test_a_wrong_value_says_how_far_off_and_the_mistake_without_the_values():
    args, expected, got = _draw(SEED)
    error = _failure(checks.check, _missing_b1, args, expected, mistakes=mistakes.for_exercise("ffn_forward"))
    public, whole = checks.public_message(error), str(error)
    assert public.startswith("AssertionError: ffn_forward(...) is not close to the expected value: 15 of 15 entries")
    assert "largest absolute difference" in public and "Likely mistake (missing_b1)" in public
    drawn = _numbers(*args, expected, got)
    assert drawn and not [n for n in drawn if n in public]
    assert _printed(expected) <= _in(whole) and _printed(got) <= _in(whole)  # the whole message keeps them


def test_a_wrong_shape_names_both_shapes_without_the_values():
    args, expected, _ = _draw(SEED)
    error = _failure(checks.assert_close, expected.T, expected, name="y")
    public = checks.public_message(error)
    assert public == ("AssertionError: y has shape (3, 5), expected shape (5, 3) (the expected shape reversed: "
                      "computed along another axis than the one asked, or transposed).")
    assert "expected: [[" in str(error)


def test_check_equal_leaves_out_the_name_which_may_quote_a_hidden_argument():
    error = _failure(checks.check_equal, "B", "A", name="sign_case(0.7310585786)")
    assert checks.public_message(error) == "AssertionError: the result (of type str) is not the expected value"
    error = _failure(checks.check_equal, 3.5, "A", name="sign_case(0.7310585786)")
    assert checks.public_message(error) == "AssertionError: the result should be of type str, got type float"
    assert "0.7310585786" in str(error)


def test_a_reworded_failure_keeps_the_public_text_and_one_without_any_is_withheld():
    inner = checks.failure("x = 0.1234567 is wrong", public="the first case is wrong")
    outer = checks.failure(f"Case: 0.1234567\n{inner}", keeps=inner)
    assert checks.public_message(outer) == "AssertionError: the first case is wrong"
    bare = checks.failure("q = [0.1234567] is wrong")
    assert checks.public_message(bare) == f"AssertionError: {checks.WITHHELD}"
    assert checks.public_message(ValueError("0.1234567")) == f"ValueError: {checks.WITHHELD}"


def test_a_result_of_the_wrong_kind_is_described_without_its_values():
    z = np.array([[0.1234567, 2.5], [1.0, -3.25]])
    assert checks.describe(z) == "an ndarray of shape (2, 2) and dtype float64"
    assert [checks.describe(v) for v in ((z, z, z), [z], {"W1": z}, None, 0.1234567, "text", np.float64(2.0))] == [
        "a tuple of length 3", "a list of length 1", "a dict of length 1", "None", "a float", "a str",
        "a float64"]
    error = checks.wrong_result("collapse_linear", "a pair (W, b)", (z, z, z))
    assert checks.public_message(error) == ("AssertionError: collapse_linear should return a pair (W, b), got a "
                                            "tuple of length 3")
    assert "0.1234567" in str(error)


def test_a_case_keeps_the_failures_public_text_and_names_each_mistake_once():
    swapped = mistakes.by_key("a_b_swapped")[0]
    inner = checks.failure("got 0.1234567", [swapped], public="the result is wrong")
    error = checks.in_case("a drawn router", inner, [swapped])
    assert checks.public_message(error) == ("AssertionError: Case: a drawn router\nthe result is wrong\n"
                                            f"Likely mistake (a_b_swapped): {swapped.explanation}")
    assert str(error).count("Likely mistake") == 1 and checks.named_mistakes(error) == ("a_b_swapped",)
    withheld = checks.in_case("a drawn router", checks.failure("got 0.1234567"))
    assert checks.public_message(withheld) == f"AssertionError: {checks.WITHHELD}"


def _helper(aid, name):
    """A notebook's own check helper `name`, as its test cells see it: the code cells above it run, and its own
    (which may show it at work on the notebook's earlier definitions); no test cell runs."""
    namespace = {}
    for cell in nbtools.source(aid).cells:
        if cell.cell_type == "code" and not nbtools.is_test(cell):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(cell.source, namespace)
            if name in namespace:
                return namespace[name]
    raise LookupError(f"{aid} defines no {name}")


def _helper_failures():
    """(notebook, a helper's failure on drawn numbers, those numbers) for each notebook's own check helper."""
    z = np.random.default_rng(41).normal(size=(3, 4))
    one, loud = abs(float(z[0, 0])), np.concatenate([z.ravel(), [-1000.0]])
    cases = [
        ("01", lambda: _helper("01_relu_sign_cases", "check_labels")(
            lambda v: "B", [(one, "A")], mistakes.for_exercise("sign_case")), [one]),
        ("05", lambda: _helper("05_position_wise", "check_verdicts")(
            lambda f, x: True, [((None, z), False, "a row-wise map")]), [z]),
        ("07", lambda: _helper("07_collapse_to_linear", "check_verdicts")(
            lambda f, d: False, [((None, 3), True, "an affine map")]), []),
        ("08", lambda: _helper("08_limiting_behaviour", "check_quiet")(
            lambda v: 1 / (1 + np.exp(-v)), loud, 1 / (1 + np.exp(-loud))), [loud]),
        ("12 bfloat16", lambda: _helper("12_low_precision", "check_bfloat16")(
            lambda x: np.asarray(x, dtype=np.float32), z), [z]),
        ("12 int8", lambda: _helper("12_low_precision", "check_quantized")(
            lambda W: (np.zeros(W.shape, np.int8), np.ones(W.shape[0])), z), [z]),
    ]
    for name, run, drawn in cases + _helper_failures_09(z) + _helper_failures_10_11(z) + _helper_failures_13(z):
        with np.errstate(all="ignore"):
            yield name, _failure(run), drawn


def _helper_failures_09(z):
    """09's helpers: a wrong kind of result, a bias that should be None, a missing key or attribute."""
    def helper(name):
        return _helper("09_ffn_module", name)

    W1, _, W2, _ = module.xavier_init(3, 4, False, 0)
    grads = {"W1": z, "b1": z[0], "W2": z.T, "b2": z[1, :3], "x": z[2, :3]}
    no_biases = {**grads, "b1": None, "b2": None}
    model = module.FeedForwardNetwork(3, 4, seed=0)
    model.b1 = z[0]
    return [
        ("09 init tuple", lambda: helper("check_init")(lambda *a: (z, z, z), 3, 4), [z]),
        ("09 init None", lambda: helper("check_init")(lambda *a: (W1, z[0], W2, None), 3, 4, use_bias=False), [z]),
        ("09 gradients dict", lambda: helper("check_gradients")([z], grads, "backward(...)", (), ()), [z]),
        ("09 gradients key", lambda: helper("check_gradients")({"W1": z}, grads, "backward(...)", (), ()), [z]),
        ("09 gradients None", lambda: helper("check_gradients")(grads, no_biases, "backward(...)", (), ()), [z]),
        ("09 attribute", lambda: helper("attribute")(object(), "W1"), []),
        ("09 model bias", lambda: helper("check_model")(model, 3, 4, "relu", False, 0, z[:, :3], z[:, :3]), [z]),
    ]


def _helper_failures_10_11(z):
    """10's and 11's helpers: a wrong kind of result, a warning, indices that are not integers."""
    def warns(*args):
        warnings.warn("0/0 in the cosines", RuntimeWarning, stacklevel=2)
        return 1.0

    x, W_r = z[0, :3], z[:, :3]
    return [
        ("10 kv_ffn", lambda: _helper("10_key_value_memory", "check_memory_ffn")(
            lambda *a: z, (z, z, 0.5), module.xavier_init(4, 3)), [z]),
        ("10 recall", lambda: _helper("10_key_value_memory", "check_recall")(warns, [((z,), 1.0)]), [z]),
        ("11 router pair", lambda: _helper("11_mixture_of_experts", "check_router")(
            lambda *a: z, [((x, W_r, 2), "a drawn router")]), [z]),
        ("11 router dtype", lambda: _helper("11_mixture_of_experts", "check_router")(
            lambda *a: (z[0, :2], z[1, :2]), [((x, W_r, 2), "a drawn router")]), [z]),
        ("11 counts", lambda: _helper("11_mixture_of_experts", "check_counts")(
            lambda *a, **k: z, [((16, 4, 1, 1), {})]), [z]),
    ]


def _helper_failures_13(z):
    """13's helpers: a result that is not a pair, a missing key, a bias that should be None, a run that ends high."""
    from ffn_helpers import training

    def helper(name):
        return _helper("13_training", name)

    keys, values, start = training.the_task()
    drawn = {"W1": z, "b1": z[0], "W2": z.T, "b2": z[1]}
    high = {name: np.zeros_like(start[name]) for name in training.PARAMS}
    return [
        ("13 loss pair", lambda: helper("check_loss")(lambda y, t: z, [(z, z)]), [z]),
        ("13 params key", lambda: helper("check_params")({"W1": z}, drawn, "sgd_step(params, grads, lr=0.5)"), [z]),
        ("13 params None", lambda: helper("check_params")(drawn, {**drawn, "b1": None}, "train(...)'s params"), [z]),
        ("13 fit", lambda: helper("check_fit")(lambda p, x, t: (high, z.ravel()), start, keys, values,
                                               "a drawn task"), [z]),
    ]


def test_each_notebooks_own_check_helper_says_what_failed_without_the_numbers():
    """01, 05, 07, 08 and 12 word their failures themselves: each gives a public text that names what failed."""
    saw = {}
    for name, error, drawn in _helper_failures():
        public = checks.public_message(error)
        assert checks.WITHHELD not in public, f"{name}: no public text"
        assert not [n for n in _numbers(*drawn) if n in public], f"{name}: {public}"
        saw[name] = public
    # One label, "B" for a positive z, singles out no mistake (a constant answer gives it too): none is named.
    assert saw["01"] == "AssertionError: the result (of type str) is not the expected value"
    assert saw["05"].startswith("AssertionError: Case: a row-wise map\nthe result (of type bool)")
    assert "raised floating-point warnings" in saw["08"] and "overflow" in saw["08"]
    assert "differs from the expected bfloat16 values in" in saw["12 bfloat16"]
    assert "q is not close to the expected value: 12 of 12 entries" in saw["12 int8"]
    assert saw["09 init tuple"] == ("AssertionError: xavier_init(3, 4, use_bias=True, seed=0) should return the tuple "
                                    "(W1, b1, W2, b2), got a tuple of length 3")
    assert saw["09 init None"].endswith("b1 should be None, got an ndarray of shape (4,) and dtype float64")
    assert saw["09 gradients dict"].endswith("got a list of length 1")
    assert saw["09 gradients key"].startswith("AssertionError: backward(...)'s dict has no key 'b1'")
    assert saw["09 gradients None"].endswith("['b1'] should be None, got an ndarray of shape (4,) and dtype float64")
    assert "should be None, got an ndarray of shape (4,)" in saw["09 model bias"]
    assert saw["10 kv_ffn"].endswith("four arrays (W1, b1, W2, b2), got an ndarray of shape (3, 4) and dtype float64")
    assert "RuntimeWarning: 0/0 in the cosines" in saw["10 recall"]
    assert saw["11 router pair"] == ("AssertionError: Case: a drawn router\nrouter_topk should return a pair "
                                     "(indices, gates), got an ndarray of shape (3, 4) and dtype float64")
    assert saw["11 router dtype"].endswith("indices should be integers (expert numbers), got dtype float64")
    assert saw["11 counts"].endswith("should return a pair (total, active), got an ndarray of shape (3, 4) and dtype "
                                     "float64")
    assert saw["13 loss pair"].endswith("should return a pair (L, ∂L/∂y), got an ndarray of shape (3, 4) and dtype "
                                        "float64")
    assert saw["13 params key"].startswith("AssertionError: sgd_step(params, grads, lr=0.5) has no key 'b1'")
    assert saw["13 params None"].endswith("['b1'] should be None, got an ndarray of shape (4,) and dtype float64")
    assert saw["13 fit"].startswith("AssertionError: after fit, L is not below 0.01 on a drawn task")


def _failure_calls(path):
    """The `failure(...)` and `checks.failure(...)` calls in the Python file `path`, as (line, the call's text)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "failure"
                                           or getattr(node.func, "attr", None) == "failure"):
            yield node, ast.unparse(node)


def test_every_failure_a_check_raises_says_what_its_student_may_read():
    """The rule behind the helpers' texts, walked over every authored source and the checks: a failure states its
    public text (`public=`, or `keeps=` an earlier failure's), so none of them reaches a private offering's student
    as a bare "withheld"."""
    files = sorted((nbtools.COURSE_ROOT / "source").glob("*/*.py"))
    helpers = nbtools.REPO_ROOT / "ffn_helpers"
    files += [helpers / "checks.py", *sorted((helpers / "_checks").glob("*.py"))]  # the checks and their parts
    seen, bare = 0, []
    for path in files:
        for node, text in _failure_calls(path):
            seen += 1
            if not {k.arg for k in node.keywords} & {"public", "keeps"}:
                bare.append(f"{path.name}:{node.lineno}: {text[:100]}")
    assert seen > 25, f"found only {seen} failure calls: has the walk lost the sources?"
    assert bare == []


# ---------------------------------------------------------------- the judge's one decision


_CELL = "ok = 1\nchecks.check_equal(value, 1, name=f'v({value})')\n### BEGIN HIDDEN TESTS\n" \
        "checks.check_equal(hidden, 1, name=f'v({hidden})')\n### END HIDDEN TESTS\n"


def _raised(value, hidden):
    """The failure of _CELL's test run as the judge runs it (compiled as <label>), and the test."""
    test = types.SimpleNamespace(label="test_v_hidden", python=_CELL)
    code = compile(_CELL, f"<{test.label}>", "exec")
    try:
        exec(code, {"checks": checks, "value": value, "hidden": hidden})
    except AssertionError as exc:
        return exc, test
    raise AssertionError("the cell passed")


def test_only_a_hidden_tests_failure_under_an_offerings_seed_is_withheld():
    hidden_failure, test = _raised(1, 7)
    visible_failure, _ = _raised(7, 1)
    assert disclosure.for_student(hidden_failure, test) is None  # no seed: the published inputs, the whole message
    checks.set_offering_seed(SEED)
    withheld = "AssertionError: the result (of type int) is not the expected value"
    assert disclosure.for_student(hidden_failure, test) == withheld
    assert disclosure.for_student(visible_failure, test) is None  # the visible part's inputs are published


# ---------------------------------------------------------------- through `grade`


def _student_copies(out, course_root):
    """What the student gets: their page, the messages of their results, and the graded notebook as nbgrader's
    generate_feedback hands it out (the course's HideHiddenTests)."""
    result = json.loads((out / "bo.json").read_text())
    nb = nbformat.read(course_root / "autograded" / "bo" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for cell in nb.cells:
        feedback.hide_hidden_tests(cell)
    messages = "\n".join(c["message"] for c in result["cells"])
    return {"page": (out / "bo.html").read_text(), "messages": messages, "notebook": nbformat.writes(nb)}, result


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.xdist_group("hidden-feedback")
def test_a_private_offerings_hidden_data_reaches_the_instructor_alone(tmp_path, capsys):
    """bo forgets b1 in 02. Published: the page quotes the hidden test's expected values, as before. With the
    offering's seed: the page, the results' messages and the returned notebook name the failure, how far off and
    missing_b1, and hold none of the numbers the hidden test drew or expected; the instructor's copy holds them."""
    course_root = grading.make_course(tmp_path / "course", ASSIGNMENT)
    right = nbtools.completed_learner(ASSIGNMENT)
    submitted = grading.write_submissions(tmp_path / "submitted", ASSIGNMENT,
                                          {"bo": nbtools.with_answers(right, {"ffn_forward": MISSING_B1})})
    out = tmp_path / "results"

    grading.run_batch(ASSIGNMENT, submitted, out, course_root)
    copies, _ = _student_copies(out, course_root)
    _, expected, _ = _draw(None)
    assert _printed(expected) <= _in(copies["page"])  # published: the page quotes them, as before

    grading.private_offering(course_root, tmp_path / "private", SEED)
    assert sorted(grading.run_batch(ASSIGNMENT, submitted, out, course_root)) == ["bo"]
    capsys.readouterr()
    copies, result = _student_copies(out, course_root)
    args, expected, got = _draw(SEED)
    drawn = _numbers(*args, expected, got)
    for where, text in copies.items():
        assert not [n for n in drawn if n in text], f"the student's {where} holds the hidden test's numbers"
    cell = next(c for c in result["cells"] if c["grade_id"] == "test_ffn_forward_hidden")
    assert cell["points"] == 0 and [d["key"] for d in cell["diagnosis"]] == ["missing_b1"]
    for text in (copies["page"], cell["message"]):
        assert "ffn_forward(...) is not close to the expected value: 15 of 15 entries differ" in text
        assert "largest absolute difference" in text and "missing_b1" in text
    instructor = cell["clean_run"]["message"]
    assert _printed(expected) <= _in(instructor) and _printed(got) <= _in(instructor), "the instructor's copy lost them"


FLOAT_INDICES = '''def router_topk(x, W_r, k):
    logits = x @ W_r
    indices = np.argsort(-logits, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(logits, indices, axis=-1)
    gates = np.exp(chosen - chosen.max(axis=-1, keepdims=True))
    return indices.astype(float), gates / gates.sum(axis=-1, keepdims=True)
'''


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.xdist_group("hidden-feedback")
def test_a_notebooks_own_helper_says_what_failed_through_grade(tmp_path, capsys):
    """11's router_topk returns its indices as floats. With the offering's seed, the student's page and results say
    which case of the hidden test failed and why (check_router's own failure, reworded by checks.in_case), not only
    that the values are withheld; the instructor's copy also quotes the indices that came back."""
    aid = "11_mixture_of_experts"
    course_root = grading.make_course(tmp_path / "course", aid)
    grading.private_offering(course_root, tmp_path / "private", SEED)
    notebook = nbtools.with_answers(nbtools.completed_learner(aid), {"router_topk": FLOAT_INDICES})
    submitted = grading.write_submissions(tmp_path / "submitted", aid, {"cy": notebook})
    out = tmp_path / "results"
    assert sorted(grading.run_batch(aid, submitted, out, course_root)) == ["cy"]
    capsys.readouterr()
    result = json.loads((out / "cy.json").read_text())
    cell = next(c for c in result["cells"] if c["grade_id"] == "test_router_topk_hidden")
    said = ("Case: random router, x of shape (5,), k = 1\n"
            "indices should be integers (expert numbers), got dtype float64")
    assert cell["points"] == 0 and said in cell["message"] and checks.WITHHELD not in cell["message"]
    assert said in (out / "cy.html").read_text().replace("&#x27;", "'")
    assert said + ": array([" in cell["clean_run"]["message"]
