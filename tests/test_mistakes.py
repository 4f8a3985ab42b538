"""The mistakes catalogue: one entry per graded exercise, one explanation per key; each mistake is
recognised when a learner makes it, and never otherwise.

For the core exercises the wrong functions below are written the way a learner would
write them (not by calling the catalogue); each must fail `checks.check` with the
catalogue's explanation of exactly its mistake. Two different correct
implementations must pass, and on the chosen inputs no catalogued mistake may give
the right answer (so the inputs tell every mistake apart from the truth). The other
notebooks' mistakes are tested beside their references (test_module, test_memory,
test_moe) and by the wrong answers of tests/submissions.
"""

import functools
import math
import warnings
from collections import defaultdict
from dataclasses import dataclass, field

import nbtools
import numpy as np
import pytest
from scipy import special, stats

import ffn_helpers as fh
from ffn_helpers import checks, mistakes


@dataclass
class Exercise:
    name: str  # the exercise id, a key of mistakes.CATALOGUE
    reference: object  # the reference implementation, gives the expected value
    args: tuple  # inputs chosen so that every mistake shows
    wrong: dict  # mistake key -> a learner's wrong function
    correct: list  # two different right functions
    tolerances: dict = field(default_factory=dict)

    @property
    def catalogue(self):
        return mistakes.for_exercise(self.name)


# --- ffn_forward (ReLU) ----------------------------------------------------------------------

def ffn_args():
    rng = np.random.default_rng(42)
    x = rng.standard_normal((4, 3))
    W1, b1 = rng.standard_normal((3, 5)), rng.standard_normal(5)
    W2, b2 = rng.standard_normal((5, 3)), rng.standard_normal(3)
    return x, W1, b1, W2, b2


def ffn_ok_matrix(x, W1, b1, W2, b2):
    return np.maximum(x @ W1 + b1, 0) @ W2 + b2


def ffn_ok_loop(x, W1, b1, W2, b2):
    out = []
    for token in np.atleast_2d(x):
        h = [max(0.0, sum(token[i] * W1[i, j] for i in range(len(token))) + b1[j]) for j in range(W1.shape[1])]
        out.append([sum(h[j] * W2[j, k] for j in range(len(h))) + b2[k] for k in range(W2.shape[1])])
    return np.array(out).reshape(np.shape(x))


FFN_WRONG = {
    "missing_b1": lambda x, W1, b1, W2, b2: np.maximum(x @ W1, 0) @ W2 + b2,
    "missing_b2": lambda x, W1, b1, W2, b2: np.maximum(x @ W1 + b1, 0) @ W2,
    "no_activation": lambda x, W1, b1, W2, b2: (x @ W1 + b1) @ W2 + b2,
    "activation_on_output": lambda x, W1, b1, W2, b2: np.maximum(np.maximum(x @ W1 + b1, 0) @ W2 + b2, 0),
    "bias_after_activation": lambda x, W1, b1, W2, b2: (np.maximum(x @ W1, 0) + b1) @ W2 + b2,
    "activation_after_W2_only": lambda x, W1, b1, W2, b2: np.maximum((x @ W1 + b1) @ W2 + b2, 0),
}


# --- linear_torch: nn.Linear semantics, weight (out_features, in_features) --------------------

def linear_args():
    rng = np.random.default_rng(7)
    return rng.standard_normal((4, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3)  # square: both layouts run


def linear_reference(x, weight, bias):
    return x @ weight.T + bias


LINEAR_WRONG = {
    "torch_layout": lambda x, weight, bias: x @ weight + bias,
    "missing_bias": lambda x, weight, bias: x @ weight.T,
}


def linear_ok_einsum(x, weight, bias):
    return np.einsum("...i,oi->...o", x, weight) + bias


def linear_ok_transpose_first(x, weight, bias):
    W = np.transpose(weight)
    return np.dot(x, W) + bias


# --- gelu (exact) ----------------------------------------------------------------------------------

GELU_Z = np.array([-10.0, -3.0, -0.5, 0.0, 0.5, 2.0, 4.0])

GELU_WRONG = {
    "gelu_tanh_for_exact": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3))),
    "gelu_sigmoid_approx": lambda z: z / (1 + np.exp(-1.702 * z)),
    "silu_for_gelu": lambda z: z / (1 + np.exp(-z)),
    "sigmoid_for_gelu": lambda z: 1 / (1 + np.exp(-z)),
    "erf_cancellation": lambda z: np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in z]),
    "erf_without_sqrt2": lambda z: np.array([0.5 * v * (1 + math.erf(v)) for v in z]),
    "cdf_for_gelu": lambda z: stats.norm.cdf(z),
    "erf_over_two": lambda z: np.array([0.5 * v * (1 + math.erf(v / 2)) for v in z]),
}


