"""Bad input to any reference function: a TypeError or ValueError saying what was expected and what came."""

import numpy as np
import pytest

import ffn_helpers as fh
from ffn_helpers.activations import ACTIVATIONS

ONE_TOKEN = np.ones(2)
W1, b1, W2, b2 = np.ones((2, 3)), np.ones(3), np.ones((3, 2)), np.ones(2)

NON_NUMERIC = [
    ("text", "abc", r"must hold real numbers, got dtype <U3 \(e\.g\. \['abc'\]\)"),
    ("numbers as text", ["1", "2"], r"must hold real numbers, got dtype <U1"),
    ("bytes", b"12", r"must hold real numbers, got dtype \|S2"),
    ("None", None, r"must be a number or an array of numbers, not None"),
    ("None inside", [1.0, None], r"must hold real numbers, but it contains None of type NoneType"),
    ("dict", {"a": 1}, r"must hold real numbers, but it contains \{'a': 1\} of type dict"),
    ("ragged", [[1.0, 2.0], [3.0]], r"must be an array of numbers; could not convert it: .*inhomogeneous"),
    ("complex", [1 + 2j], r"must hold real numbers, got dtype complex128"),
]


@pytest.mark.parametrize("name", list(ACTIVATIONS) + ["relu_grad"])
@pytest.mark.parametrize("label, bad, pattern", NON_NUMERIC, ids=[c[0] for c in NON_NUMERIC])
def test_activations_reject_non_numbers_naming_z(name, label, bad, pattern):
    f = fh.relu_grad if name == "relu_grad" else ACTIVATIONS[name]
    with pytest.raises(TypeError, match=r"^z " + pattern):
        f(bad)


NOT_NONE = [c for c in NON_NUMERIC if c[0] != "None"]  # None is a valid bias: tested below


@pytest.mark.parametrize("position, param", list(enumerate(["x", "W1", "b1", "W2", "b2"])))
@pytest.mark.parametrize("label, bad, pattern", NOT_NONE, ids=[c[0] for c in NOT_NONE])
def test_ffn_rejects_non_numbers_naming_the_parameter(position, param, label, bad, pattern):
    args = [ONE_TOKEN, W1, b1, W2, b2]
    args[position] = bad
    for f in (fh.ffn_forward, fh.ffn_trace):
        with pytest.raises(TypeError, match=rf"^{param} " + pattern):
            f(*args)


def test_ffn_bias_none_is_allowed_but_x_and_weights_none_are_not():
    fh.ffn_forward(ONE_TOKEN, W1, None, W2, None)
    for position, param in ((0, "x"), (1, "W1"), (3, "W2")):
        args = [ONE_TOKEN, W1, b1, W2, b2]
        args[position] = None
        with pytest.raises(TypeError, match=rf"^{param} must be a number or an array of numbers, not None"):
            fh.ffn_forward(*args)


def test_unknown_activation_name_in_the_ffn():
    with pytest.raises(ValueError, match=r"unknown activation 'tanh'; expected one of 'relu', 'gelu'"):
        fh.ffn_forward(ONE_TOKEN, W1, b1, W2, b2, activation="tanh")


@pytest.mark.parametrize("f, args, error, pattern", [
    (fh.swiglu_forward, (ONE_TOKEN, W1, "up", W2), TypeError, r"^W_up must hold real numbers"),
    (fh.swiglu_forward, (ONE_TOKEN, "gate", W1, W2), TypeError, r"^W_gate must hold real numbers"),
    (fh.collapse_to_linear, ("W1", b1, W2, b2), TypeError, r"^W1 must hold real numbers"),
    (fh.collapse_to_linear, (W1, ["a", "b", "c"], W2, b2), TypeError, r"^b1 must hold real numbers"),
    (fh.collapse_to_linear, (np.ones(3), None, W2, None), ValueError, r"^W1 should be a 2-D matrix, got an array "
                                                                       r"of shape \(3,\)"),
    (fh.from_torch_layout, (np.ones(3), None, W2, None), ValueError, r"^weight1 should be a 2-D matrix"),
    (fh.from_torch_layout, (W2, None, "w", None), TypeError, r"^weight2 must hold real numbers"),
    (fh.from_torch_layout, (W2, [None], W1, None), TypeError, r"^bias1 must hold real numbers"),
    (fh.layer_norm, ("abc",), TypeError, r"^x must hold real numbers"),
    (fh.layer_norm, (ONE_TOKEN, "g"), TypeError, r"^gamma must hold real numbers"),
    (fh.layer_norm, (ONE_TOKEN, None, [None, 1]), TypeError, r"^beta must hold real numbers"),
    (fh.layer_norm, (ONE_TOKEN, None, None, "1e-5"), TypeError, r"^eps should be a number >= 0, got '1e-5'"),
    (fh.layer_norm, (ONE_TOKEN, None, None, None), TypeError, r"^eps should be a number >= 0, got None"),
    (fh.layer_norm, (ONE_TOKEN, None, None, -1.0), ValueError, r"^eps should be a number >= 0, got -1\.0"),
    (fh.layer_norm, ([[1.0, 2.0], [3.0, 3.0]], None, None, 0.0), ValueError, r"^with eps = 0 a constant row"),
    (fh.post_ln, (ONE_TOKEN, "not a function"), TypeError, r"^sublayer should be a function of x.*got str"),
    (fh.pre_ln, (ONE_TOKEN, np.ones(2)), TypeError, r"^sublayer should be a function of x.*got ndarray"),
    (fh.post_ln, ("x", lambda v: v), TypeError, r"^x must hold real numbers"),
    (fh.pre_ln, (ONE_TOKEN, lambda v: "out"), TypeError, r"^sublayer\(x\) must hold real numbers"),
    (fh.pre_ln, (np.ones((2, 2)), lambda v: v[0]), ValueError, r"x is \(2, 2\) but sublayer\(LN\(x\)\) returned "
                                                               r"\(2,\)"),
    (fh.ffn_param_count, (768, 3072.0), TypeError, r"^d_ff must be a whole number, got 3072\.0"),
    (fh.ffn_param_count, (-1, 3072), ValueError, r"^d_model must be positive, got -1"),
    (fh.param_bytes, (10, "fp32"), ValueError, r"^unknown dtype 'fp32'; expected one of 'float64', 'float32', "
                                               r"'float16', 'bfloat16', 'int8'"),
    (fh.attention_param_count, ("256",), TypeError, r"^d_model must be a whole number, got '256'"),
    (fh.preset, ("gpt3",), ValueError, r"^unknown model 'gpt3'; expected one of 'transformer-base'"),
    (fh.get_activation, ("Relu",), ValueError, r"^unknown activation 'Relu'; expected one of 'relu'"),
])
def test_bad_input_says_what_was_expected_and_what_came(f, args, error, pattern):
    with pytest.raises(error, match=pattern):
        f(*args)


def test_bool_and_integer_arrays_are_numbers():
    np.testing.assert_array_equal(fh.relu([True, False]), [1.0, 0.0])
    np.testing.assert_array_equal(fh.relu(np.array([3, -3], dtype=np.int8)), [3.0, 0.0])
    np.testing.assert_array_equal(fh.relu([2**70, -1]), [2.0**70, 0.0])  # beyond int64: still numbers


def test_read_only_inputs_are_fine():
    x = np.array([[1.0, -1.0]])
    x.flags.writeable = False
    for activation in ("relu", "gelu", "silu"):
        fh.ffn_forward(x, W1, b1, W2, b2, activation=activation)
    fh.layer_norm(x)
    fh.relu(x)
