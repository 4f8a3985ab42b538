"""Activation functions: values, conventions, the registry, and no warning for any finite input."""

import math
import warnings

import numpy as np
import pytest
from scipy import special

import ffn_helpers as fh
from ffn_helpers.activations import ACTIVATIONS, get_activation, identity

SMOOTH = {"sigmoid": fh.sigmoid, "silu": fh.silu, "gelu": fh.gelu, "gelu_tanh": fh.gelu_tanh}
ALL = {"relu": fh.relu, "relu_grad": fh.relu_grad, **SMOOTH}

BIG = np.finfo(np.float64).max
TINY = np.finfo(np.float64).smallest_subnormal
# Every kind of finite float64: huge, around the overflow of exp (±710), the underflow
# region, subnormals, signed zeros.
EXTREME = np.array([-BIG, -1e308, -1e200, -1e102, -1000.0, -745.2, -710.0, -709.0, -40.0, -38.5, -10.0,
                    -1e-300, -TINY, -0.0, 0.0, TINY, 1e-300, 10.0, 40.0, 709.0, 710.0, 1000.0, 1e102,
                    1e200, 1e308, BIG])


@pytest.fixture
def strict():
    """Every numpy floating-point event and every warning is an error inside the test."""
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        yield


# --- ReLU and its gradient ------------------------------------------------------------------------

def test_relu_passes_positives_zeroes_negatives():
    np.testing.assert_array_equal(fh.relu([-2.0, -1e-300, 0.0, 1e-300, 3.5]), [0, 0, 0, 1e-300, 3.5])


def test_relu_nan_propagates():
    out = fh.relu([np.nan, 1.0, -1.0])
    assert np.isnan(out[0]) and out[1] == 1.0 and out[2] == 0.0


def test_relu_grad_is_1_above_0_and_0_at_and_below_0_like_pytorch():
    np.testing.assert_array_equal(fh.relu_grad([-3.0, -0.0, 0.0, 1e-320, 2.0]), [0, 0, 0, 1, 1])
    assert fh.relu_grad(0) == 0.0


def test_relu_grad_nan_propagates_without_warning(strict):
    out = fh.relu_grad([np.nan, 1.0, -1.0])
    assert np.isnan(out[0])
    np.testing.assert_array_equal(out[1:], [1, 0])


# --- sigmoid and the smooth activations never overflow or warn --------------------------------------

@pytest.mark.parametrize("name", list(ALL))
def test_no_warning_and_finite_for_every_finite_input(name, strict):
    f = ALL[name]
    out = f(EXTREME)
    assert out.dtype == np.float64 and out.shape == EXTREME.shape
    # gelu_tanh's (z + 0.044715 z³) overflows inside, but the result is still finite.
    assert np.isfinite(out).all(), dict(zip(EXTREME.tolist(), out.tolist(), strict=True))
    for z in EXTREME:  # one at a time too: numpy scalars take another code path
        assert np.isfinite(f(z))


def test_sigmoid_at_plus_minus_1e308_is_1_and_0(strict):
    assert fh.sigmoid(1e308) == 1.0
    assert fh.sigmoid(-1e308) == 0.0
    assert fh.sigmoid(BIG) == 1.0 and fh.sigmoid(-BIG) == 0.0


def test_sigmoid_values_and_symmetry():
    z = np.linspace(-30, 30, 121)
    s = fh.sigmoid(z)
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-z)), rtol=1e-14, atol=0)
    np.testing.assert_allclose(s + fh.sigmoid(-z), 1.0, rtol=0, atol=np.finfo(np.float64).eps)  # 1 ulp
    assert fh.sigmoid(0.0) == 0.5


@pytest.mark.parametrize("name, limit_minus, limit_plus", [
    ("relu", 0.0, math.inf), ("sigmoid", 0.0, 1.0), ("silu", -0.0, math.inf),
    ("gelu", -0.0, math.inf), ("gelu_tanh", -0.0, math.inf),
])
def test_infinite_inputs_give_the_limits_without_warning(name, limit_minus, limit_plus, strict):
    out = ACTIVATIONS[name](np.array([-np.inf, np.inf]))
    assert out[0] == limit_minus and np.signbit(out[0]) == np.signbit(limit_minus)
    assert out[1] == limit_plus
    assert ACTIVATIONS[name](-np.inf) == limit_minus  # the scalar path too