def gelu_ok_norm_cdf(z):
    return z * stats.norm.cdf(z)


def gelu_ok_erfc(z):
    return 0.5 * z * special.erfc(-z / np.sqrt(2))


# --- silu ------------------------------------------------------------------------------------------

SILU_Z = np.array([-8.0, -1.0, -0.25, 0.0, 0.75, 3.0])

SILU_WRONG = {
    "sigmoid_for_silu": lambda z: 1 / (1 + np.exp(-z)),
    "gelu_for_silu": lambda z: z * stats.norm.cdf(z),
    "sigmoid_sign": lambda z: z / (1 + np.exp(z)),
}


def silu_ok_division(z):
    return z / (1 + np.exp(-z))


def silu_ok_expit(z):
    return z * special.expit(z)


# --- layer_norm(x, gamma, beta, eps) -----------------------------------------------------------------

def layer_norm_args():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)) * np.array([[1.0], [5.0], [0.01]]) + np.array([[0.0], [2.0], [-1.0]])
    gamma, beta = 1 + rng.random(4), rng.standard_normal(4)
    return x, gamma, beta, 1e-4  # the third row's variance (~1e-4) makes eps matter, and 1e-4 is not the default


def _ln_normed(x, eps, axis=-1, ddof=0, eps_outside=False):
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    return (x - mu) / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))


LAYER_NORM_WRONG = {
    "unbiased_variance": lambda x, gamma, beta, eps: _ln_normed(x, eps, ddof=1) * gamma + beta,
    "eps_outside_sqrt": lambda x, gamma, beta, eps: (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True)
                                                                                      + eps) * gamma + beta,
    "wrong_axis": lambda x, gamma, beta, eps: (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) * gamma + beta,
    "no_eps": lambda x, gamma, beta, eps: (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) * gamma + beta,
    "ignored_gamma_beta": lambda x, gamma, beta, eps: _ln_normed(x, eps),
    "ignored_gamma": lambda x, gamma, beta, eps: _ln_normed(x, eps) + beta,
    "ignored_beta": lambda x, gamma, beta, eps: _ln_normed(x, eps) * gamma,
    "ignored_eps": lambda x, gamma, beta, eps: _ln_normed(x, 1e-5) * gamma + beta,
    "missing_sqrt": lambda x, gamma, beta, eps: (x - x.mean(-1, keepdims=True)) / (x.var(-1, keepdims=True) + eps)
    * gamma + beta,
    "not_centred": lambda x, gamma, beta, eps: x / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta,
    "rms_norm": lambda x, gamma, beta, eps: x / np.sqrt((x**2).mean(-1, keepdims=True) + eps) * gamma + beta,
}


