"""No false diagnosis: the catalogue attacked with every mistake it knows and a corpus of other wrong answers
(issue 52, point 1).

A check names a catalogued mistake ("Likely mistake (key): ...") only where the learner's result is that mistake's
result on inputs that single it out (checks.diagnose). On main, 02's `dead_fraction` written with integer division
(it returns 0) was told it had counted the units dead for every token: on the hidden batch that mistake's result
is 0 too. Here every test cell of every exercise (the visible and the hidden ones, as the grader runs them) is run
on each catalogued mistake of the exercise, written as the learner's answer, and on a corpus of other wrong
answers: constants, the input returned, integer division, the wrong axis, the wrong dtype, a sign, a factor, and
the slips learners were seen to make. An answer may be told only a mistake it made: a catalogued mistake, its own
key (alone, or among mistakes that give its very result on those inputs, which the message says); any other
answer, nothing.
"""

import ast
import contextlib
import copy
import functools
import inspect
import math
import re
import warnings

import nbtools
import numpy as np
import pytest
from scipy import special

import ffn_helpers as fh
from ffn_helpers import checks, memory, mistakes, moe, training
from ffn_helpers import module as reference

GRADED = nbtools.graded_assignments()
EXERCISES = [(aid, gid) for aid in GRADED for gid in nbtools.answer_ids(nbtools.source(aid))]


# ---------------------------------------------------------------- running an exercise's test cells


def _span(aid, exercise):
    """The cells from `exercise`'s answer cell to its last test cell."""
    nb = nbtools.solution(aid)
    answers = nbtools.answer_ids(nb)
    tests = [g for g in nbtools.test_ids(nb) if (nbtools.exercise_of(g, answers) or ("",))[0] == exercise]
    return slice(nbtools.cell_index(aid, exercise), nbtools.cell_index(aid, tests[-1]) + 1), tests


@functools.cache
def _namespace_before(aid, exercise):
    namespace = {"__name__": "__main__"}
    raised = nbtools.run_in_process(aid, {}, cells=slice(0, nbtools.cell_index(aid, exercise)), namespace=namespace)
    assert raised == {}, raised
    return namespace


@functools.cache
def right_answer(aid, exercise):
    """The worked solution's function (or class) of `exercise`."""
    namespace = dict(_namespace_before(aid, exercise))
    exec(compile(nbtools.cells_by_id(nbtools.solution(aid))[exercise].source, "<answer>", "exec"), namespace)
    return namespace[exercise]


def run_tests(aid, exercise, answer):
    """test cell -> the exception it raised, with `answer` (a function or class) as the learner's `exercise`."""
    span, tests = _span(aid, exercise)
    namespace = dict(_namespace_before(aid, exercise))
    namespace[exercise] = answer
    raised = nbtools.run_in_process(aid, {exercise: "pass\n"}, cells=span, namespace=namespace)
    return {g: e for g, e in raised.items() if g in tests}


def named(function, exercise):
    """`function` as the learner's answer: a function of that name (its code runs as the learner's would)."""
    def answer(*args, **kwargs):
        return function(*args, **kwargs)

    answer.__name__ = answer.__qualname__ = exercise
    return answer


# ---------------------------------------------------------------- each catalogued mistake as an answer


def _with_part(reference_fn, parts, part, compute):
    """An answer returning the reference's tuple with its `part` (an index into `parts`) from `compute`."""
    def answer(*args):
        result = list(reference_fn(*args))
        result[parts.index(part)] = compute(*args)
        return tuple(result)

    return answer


def _xavier(compute):
    def answer(d_model, d_ff, use_bias=True, seed=None):
        W1, b1, W2, b2 = reference.xavier_init(d_model, d_ff, use_bias, seed)
        return compute("W1", d_model, d_ff, seed), b1, compute("W2", d_model, d_ff, seed), b2

    return answer


def _backward(compute):
    def answer(x, grad_out, W1, b1, W2, b2, activation="relu"):
        return {name: compute(name, x, grad_out, W1, b1, W2, b2, activation) for name in ("W1", "b1", "W2", "b2", "x")}

    return answer


