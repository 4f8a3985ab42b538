"""LayerNorm and the post-LN / pre-LN residual wrappers."""

import warnings

import numpy as np
import pytest

import ffn_helpers as fh
from ffn_helpers.examples import W_4


def by_hand(x, gamma=None, beta=None, eps=1e-5):
    """LN over the last axis written out: biased variance, eps inside the square root."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    mean = x.sum(axis=-1, keepdims=True) / d
    var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / d
    out = (x - mean) / np.sqrt(var + eps)
    return out * (1 if gamma is None else gamma) + (0 if beta is None else beta)


@pytest.mark.parametrize("shape", [(6,), (4, 6), (2, 3, 6)])
def test_layer_norm_matches_the_formula_on_every_shape(shape):
    x = 3 + 2 * np.random.default_rng(0).standard_normal(shape)
    out = fh.layer_norm(x)
    assert out.shape == shape and out.dtype == np.float64
    np.testing.assert_allclose(out, by_hand(x), rtol=1e-13, atol=1e-14)


def test_layer_norm_normalises_each_row_on_its_own():
    x = np.random.default_rng(1).standard_normal((5, 4)) * np.array([[1], [10], [0.1], [100], [3]])
    out = fh.layer_norm(x)
    for row_in, row_out in zip(x, out, strict=True):
        np.testing.assert_array_equal(fh.layer_norm(row_in), row_out)


def test_layer_norm_gamma_scales_beta_shifts():
    rng = np.random.default_rng(2)
    x, gamma, beta = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(fh.layer_norm(x, gamma, beta), by_hand(x, gamma, beta), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(fh.layer_norm(x, gamma, beta), fh.layer_norm(x) * gamma + beta, rtol=0, atol=0)
    np.testing.assert_array_equal(fh.layer_norm(x, gamma=gamma), fh.layer_norm(x) * gamma)
    np.testing.assert_array_equal(fh.layer_norm(x, beta=beta), fh.layer_norm(x) + beta)
    np.testing.assert_array_equal(fh.layer_norm(x, np.ones(4), np.zeros(4)), fh.layer_norm(x))


def test_layer_norm_eps_is_inside_the_square_root():
    x = np.array([0.0, 0.02])  # variance 1e-4, comparable to eps
    for eps in (0.0, 1e-5, 1e-4, 1.0):
        expected = np.array([-0.01, 0.01]) / np.sqrt(1e-4 + eps)
        np.testing.assert_allclose(fh.layer_norm(x, eps=eps), expected, rtol=1e-12, atol=0)


def test_layer_norm_of_a_constant_row_is_zero_with_eps():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fh.layer_norm([[2.0, 2.0, 2.0]]), [[0, 0, 0]])
        np.testing.assert_array_equal(fh.layer_norm([2.0, 2.0], beta=[1.0, -1.0]), [1, -1])


def test_layer_norm_does_not_modify_its_input():
    x = np.array([[1.0, 2.0, 4.0]])
    fh.layer_norm(x, np.ones(3), np.ones(3))
    np.testing.assert_array_equal(x, [[1.0, 2.0, 4.0]])


@pytest.mark.parametrize("kwargs, pattern", [
    ({"gamma": np.ones(3)}, r"gamma should have shape \(d,\) = \(4,\), got \(3,\)"),
    ({"beta": np.ones((1, 4))}, r"beta should have shape \(d,\) = \(4,\), got \(1, 4\)"),
    ({"eps": -1e-5}, r"eps should be a number >= 0, got -1e-05"),
    ({"eps": float("nan")}, r"eps should be a number >= 0, got nan"),
])
def test_layer_norm_bad_arguments_are_value_errors(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        fh.layer_norm(np.ones((2, 4)), **kwargs)


def test_layer_norm_of_a_scalar_is_a_value_error():
    with pytest.raises(ValueError, match=r"x should have shape \(\.\.\., d\).*scalar"):
        fh.layer_norm(3.0)


# --- post-LN and pre-LN --------------------------------------------------------------------------------

def ffn4(x):
    return fh.ffn_forward(x, *W_4.params)


def test_post_ln_is_layer_norm_of_x_plus_sublayer_of_x():
    x = np.array([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]])
    np.testing.assert_array_equal(fh.post_ln(x, ffn4), fh.layer_norm(x + ffn4(x)))
    np.testing.assert_array_equal(fh.post_ln(x, ffn4, eps=0.1), fh.layer_norm(x + ffn4(x), eps=0.1))


def test_pre_ln_is_x_plus_sublayer_of_layer_norm_of_x():
    x = np.array([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]])
    np.testing.assert_array_equal(fh.pre_ln(x, ffn4), x + ffn4(fh.layer_norm(x)))
    np.testing.assert_array_equal(fh.pre_ln(x, ffn4, eps=0.1), x + ffn4(fh.layer_norm(x, eps=0.1)))


def test_W4_post_ln_and_pre_ln_differ_on_the_same_input():
    post, pre = fh.post_ln(W_4.x, ffn4), fh.pre_ln(W_4.x, ffn4)
    np.testing.assert_allclose(post, [0.9999995266, -0.9999995266], rtol=0, atol=1e-10)
    # pre-LN: LN([1, -1]) = [1, -1] / √(1 + 1e-5), then FFN, then the unnormalised residual x.
    s = 1 / np.sqrt(1 + 1e-5)
    np.testing.assert_allclose(pre, W_4.x + ffn4(np.array([s, -s])), rtol=1e-15, atol=0)
    # By hand: z = [s, -s, 3s + 0.5], h = [s, 0, 3s + 0.5], FFN = [4s + 0.5, 1 - s].
    np.testing.assert_allclose(pre, [1.5 + 4 * s, -s], rtol=1e-15, atol=0)
    assert np.abs(post - pre).max() > 4  # the order matters
    np.testing.assert_allclose(fh.layer_norm(pre), post, rtol=0, atol=1e-5)  # ... though not by much after LN


def test_pre_ln_output_is_not_normalised_post_ln_output_is():
    x = 5 + 3 * np.random.default_rng(3).standard_normal((4, 2))
    post, pre = fh.post_ln(x, ffn4, eps=0.0), fh.pre_ln(x, ffn4, eps=0.0)
    np.testing.assert_allclose(post.mean(axis=-1), 0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(post.std(axis=-1), 1, rtol=0, atol=1e-14)
    assert np.abs(pre.mean(axis=-1)).min() > 1


@pytest.mark.parametrize("wrapper", [fh.post_ln, fh.pre_ln])
def test_mismatched_sublayer_output_is_a_value_error(wrapper):
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match=r"x \+ sublayer.*x is \(3, 2\).*returned \(3, 4\)"):
        wrapper(x, lambda v: np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"returned \(2,\)"):  # would broadcast: still refused
        wrapper(x, lambda v: np.ones(2))


@pytest.mark.parametrize("wrapper", [fh.post_ln, fh.pre_ln])
def test_sublayer_returning_none_is_a_type_error(wrapper):
    with pytest.raises(TypeError, match=r"sublayer\(x\) must be a number or an array of numbers, not None"):
        wrapper(np.ones((3, 2)), lambda v: None)


def test_pre_ln_calls_the_sublayer_on_the_normalised_input():
    seen = []
    x = np.array([[2.0, 4.0, 9.0]])
    fh.pre_ln(x, lambda v: seen.append(v.copy()) or np.zeros_like(v))
    np.testing.assert_array_equal(seen[0], fh.layer_norm(x))