def layer_norm_ok_numpy(x, gamma=None, beta=None, eps=1e-5):
    out = _ln_normed(x, eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


def layer_norm_ok_rows(x, gamma=None, beta=None, eps=1e-5):
    out = np.empty_like(x)
    d = x.shape[-1]
    for i, row in enumerate(x.reshape(-1, d)):
        mean = sum(row) / d
        var = sum((v - mean) ** 2 for v in row) / d
        out.reshape(-1, d)[i] = [(v - mean) / math.sqrt(var + eps) for v in row]
    g = np.ones(d) if gamma is None else gamma
    b = np.zeros(d) if beta is None else beta
    return out * g + b


# --- post_ln / pre_ln with a ReLU FFN as the sublayer -------------------------------------------------

def _sublayer():
    rng = np.random.default_rng(11)
    W1, b1, W2, b2 = rng.standard_normal((3, 6)), rng.standard_normal(6), rng.standard_normal((6, 3)), rng.random(3)

    def ffn(x):
        return fh.ffn_forward(x, W1, b1, W2, b2)

    return ffn


def wrapper_args():
    x = np.array([[4.0, 1.0, -2.0], [0.5, 3.0, 7.0]])  # far from normalised: LN(x) differs a lot from x
    return x, _sublayer(), 1e-3  # not LayerNorm's default eps, so that a block that drops eps shows


ln = fh.layer_norm  # a learner's own, correct, layer_norm from the earlier exercise

POST_LN_WRONG = {
    "normalised_before_add": lambda x, sublayer, eps: ln(x, eps=eps) + sublayer(x),
    "pre_ln_for_post_ln": lambda x, sublayer, eps: x + sublayer(ln(x, eps=eps)),
    "missing_residual": lambda x, sublayer, eps: ln(sublayer(x), eps=eps),
    "eps_not_passed": lambda x, sublayer, eps: ln(x + sublayer(x)),
    "missing_layer_norm": lambda x, sublayer, eps: x + sublayer(x),
}


def post_ln_ok(x, sublayer, eps=1e-5):
    return ln(x + sublayer(x), eps=eps)


def post_ln_ok_by_hand(x, sublayer, eps=1e-5):
    r = x + sublayer(x)
    centred = r - r.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)


PRE_LN_WRONG = {
    "post_ln_for_pre_ln": lambda x, sublayer, eps: ln(x + sublayer(x), eps=eps),
    "normalised_residual": lambda x, sublayer, eps: (lambda n: n + sublayer(n))(ln(x, eps=eps)),
    "missing_residual": lambda x, sublayer, eps: sublayer(ln(x, eps=eps)),
    "eps_not_passed": lambda x, sublayer, eps: x + sublayer(ln(x)),
    "missing_layer_norm": lambda x, sublayer, eps: x + sublayer(x),
}


def pre_ln_ok(x, sublayer, eps=1e-5):
    return x + sublayer(ln(x, eps=eps))