def _network(call=None, backward=None):
    """A FeedForwardNetwork class whose __call__ or backward is a mistake's (args as its catalogue part takes)."""
    class FeedForwardNetwork(reference.FeedForwardNetwork):
        def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
            super().__init__(d_model, d_ff, activation=activation, use_bias=use_bias, seed=seed)
            self.initial = (self.W1, self.b1, self.W2, self.b2)

        def __call__(self, x):
            params = (self.W1, self.b1, self.W2, self.b2)
            return super().__call__(x) if call is None else call(x, params, self.initial, self.activation)

        def backward(self, x, grad_out):
            if backward is None:
                return super().backward(x, grad_out)
            return {name: backward(name, x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)
                    for name in ("W1", "b1", "W2", "b2", "x")}

    return FeedForwardNetwork


def _count_parameters(compute):
    def answer(W1, b1, W2, b2):
        d_model, d_ff = np.shape(W1)
        return compute(d_model, d_ff, b1 is not None)

    return answer


def mistake_answer(aid, exercise, mistake):
    """The learner's answer that makes `mistake` (computed by the catalogue) and nothing else."""
    right = right_answer(aid, exercise)
    compute = mistake.compute
    if exercise == "kv_ffn":
        return named(_with_part(memory.kv_ffn, ("W1", "b1", "W2", "b2"), mistake.part, compute), exercise)
    if exercise == "router_topk":
        return named(_with_part(moe.router_topk, ("indices", "gates"), mistake.part, compute), exercise)
    if exercise == "collapse_linear":
        return named(_with_part(fh.collapse_to_linear, ("W", "b"), mistake.part, compute), exercise)
    if exercise == "xavier_init":
        if mistake.part == "std":
            return None  # the same mistakes as the weights' part, whose draws they make
        return named(_xavier(compute), exercise)
    if exercise == "ffn_module_backward":
        return named(_backward(compute), exercise)
    if exercise == "FeedForwardNetwork":
        return _network(call=compute) if mistake.part == "__call__" else _network(backward=compute)
    if exercise == "count_parameters":
        return named(_count_parameters(compute), exercise)
    if exercise in TRAINING:
        return named(TRAINING[exercise](mistake.key), exercise)
    assert callable(right)
    return named(compute, exercise)


def _parts(exercise, key):
    """part -> the computation of the catalogued mistake `key` of `exercise` in that part of the result."""
    return {m.part: m.compute for m in mistakes.CATALOGUE[exercise] if m.key == key}


def _mse_loss(key):
    """mse_loss making the mistake `key` in every part of its pair where the catalogue has it."""
    parts = _parts("mse_loss", key)

    def answer(y, target):
        return tuple(parts[part](y, target) if part in parts else right
                     for part, right in zip(("loss", "grad"), training.mse_loss(y, target), strict=True))

    return answer


def _sgd_step(key):
    compute = _parts("sgd_step", key)[None]
    return lambda params, grads, lr: {name: compute(name, params, grads, lr) for name in training.PARAMS}


def _train(key):
    """train making the mistake `key` in its parameters and its losses, where the catalogue has it."""
    parts = _parts("train", key)

    def answer(params, x, target, lr, steps):
        trained, losses = training.train(params, x, target, lr, steps)
        if "params" in parts:
            trained = {name: parts["params"](name, params, x, target, lr, steps) for name in training.PARAMS}
        return trained, parts["losses"](params, x, target, lr, steps) if "losses" in parts else losses

    return answer


TRAINING = {"mse_loss": _mse_loss, "sgd_step": _sgd_step, "train": _train}  # 13's answers, by the mistake's key


# ---------------------------------------------------------------- a corpus of other wrong answers


def _map(result, f):
    """f applied to every array of a result (a tuple, a list or a dict of them, or one)."""
    if isinstance(result, dict):
        return {k: None if v is None else f(v) for k, v in result.items()}
    if isinstance(result, tuple | list):
        return type(result)(f(v) for v in result)
    return f(result)