@pytest.mark.parametrize("name", ["relu", *SMOOTH])
def test_nan_propagates(name, strict):
    out = ACTIVATIONS[name](np.array([np.nan, 0.5]))
    assert np.isnan(out[0]) and np.isfinite(out[1])


def test_silu_is_z_times_sigmoid():
    z = np.linspace(-40, 40, 161)
    np.testing.assert_allclose(fh.silu(z), z / (1 + np.exp(-z)), rtol=1e-14, atol=0)


def test_gelu_is_z_times_normal_cdf_through_erfc():
    z = np.linspace(-5, 5, 101)
    np.testing.assert_allclose(fh.gelu(z), 0.5 * z * special.erfc(-z / np.sqrt(2)), rtol=1e-14, atol=0)
    # Deep in the tail the reference itself is less exact: rounding the argument x = -z/√2
    # moves erfc(x) by about 2x²·ε relative, 1.5e-13 at z = -37.
    z = np.linspace(-37, -5, 65)
    np.testing.assert_allclose(fh.gelu(z), 0.5 * z * special.erfc(-z / np.sqrt(2)), rtol=1e-12, atol=0)


def test_gelu_tanh_matches_the_published_formula_and_stays_close_to_gelu():
    z = np.linspace(-6, 6, 121)
    published = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    np.testing.assert_allclose(fh.gelu_tanh(z), published, rtol=1e-14, atol=1e-300)
    # An approximation: close to the exact GELU (within 1e-3 everywhere) but not equal.
    gap = np.abs(fh.gelu_tanh(z) - fh.gelu(z))
    assert gap.max() < 1e-3 and gap.max() > 1e-5


def test_identity_returns_its_input_as_float64():
    np.testing.assert_array_equal(identity([1, -2]), [1.0, -2.0])
    assert identity([1, -2]).dtype == np.float64


# --- input kinds ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(ALL))
@pytest.mark.parametrize("z", [[-1, 0, 2], (-1.0, 0.0, 2.0), np.array([-1, 0, 2], dtype=np.int32),
                               np.array([-1, 0, 2], dtype=np.float32)], ids=["list", "tuple", "int32", "float32"])
def test_array_likes_give_float64_equal_to_the_float64_result(name, z):
    f = ALL[name]
    out = f(z)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (3,)
    np.testing.assert_array_equal(out, f(np.array([-1.0, 0.0, 2.0])))


@pytest.mark.parametrize("name", list(ALL))
def test_scalars_and_0d_arrays(name):
    f = ALL[name]
    for z in (2, 2.0, np.float64(2.0), np.array(2.0)):
        out = f(z)
        assert np.ndim(out) == 0 and np.asarray(out).dtype == np.float64
        assert out == f(np.array([2.0]))[0]


@pytest.mark.parametrize("name", list(ALL))
def test_elementwise_on_any_shape(name):
    f = ALL[name]
    z = np.random.default_rng(0).standard_normal((2, 3, 4))
    out = f(z)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out.ravel(), f(z.ravel()))


@pytest.mark.parametrize("name", list(ALL))
def test_input_is_not_modified(name):
    z = np.array([-1.0, 0.5, np.inf])
    ALL[name](z)
    np.testing.assert_array_equal(z, [-1.0, 0.5, np.inf])


# --- the registry -----------------------------------------------------------------------------------

def test_registry_lookup_by_name():
    assert set(ACTIVATIONS) == {"relu", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"}
    for name, f in ACTIVATIONS.items():
        assert get_activation(name) is f
    assert get_activation("gelu") is fh.gelu and get_activation("relu") is fh.relu


def test_registry_passes_callables_through():
    def mine(z):
        return z

    assert get_activation(mine) is mine
    assert get_activation(np.tanh) is np.tanh


@pytest.mark.parametrize("bad", ["ReLU", "swish", "", None, 3])
def test_unknown_activation_is_a_value_error_listing_the_valid_names(bad):
    with pytest.raises(ValueError, match="unknown activation") as info:
        get_activation(bad)
    message = str(info.value)
    assert repr(bad) in message
    for name in ACTIVATIONS:
        assert repr(name) in message