def pre_ln_ok_by_hand(x, sublayer, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    normed = centred / np.sqrt(centred.var(axis=-1, keepdims=True) + eps)
    y = sublayer(normed)
    return np.add(y, x)


EXERCISES = {ex.name: ex for ex in (
    Exercise("ffn_forward", fh.ffn_forward, ffn_args(), FFN_WRONG, [ffn_ok_matrix, ffn_ok_loop]),
    Exercise("linear_torch", linear_reference, linear_args(), LINEAR_WRONG,
             [linear_ok_einsum, linear_ok_transpose_first]),
    # The erf cancellation loses only ~1e-23 at z = -10: visible with a relative tolerance alone.
    Exercise("gelu", fh.gelu, (GELU_Z,), GELU_WRONG, [gelu_ok_norm_cdf, gelu_ok_erfc], {"atol": 0.0}),
    Exercise("silu", fh.silu, (SILU_Z,), SILU_WRONG, [silu_ok_division, silu_ok_expit]),
    Exercise("layer_norm", fh.layer_norm, layer_norm_args(), LAYER_NORM_WRONG,
             [layer_norm_ok_numpy, layer_norm_ok_rows]),
    Exercise("post_ln_block", fh.post_ln, wrapper_args(), POST_LN_WRONG, [post_ln_ok, post_ln_ok_by_hand]),
    Exercise("pre_ln_block", fh.pre_ln, wrapper_args(), PRE_LN_WRONG, [pre_ln_ok, pre_ln_ok_by_hand]),
)}

WRONG_CASES = [(name, key) for name, ex in EXERCISES.items() for key in ex.wrong]
CORRECT_CASES = [(name, i) for name, ex in EXERCISES.items() for i in range(len(ex.correct))]


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def graded_exercises():
    """Every graded exercise id: the answer cells' function names in the notebooks' sources."""
    return {gid for aid in nbtools.graded_assignments() for gid in nbtools.answer_ids(nbtools.source(aid))}


def test_the_catalogue_has_one_entry_per_graded_exercise():
    exercises = graded_exercises()
    assert len(exercises) >= 40  # every notebook's exercises, not an empty reading of the sources
    assert set(mistakes.CATALOGUE) == exercises  # an exercise without one has an empty entry, ()
    assert mistakes.for_exercise("params_by_part") == ()


def test_catalogue_entries_are_well_formed():
    for name, group in mistakes.CATALOGUE.items():
        assert isinstance(group, tuple), name
        for m in group:
            assert isinstance(m, mistakes.Mistake) and m.key.isidentifier() and callable(m.compute)
            assert m.explanation.strip() and "\n" not in m.explanation
        parts = {m.part for m in group}
        assert None not in parts or parts == {None}, f"{name}: give every mistake a part, or none"
        for part in parts:
            keys = [m.key for m in group if m.part == part]
            assert len(keys) == len(set(keys)), f"duplicate key in {name}, part {part}"


def test_a_key_has_one_explanation_in_the_whole_catalogue():
    explanations = defaultdict(set)
    for group in mistakes.CATALOGUE.values():
        for m in group:
            explanations[m.key].add(m.explanation)
    assert {key: texts for key, texts in explanations.items() if len(texts) > 1} == {}
    # a key that recurs is one mistake: each exercise computes it on its own arguments
    assert len(mistakes.by_key("missing_residual")) == 2  # post-LN and pre-LN
    assert {m.explanation for m in mistakes.by_key("missing_b1")} == explanations["missing_b1"]
    assert mistakes.by_key("no_such_mistake") == ()


def test_for_exercise_names_the_exercise_and_part_it_expected():
    assert [m.key for m in mistakes.for_exercise("kv_ffn", "b1")] == ["threshold_sign", "threshold_minus_one"]
    assert mistakes.for_exercise("layer_norm") == mistakes.CATALOGUE["layer_norm"]
    with pytest.raises(ValueError, match=r"no exercise 'ffn' in the mistakes catalogue; it has .*ffn_forward"):
        mistakes.for_exercise("ffn")
    with pytest.raises(ValueError, match=r"kv_ffn's mistakes come in parts \('W1', 'W2', 'b1'\): name one, got None"):
        mistakes.for_exercise("kv_ffn")
    with pytest.raises(ValueError, match=r"gelu's mistakes have no parts: .* got part='z'"):
        mistakes.for_exercise("gelu", "z")


def test_every_core_catalogue_entry_has_a_learner_style_wrong_function():
    # The core exercises; the other notebooks' mistakes are tested with their references (see the docstring).
    for name, ex in EXERCISES.items():
        assert set(ex.wrong) == {m.key for m in ex.catalogue}, name


def test_the_brief_list_of_misconceptions_is_in_the_catalogue():
    listed = {"missing_b1", "missing_b2", "no_activation", "activation_on_output", "bias_after_activation",
              "torch_layout", "missing_bias", "gelu_tanh_for_exact", "gelu_sigmoid_approx", "silu_for_gelu",
              "sigmoid_for_gelu", "erf_cancellation", "unbiased_variance", "eps_outside_sqrt", "wrong_axis",
              "no_eps", "ignored_gamma_beta", "pre_ln_for_post_ln", "post_ln_for_pre_ln", "missing_residual",
              "normalised_before_add"}
    assert listed <= {m.key for group in mistakes.CATALOGUE.values() for m in group}


@pytest.mark.parametrize("name, key", WRONG_CASES, ids=[f"{n}-{k}" for n, k in WRONG_CASES])
def test_a_learner_mistake_fails_the_check_and_is_named(name, key):
    ex = EXERCISES[name]
    expected = ex.reference(*ex.args)
    wrong = ex.wrong[key]
    with pytest.raises(AssertionError) as info:
        checks.check(wrong, ex.args, expected, name=name, mistakes=ex.catalogue, **ex.tolerances)
    message = str(info.value)
    explanation = next(m.explanation for m in ex.catalogue if m.key == key)
    assert f"\nLikely mistake ({key}): {explanation}" in message
    assert message.count("Likely mistake") == 1, message  # the inputs single out this mistake
    found = checks.diagnose(wrong(*ex.args), ex.catalogue, ex.args, expected=expected, **ex.tolerances)
    assert [m.key for m in found] == [key]


@pytest.mark.parametrize("name, i", CORRECT_CASES, ids=[f"{n}-{i}" for n, i in CORRECT_CASES])
def test_a_correct_function_passes_and_no_mistake_gives_the_right_answer(name, i):
    ex = EXERCISES[name]
    expected = ex.reference(*ex.args)
    right = ex.correct[i]
    out = checks.check(right, ex.args, expected, name=name, mistakes=ex.catalogue, **ex.tolerances)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=0)
    # Without `expected`, diagnose lists every mistake that would give this very result:
    # none may, or a right answer could not be told from that mistake.
    assert checks.diagnose(out, ex.catalogue, ex.args, **ex.tolerances) == []