GENERIC = {  # name -> f(the right result, the arguments) giving a wrong one
    "zeros": lambda r, a: _map(r, lambda v: np.zeros_like(np.asarray(v, dtype=float))),
    "ones": lambda r, a: _map(r, lambda v: np.ones_like(np.asarray(v, dtype=float))),
    "a half everywhere": lambda r, a: _map(r, lambda v: np.full(np.shape(v), 0.5)),
    "the input returned": lambda r, a: a[0],
    "the last argument returned": lambda r, a: a[-1],
    "float32": lambda r, a: _map(r, lambda v: np.asarray(v, dtype=np.float32)),
    "integer truncation": lambda r, a: _map(r, lambda v: np.trunc(np.asarray(v, dtype=float)).astype(int)),
    "floor division": lambda r, a: _map(r, lambda v: np.asarray(v, dtype=float) // 1),
    "transposed": lambda r, a: _map(r, lambda v: np.asarray(v).T),
    "rows reversed": lambda r, a: _map(r, lambda v: np.asarray(v)[::-1] if np.ndim(v) else v),
    "mean over the first axis": lambda r, a: _map(
        r, lambda v: np.broadcast_to(np.asarray(v, dtype=float).mean(axis=0), np.shape(v)) if np.ndim(v) else v),
    "negated": lambda r, a: _map(r, lambda v: -np.asarray(v, dtype=float)),
    "doubled": lambda r, a: _map(r, lambda v: 2 * np.asarray(v, dtype=float)),
    "halved": lambda r, a: _map(r, lambda v: np.asarray(v, dtype=float) / 2),
    "plus one": lambda r, a: _map(r, lambda v: np.asarray(v, dtype=float) + 1),
    "squared": lambda r, a: _map(r, lambda v: np.asarray(v, dtype=float) ** 2),
    "absolute value": lambda r, a: _map(r, lambda v: np.abs(np.asarray(v, dtype=float))),
    "one minus": lambda r, a: _map(r, lambda v: 1 - np.asarray(v, dtype=float)),
    "pair swapped": lambda r, a: tuple(reversed(r)) if isinstance(r, tuple) else r,
}


def _transformed(right, f):
    def answer(*args, **kwargs):
        return f(right(*args, **kwargs), args)

    return answer


def _scalar(value):
    return lambda *a, **k: value


def generic_answers(aid, exercise):
    right = right_answer(aid, exercise)
    if isinstance(right, type):
        return {}
    found = {name: _transformed(right, f) for name, f in GENERIC.items()}
    for value in (0, 1, 0.5, 2.0, True, False, "A", "B", "C"):
        found[f"always {value!r}"] = _scalar(value)
    return found


def _z(x, W1, b1):
    return np.asarray(x, dtype=float) @ W1 + b1


def _recall_dots(W1, b1, W2, b2, keys, values):
    """Dot products and no cosines, every output counted (an all-zero one picks value 0)."""
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    return float(np.mean(np.argmax(Y @ np.asarray(values, dtype=float).T, axis=1) == np.arange(len(Y))))


def _recall_integer_division(W1, b1, W2, b2, keys, values):
    share = memory.recall(W1, b1, W2, b2, keys, values)
    return int(round(share * len(keys))) // len(keys)


def _detector(f, X, *, own_row=False, skip_last=False):
    """mixes_positions, one token at a time; own_row: compares every row, its own too; skip_last: range(n - 1)."""
    X = np.asarray(X, dtype=float)
    before = np.asarray(f(X), dtype=float)
    for j in range(len(X) - 1 if skip_last else len(X)):
        moved = X.copy()
        moved[j] += np.random.default_rng(0).normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        rows = np.ones(len(X), dtype=bool) if own_row else np.arange(len(X)) != j
        if not np.allclose(after[rows], before[rows], rtol=1e-9, atol=1e-12):
            return True
    return False


def _affine_fixed_atol(f, d_in, n_trials=20, seed=0):
    """is_affine with a fixed atol = 1e-9 (and rtol = 0), at scales up to 10³."""
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(scale=10.0 ** rng.uniform(-2, 3), size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * np.asarray(f(x), dtype=float) + (1 - a) * np.asarray(f(y), dtype=float)
        if not np.allclose(lhs, rhs, rtol=0, atol=1e-9):
            return False
    return True


def _kv_threshold_minus_one(keys, values, threshold=0.5):
    W1, b1, W2, b2 = memory.kv_ffn(keys, values, threshold)
    return W1, np.full(len(keys), float(threshold) - 1.0), W2, b2


def _numerical_gradient_restored_by_steps(f, x, h=1e-5):
    """+h, -2h, +h: every entry put back by arithmetic, which rounding leaves off by an ulp or so."""
    grad = np.zeros(np.shape(x))
    flat, out = np.asarray(x).reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        flat[i] += h
        f_plus = f(x)
        flat[i] -= 2 * h
        f_minus = f(x)
        flat[i] += h
        out[i] = (f_plus - f_minus) / (2 * h)
    return grad


SLIPS = {  # exercise -> {name: answer}: wrong answers learners were seen to write (issue 52)
    "dead_fraction": {"integer division": lambda x, W1, b1: np.sum(_z(x, W1, b1) <= 0) // _z(x, W1, b1).size},
    "recall": {"dot products, silent outputs counted": _recall_dots,
               "hits // len(Y)": _recall_integer_division},
    "top_memories": {"argsort along axis 0": lambda x, W1, b1, k: np.argsort(
        -np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0), axis=0, kind="stable")[..., :k],
        "argsort along axis 0, [:k] and a transpose": lambda x, W1, b1, k: np.argsort(
            -np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0), axis=0, kind="stable")[:k].T},
    "mixes_positions": {"every row compared, its own too": functools.partial(_detector, own_row=True),
                        "range(n - 1): the last token never changed": functools.partial(_detector, skip_last=True)},
    "is_affine": {"a fixed atol = 1e-9": _affine_fixed_atol},
    "kv_ffn": {"b1 = θ - 1": _kv_threshold_minus_one},
    "numerical_gradient": {"x restored by +h, -2h, +h": _numerical_gradient_restored_by_steps},
    "gelu": {"erf(z / 2)": lambda z: 0.5 * np.asarray(z, dtype=float) * (1 + special.erf(np.asarray(z) / 2))},
    "gelu_tanh": {"√(2π)": lambda z: 0.5 * np.asarray(z, dtype=float) * (1 + np.tanh(
        math.sqrt(2 * math.pi) * (np.asarray(z) + 0.044715 * np.asarray(z) ** 3)))},
    "load_balancing_loss": {"bincount without minlength": lambda p, i, n: float(n * np.sum(
        np.bincount(np.ravel(i)) / np.size(i) * np.asarray(p, dtype=float).reshape(-1, n).mean(axis=0)))},
    "xavier_init": {"√(2 / d_model + d_ff)": lambda d_model, d_ff, use_bias=True, seed=None: _draws(
        d_model, d_ff, use_bias, seed, np.sqrt(2 / d_model + d_ff))},
    "ffn_module_forward": {"tanh GELU": lambda x, W1, b1, W2, b2, activation="relu": fh.ffn_forward(
        x, W1, b1, W2, b2, activation="gelu_tanh" if activation == "gelu" else activation)},
    "count_parameters": {"np.int64": lambda W1, b1, W2, b2: np.int64(reference.count_parameters(W1, b1, W2, b2))},
    # Right for gated experts, and three matrices for plain ones too: it fails first where gated=False is passed.
    "moe_param_count": {"three matrices whatever gated says": lambda d_model, d_ff, n_experts, k, gated=True: (
        moe.moe_param_count(d_model, d_ff, n_experts, k, gated=True))},
}


def _draws(d_model, d_ff, use_bias, seed, std):
    rng = np.random.default_rng(seed)
    W1, W2 = rng.normal(0.0, std, size=(d_model, d_ff)), rng.normal(0.0, std, size=(d_ff, d_model))
    return (W1, np.zeros(d_ff), W2, np.zeros(d_model)) if use_bias else (W1, None, W2, None)


# Slips that are catalogued mistakes now: the key each one is told, in the test cell that first fails
# (issue 52, point 4: on main none of these was named).
SLIP_KEYS = {
    ("gelu", "erf(z / 2)"): ("erf_over_two", "test_gelu"),
    ("gelu_tanh", "√(2π)"): ("sqrt_2pi", "test_gelu_tanh"),
    ("load_balancing_loss", "bincount without minlength"): ("bincount_without_minlength", "test_load_balancing_loss"),
    ("xavier_init", "√(2 / d_model + d_ff)"): ("xavier_precedence", "test_xavier_init"),
    ("ffn_module_forward", "tanh GELU"): ("gelu_tanh_for_exact", "test_ffn_module_forward_hidden"),
    ("top_memories", "argsort along axis 0, [:k] and a transpose"): ("sorted_along_first_axis", "test_top_memories"),
    ("recall", "dot products, silent outputs counted"): ("dot_not_cosine", "test_recall"),
    ("kv_ffn", "b1 = θ - 1"): ("threshold_minus_one", "test_kv_ffn"),
}


def wrong_answers(aid, exercise):
    """name -> (the learner's answer, the key it may be told, or None for none)."""
    found = {}
    for mistake in mistakes.CATALOGUE[exercise]:
        answer = mistake_answer(aid, exercise, mistake)
        if answer is not None:
            found[f"mistake {mistake.key}"] = (answer, mistake.key)
    for name, answer in generic_answers(aid, exercise).items():
        found[name] = (named(answer, exercise), None)
    for name, answer in SLIPS.get(exercise, {}).items():
        found[name] = (named(answer, exercise), SLIP_KEYS.get((exercise, name), (None,))[0])
    return found


class Logged:
    """An answer that keeps a copy of every call's arguments and result."""

    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def __call__(self, *args, **kwargs):
        before = copy.deepcopy((args, kwargs))
        result = self.answer(*args, **kwargs)
        with contextlib.suppress(Exception):
            self.calls.append((before, copy.deepcopy(result)))
        return result


def same_output(a, b):
    """Whether two results of an exercise are the same one (to 1e-9, NaN for NaN, exact for labels)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(
            same_output(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list) or isinstance(b, tuple | list):
        return (isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b)
                and all(same_output(x, y) for x, y in zip(a, b, strict=True)))
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a is b or a == b
    try:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.allclose(a.astype(float), b.astype(float), rtol=1e-9, atol=1e-12,
                                                       equal_nan=True))
    except (TypeError, ValueError):
        return False


def _leaves(result, path=()):
    """(path, value) for every array, number or label of a result, through tuples, lists and dicts."""
    if isinstance(result, dict):
        for key in sorted(result, key=str):
            yield from _leaves(result[key], (*path, key))
    elif isinstance(result, tuple | list):
        for i, part in enumerate(result):
            yield from _leaves(part, (*path, i))
    else:
        yield path, result


def made(aid, exercise, calls):
    """The catalogued mistakes the logged answer makes: on every call, wherever (in each part of a result of several)
    the mistake's answer differs from the right one, the logged answer gives the mistake's value."""
    right = right_answer(aid, exercise)
    found = set()
    for mistake in mistakes.CATALOGUE[exercise]:
        answer = mistake_answer(aid, exercise, mistake)
        if answer is None or isinstance(answer, type) or not calls:
            continue
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                differs, agrees = False, True
                for (args, kwargs), result in calls:
                    wrong, good = dict(_leaves(answer(*args, **kwargs))), dict(_leaves(right(*args, **kwargs)))
                    got = dict(_leaves(result))
                    for path, value in wrong.items():
                        if not same_output(value, good.get(path)):
                            differs = True
                            agrees = agrees and path in got and same_output(got[path], value)
                if differs and agrees:
                    found.add(mistake.key)
        except Exception:
            continue
    return found


def false_diagnoses(aid, exercise, name, answer, key):
    """{(seed, test cell): what its failure named} where that is no mistake the answer made."""
    false = {}
    for seed in (None, 20260):
        logged = answer if isinstance(answer, type) else Logged(answer)
        if not isinstance(answer, type):
            functools.update_wrapper(logged, answer)
        checks.set_offering_seed(seed)
        try:
            raised = run_tests(aid, exercise, logged)
        finally:
            checks.set_offering_seed(None)
        told = {gid: checks.named_mistakes(exc) for gid, exc in raised.items() if checks.named_mistakes(exc)}
        if not told:
            continue
        anchors = {key} - {None}
        if not isinstance(answer, type):
            anchors |= made(aid, exercise, logged.calls)
        for gid, keys in told.items():
            if not anchors & set(keys):
                false[seed, gid] = (keys, str(raised[gid])[:600])
    return false


@pytest.mark.parametrize("aid, exercise", EXERCISES, ids=[e for _, e in EXERCISES])
def test_no_answer_is_told_a_mistake_it_did_not_make(aid, exercise):
    false = {}
    for name, (answer, key) in wrong_answers(aid, exercise).items():
        found = false_diagnoses(aid, exercise, name, answer, key)
        if found:
            false[name] = found
    assert false == {}


def _exercise_of(name):
    return next(aid for aid, exercise in EXERCISES if exercise == name)


@pytest.mark.parametrize("exercise, slip", list(SLIP_KEYS), ids=[f"{e}-{s}" for e, s in SLIP_KEYS])
def test_a_mistake_the_course_knows_is_named_where_it_happens(exercise, slip):
    """Issue 52, points 4 and 4b: on main each was told nothing, or another mistake."""
    key, cell = SLIP_KEYS[exercise, slip]
    raised = run_tests(_exercise_of(exercise), exercise, named(SLIPS[exercise][slip], exercise))
    assert cell in raised, sorted(raised)
    assert checks.named_mistakes(raised[cell]) == (key,), str(raised[cell])[:800]


def test_x_changed_by_rounding_alone_is_said_to_be_rounding():
    """09's numerical_gradient that undoes its steps (+h, -2h, +h) did restore every entry; on main it was told
    to, and not why x had changed."""
    raised = run_tests("09_ffn_module", "numerical_gradient",
                       named(_numerical_gradient_restored_by_steps, "numerical_gradient"))
    assert set(raised) == {"test_numerical_gradient", "test_numerical_gradient_hidden"}
    assert all("in its last digits: x + h - 2h + h is not exactly x in floating point (rounding)" in str(e)
               for e in raised.values())


def test_a_detector_that_compares_its_own_row_is_not_told_it_changed_every_token_at_once():
    """05, issue 52 point 4b: it always answers True; on main it was told perturbs_all_at_once."""
    raised = run_tests("05_position_wise", "mixes_positions",
                       named(SLIPS["mixes_positions"]["every row compared, its own too"], "mixes_positions"))
    assert set(raised) == {"test_mixes_positions", "test_mixes_positions_hidden"}
    assert all(checks.named_mistakes(e) == () for e in raised.values())


# Wrong answers that kept their points on main (issue 52, point 4c), and the test cells that now take them.
KEPT_POINTS = {
    ("mixes_positions", "range(n - 1): the last token never changed"): {"test_mixes_positions_hidden"},
    ("is_affine", "a fixed atol = 1e-9"): {"test_is_affine_hidden"},
    ("recall", "hits // len(Y)"): {"test_recall", "test_recall_hidden"},
    ("kv_ffn", "b1 = θ - 1"): {"test_kv_ffn", "test_kv_ffn_hidden"},
}


@pytest.mark.parametrize("exercise, slip", list(KEPT_POINTS), ids=[f"{e}-{s}" for e, s in KEPT_POINTS])
def test_a_wrong_answer_that_kept_its_points_loses_them(exercise, slip):
    raised = run_tests(_exercise_of(exercise), exercise, named(SLIPS[exercise][slip], exercise))
    assert set(raised) == KEPT_POINTS[exercise, slip], {g: str(e)[:300] for g, e in raised.items()}
    if exercise == "kv_ffn":  # its failure names the threshold it was built for, and the mistake
        assert "b1 (threshold θ = 0.2)" in str(raised["test_kv_ffn"])


# ---------------------------------------------------------------- every call a message shows reads as Python (point 5)


def _shown_calls(message, names):
    """Each `name(...)` (a name of `names`, with its balanced parentheses) that `message` shows."""
    for name in names:
        start = message.find(f"{name}(")
        while start >= 0:
            before = message[start - 1] if start else " "
            depth, end = 0, start + len(name)
            for end in range(start + len(name), len(message)):
                depth += {"(": 1, ")": -1}.get(message[end], 0)
                if depth == 0:
                    break
            if not (before.isalnum() or before in "_."):
                yield message[start:end + 1]
            start = message.find(f"{name}(", start + 1)


def _binds(text, signature):
    """Whether `text` parses as a call that gives `signature` every argument it needs (or `...` for them all)."""
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(call, ast.Call):
        return False
    if [ast.dump(a) for a in call.args] == [ast.dump(ast.Constant(...))] and not call.keywords:
        return True
    try:
        signature.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords})
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("aid, exercise", EXERCISES, ids=[e for _, e in EXERCISES])
def test_every_call_a_failure_shows_is_one_python_accepts_with_every_argument(aid, exercise):
    """On main 11's check said "moe_param_count(768, 3072, 128), gated=False): ...": unbalanced, and k left out."""
    right = right_answer(aid, exercise)
    signature = inspect.signature(right.__init__ if isinstance(right, type) else right)
    if isinstance(right, type):
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
    seen, wrong = 0, {}
    for name, (answer, _) in wrong_answers(aid, exercise).items():
        for gid, exc in run_tests(aid, exercise, answer).items():
            for text in _shown_calls(str(exc), [exercise]):
                seen += 1
                if not _binds(text, signature):
                    wrong[text] = (name, gid)
    assert wrong == {}


def test_the_calls_a_message_shows_are_found_and_judged():
    message = "moe_param_count(768, 3072, 128), gated=False): total: expected 604078080; ffn_forward(...) differs"
    shown = list(_shown_calls(message, ["moe_param_count", "ffn_forward"]))
    assert shown == ["moe_param_count(768, 3072, 128)", "ffn_forward(...)"]
    signature = inspect.signature(lambda d_model, d_ff, n_experts, k, gated=True: None)
    assert not _binds(shown[0], signature) and _binds("moe_param_count(768, 3072, 128, 1, gated=False)", signature)
    assert _binds("f(...)", signature) and not _binds("moe_param_count(768, 3072, 128), gated=False)", signature)


# ---------------------------------------------------------------- what the text says of types is what the checks do


def _description(aid, exercise):
    """The markdown between the cell before `exercise`'s (the previous exercise's last test, or an answer) and it."""
    cells = nbtools.source(aid).cells
    at = next(i for i, c in enumerate(cells) if nbtools.grade_id(c) == exercise)
    start = max((i for i, c in enumerate(cells[:at]) if nbtools.is_test(c) or nbtools.is_answer(c)), default=-1)
    return "\n".join(c.source for c in cells[start + 1:at] if c.cell_type == "markdown")


def _numpy_ints(result):
    """`result` with every Python int in it a numpy int64."""
    if isinstance(result, bool):
        return result
    if isinstance(result, int):
        return np.int64(result)
    if isinstance(result, dict):
        return {k: _numpy_ints(v) for k, v in result.items()}
    if isinstance(result, tuple | list):
        return type(result)(map(_numpy_ints, result))
    return result


def _asks_for_an_int(text):
    """Whether a sentence of `text` asks to return an `int` (or a dict or pair of them)."""
    return any(re.search(r"\b[Rr]eturn\b", sentence) and "`int`" in sentence for sentence in re.split(r"\.\s", text))


SAYS_INT = [(aid, e) for aid, e in EXERCISES if _asks_for_an_int(_description(aid, e))]


@pytest.mark.parametrize("aid, exercise", SAYS_INT, ids=[e for _, e in SAYS_INT])
def test_an_exercise_that_asks_for_an_int_says_whether_a_numpy_integer_passes(aid, exercise):
    """On main 09 said "Return a Python `int`", and count_parameters returning np.int64 got full marks."""
    right = right_answer(aid, exercise)
    raised = run_tests(aid, exercise, named(lambda *a, **k: _numpy_ints(right(*a, **k)), exercise))
    says_numpy_passes = "np.int64" in _description(aid, exercise)
    assert (raised == {}) == says_numpy_passes, (says_numpy_passes, {g: str(e)[:200] for g, e in raised.items()})


def test_the_exercises_that_ask_for_an_int_are_found():
    assert {e for _, e in SAYS_INT} >= {"ffn_param_count", "param_bytes", "count_parameters", "moe_param_count"}


def test_a_crash_on_w2s_single_token_says_it_was_that_token():
    """Issue 52, point 7b: 05's check said only "matmul: Input operand 0 does not have enough dimensions"."""
    def rows_only(X, W1, b1, W2, b2):
        return np.stack([np.maximum(row @ W1 + b1, 0) @ W2 + b2 for row in np.asarray(X)])  # a 1-D X has no rows

    raised = run_tests("05_position_wise", "ffn_per_token", named(rows_only, "ffn_per_token"))
    message = str(raised["test_ffn_per_token"])
    assert message.startswith("Case: W-2's single token, X of shape (3,)\nffn_per_token raised "), message


# Mistakes a test cell cannot name when the catalogue's own computation is the answer.
NOT_NAMED = {
    ("gelu", "erf_cancellation"): "it loses ~1e-23 at z = -10, inside the checks' tolerance (04 says so)",
    ("mixes_positions", "perturbs_all_at_once"): "it answers True for every function tried: one verdict throughout",
    # Computations that raise where their mistake does not apply (another activation, a non-square W1, one input):
    # as an answer they crash there. SLIP_KEYS and tests/submissions write them as a learner would.
    ("ffn_module_forward", "gelu_tanh_for_exact"): "raises for ReLU", ("FeedForwardNetwork", "gelu_tanh_for_exact"):
    "raises for ReLU", ("FeedForwardNetwork", "relu_mask_at_zero"): "raises for GELU",
    ("FeedForwardNetwork", "gelu_grad_missing_density"): "raises for ReLU",
    ("ffn_module_backward", "x_grad_untransposed"): "dz @ W1 fails for W-2's non-square W1",
    ("FeedForwardNetwork", "x_grad_untransposed"): "dz @ W1 fails for a non-square W1",
    ("top_memories", "sorted_along_first_axis"): "raises for one input",
}


@pytest.mark.parametrize("aid, exercise", EXERCISES, ids=[e for _, e in EXERCISES])
def test_every_catalogued_mistake_is_still_named_where_it_happens(aid, exercise):
    """The rules that keep a false diagnosis out keep the true ones in: each mistake, as its exercise's answer, is
    named by some test cell of the exercise (the grading-variant suite names them as learners write them)."""
    missing = []
    for mistake in mistakes.CATALOGUE[exercise]:
        answer = mistake_answer(aid, exercise, mistake)
        if answer is None or (exercise, mistake.key) in NOT_NAMED:
            continue
        raised = run_tests(aid, exercise, answer)
        if not any(mistake.key in checks.named_mistakes(e) for e in raised.values()):
            missing.append(mistake.key)
    assert missing == []