def test_gelu_erf_cancellation_passes_the_default_absolute_tolerance():
    # Why the gelu exercise checks with atol=0: the loss is ~1e-23, far below atol = 1e-12.
    wrong = GELU_WRONG["erf_cancellation"]
    checks.check(wrong, (GELU_Z,), fh.gelu(GELU_Z))
    with pytest.raises(AssertionError, match=r"Likely mistake \(erf_cancellation\)"):
        checks.check(wrong, (GELU_Z,), fh.gelu(GELU_Z), atol=0, mistakes=mistakes.for_exercise("gelu"))


def test_a_mistake_that_makes_no_difference_on_these_inputs_is_not_named():
    x, W1, b1, W2, b2 = ffn_args()
    zero_b1 = np.zeros_like(b1)
    out = FFN_WRONG["missing_b1"](x, W1, zero_b1, W2, b2)
    checks.check(FFN_WRONG["missing_b1"], (x, W1, zero_b1, W2, b2), fh.ffn_forward(x, W1, zero_b1, W2, b2),
                 mistakes=mistakes.for_exercise("ffn_forward"))
    assert checks.diagnose(out, mistakes.for_exercise("ffn_forward"), (x, W1, zero_b1, W2, b2),
                           expected=fh.ffn_forward(x, W1, zero_b1, W2, b2)) == []


def test_torch_layout_with_a_non_square_weight_crashes_with_a_named_exception():
    rng = np.random.default_rng(0)
    x, weight, bias = rng.standard_normal((2, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5)
    with pytest.raises(AssertionError, match=r"^linear_torch raised ValueError: matmul"):
        checks.check(LINEAR_WRONG["torch_layout"], (x, weight, bias), linear_reference(x, weight, bias),
                     name="linear_torch", mistakes=mistakes.for_exercise("linear_torch"))


# --- the activation after W2 only, against right answers written every other way ------------------
# σ((x W1 + b1) W2 + b2) is one catalogue entry shared by 02's ffn_forward, 05's ffn_per_token and
# 09's ffn_module_forward. The attack: the very test cells the grader runs (hidden ones included, with the
# published inputs and with offering seeds), each given right answers written differently. None may fail
# or be told of this mistake, and the mistake itself, written three ways, must be named alone.

AFTER_W2 = "activation_after_W2_only"
OFFERING_SEEDS = (None, 1, 20260, 4_000_000_007)
FFN_EXERCISES = {"ffn_forward": "02_forward_pass", "ffn_per_token": "05_position_wise",
                 "ffn_module_forward": "09_ffn_module"}

# The body of a right FFN, written differently each time; `sigma` is ReLU (02, 05) or the one named (09).
HONEST_BODIES = {
    "maximum": "    h = sigma(np.asarray(x, float) @ W1 + b1)\n    return h @ W2 + b2\n",
    "einsum-where": "    z = np.einsum('...i,ij->...j', np.asarray(x, float), W1) + b1\n"
                    "    h = np.where(z > 0, z, 0.0) if relu else sigma(z)\n"
                    "    return np.einsum('...j,jk->...k', h, W2) + b2\n",
    "transposes": "    x = np.asarray(x, float)\n"
                  "    cols = x.reshape(-1, x.shape[-1]).T\n"
                  "    h = sigma(W1.T @ cols + np.reshape(b1, (-1, 1)))\n"
                  "    return (W2.T @ h + np.reshape(b2, (-1, 1))).T.reshape(x.shape[:-1] + (W2.shape[1],))\n",
    "bias-first-clip": "    z = b1 + np.dot(np.asarray(x, float), W1)\n"
                       "    h = np.clip(z, 0.0, None) if relu else sigma(z)\n"
                       "    return b2 + np.dot(h, W2)\n",
    "mask-tensordot": "    z = np.matmul(np.asarray(x, float), W1) + b1\n"
                      "    h = z * (z > 0) if relu else sigma(z)\n"
                      "    return np.tensordot(h, W2, axes=1) + b2\n",
    "half-abs": "    z = np.asarray(x, float) @ W1 + b1\n"
                "    h = (z + np.abs(z)) / 2 if relu else sigma(z)\n"
                "    return h @ W2 + b2\n",
    "token-loop": "    x = np.asarray(x, float)\n"
                  "    out = [sigma(row @ W1 + b1) @ W2 + b2 for row in x.reshape(-1, x.shape[-1])]\n"
                  "    return np.array(out).reshape(x.shape[:-1] + (W2.shape[1],))\n",
}

# The mistake, written the ways a learner would.
AFTER_W2_BODIES = {
    "maximum": "    return sigma((np.asarray(x, float) @ W1 + b1) @ W2 + b2)\n",
    "where-two-steps": "    y = np.asarray(x, float) @ W1 + b1\n    y = y @ W2 + b2\n"
                       "    return np.where(y > 0, y, 0.0) if relu else sigma(y)\n",
    "einsum": "    z = np.einsum('...i,ij->...j', np.asarray(x, float), W1) + b1\n"
              "    return sigma(np.einsum('...j,jk->...k', z, W2) + b2)\n",
}

_SIGMAS = ("import numpy as np\nfrom scipy import special\n\n"
           "SIGMA = {'relu': lambda z: np.maximum(z, 0.0), 'gelu': lambda z: z * special.ndtr(z),\n"
           "         'silu': lambda z: z * special.expit(z)}\n\n\n")


def ffn_answer(exercise, body):
    """The answer cell of `exercise` with `body`; 09's takes σ by name and biases that may be None."""
    if exercise == "ffn_module_forward":
        head = ("def ffn_module_forward(x, W1, b1, W2, b2, activation='relu'):\n"
                "    sigma, relu = SIGMA[activation], activation == 'relu'\n"
                "    b1 = 0.0 if b1 is None else b1\n    b2 = 0.0 if b2 is None else b2\n")
    else:
        head = f"def {exercise}(x, W1, b1, W2, b2):\n    sigma, relu = SIGMA['relu'], True\n"
    return _SIGMAS + head + body


def _exercise_span(aid, exercise):
    """The cells from `exercise`'s answer cell to its last test cell."""
    nb = nbtools.solution(aid)
    tests = [gid for gid in nbtools.test_ids(nb) if (nbtools.exercise_of(gid, nbtools.answer_ids(nb)) or ("",))[0]
             == exercise]
    return slice(nbtools.cell_index(aid, exercise), nbtools.cell_index(aid, tests[-1]) + 1), tests


@functools.cache
def _namespace_before(aid, exercise):
    """The notebook's namespace after every cell before `exercise`'s answer cell (run once per exercise)."""
    namespace = {"__name__": "__main__"}
    raised = nbtools.run_in_process(aid, {}, cells=slice(0, nbtools.cell_index(aid, exercise)), namespace=namespace)
    assert raised == {}, raised
    return namespace


def run_exercise_tests(exercise, source, seed):
    """`exercise`'s test cells run on the answer `source`, the hidden inputs drawn with offering `seed`:
    (its test cells, test cell -> the exception it raised)."""
    aid = FFN_EXERCISES[exercise]
    span, tests = _exercise_span(aid, exercise)
    namespace = dict(_namespace_before(aid, exercise))
    checks.set_offering_seed(seed)
    try:
        raised = nbtools.run_in_process(aid, {exercise: source}, cells=span, namespace=namespace)
    finally:
        checks.set_offering_seed(None)
    return tests, raised


def test_the_activation_after_w2_is_one_catalogue_entry_shared_by_every_ffn_forward_pass():
    entries = mistakes.by_key(AFTER_W2)
    assert len(entries) == 1  # one computation, reused: 02, 05 and 09 share FFN_FORWARD
    for exercise in FFN_EXERCISES:
        assert entries[0] in mistakes.for_exercise(exercise), exercise
    x, W1, b1, W2, b2 = ffn_args()
    for activation in ("relu", "gelu", "silu"):  # σ is the exercise's own, applied to the whole output
        y = fh.ffn_forward(x, W1, None, W2, None, activation="identity") + b1 @ W2 + b2
        wrong = entries[0].compute(x, W1, b1, W2, b2, activation)
        np.testing.assert_allclose(wrong, fh.get_activation(activation)(y), rtol=1e-12, atol=0)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_the_activation_after_w2_is_named_alone_for_every_sigma(activation):
    """09 checks GELU and SiLU too: σ after W2 only is told apart from the right answer and from every other
    catalogued mistake of ffn_module_forward."""
    args = (*ffn_args(), activation)
    sigma = fh.get_activation(activation)

    def learner(x, W1, b1, W2, b2, activation):
        return sigma((x @ W1 + b1) @ W2 + b2)

    catalogue = mistakes.for_exercise("ffn_module_forward")
    with pytest.raises(AssertionError) as info:
        checks.check(learner, args, fh.ffn_forward(*args[:5], activation=activation), mistakes=catalogue)
    assert checks.named_mistakes(info.value) == (AFTER_W2,)
    assert str(info.value).count("Likely mistake") == 1


HONEST_CASES = [(ex, body) for ex in FFN_EXERCISES for body in HONEST_BODIES]


@pytest.mark.parametrize("exercise, body", HONEST_CASES, ids=[f"{e}-{b}" for e, b in HONEST_CASES])
def test_no_right_answer_is_told_it_applied_the_activation_after_w2(exercise, body):
    source = ffn_answer(exercise, HONEST_BODIES[body])
    for seed in OFFERING_SEEDS:
        tests, raised = run_exercise_tests(exercise, source, seed)
        assert len(tests) == 2 and raised == {}, (seed, {g: str(e)[:500] for g, e in raised.items()})


WRONG_AFTER_W2 = [(ex, body) for ex in FFN_EXERCISES for body in AFTER_W2_BODIES]


@pytest.mark.parametrize("exercise, body", WRONG_AFTER_W2, ids=[f"{e}-{b}" for e, b in WRONG_AFTER_W2])
def test_the_activation_after_w2_only_fails_every_test_cell_and_is_named_alone(exercise, body):
    """Every test cell of 02, 05 and 09 (05's visible one through W-2's token: W-4's give no negative output,
    so σ after W2 gives their right answer)."""
    source = ffn_answer(exercise, AFTER_W2_BODIES[body])
    for seed in OFFERING_SEEDS:
        tests, raised = run_exercise_tests(exercise, source, seed)
        assert set(tests) <= set(raised), (seed, sorted(raised))
        for gid, exc in raised.items():  # the first failed check of each cell: this mistake, and it alone
            assert checks.named_mistakes(exc) == (AFTER_W2,), (seed, gid, str(exc)[:800])
            assert str(exc).count("Likely mistake") == 1, (seed, gid)
