"""Parameter counts, bytes, FLOPs and model presets."""

import numpy as np
import pytest

import ffn_helpers as fh
from ffn_helpers.budgets import ModelPreset


def count_by_listing(d_model, d_ff, bias=True, gated=False):
    """Count by listing every parameter array's shape, the way one reads a model summary."""
    shapes = [(d_model, d_ff), (d_ff, d_model)] + ([(d_model, d_ff)] if gated else [])
    if bias:
        shapes += [(d_ff,), (d_model,)] + ([(d_ff,)] if gated else [])
    return sum(int(np.prod(s)) for s in shapes)


@pytest.mark.parametrize("d_model, d_ff", [(1, 1), (2, 3), (256, 1024), (768, 3072), (4096, 11008)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("gated", [False, True])
def test_param_count_equals_the_sum_of_the_parameter_shapes(d_model, d_ff, bias, gated):
    assert fh.ffn_param_count(d_model, d_ff, bias=bias, gated=gated) == count_by_listing(d_model, d_ff, bias, gated)


def test_param_count_small_cases_by_hand():
    assert fh.ffn_param_count(2, 3) == 6 + 3 + 6 + 2 == 17
    assert fh.ffn_param_count(2, 3, bias=False) == 12
    assert fh.ffn_param_count(2, 3, bias=False, gated=True) == 18
    assert fh.ffn_param_count(2, 3, gated=True) == 18 + 3 + 3 + 2


def test_param_count_returns_python_ints_even_for_numpy_ints():
    n = fh.ffn_param_count(np.int64(4096), np.int32(11008), bias=False, gated=True)
    assert type(n) is int and n == 135_266_304


@pytest.mark.parametrize("dtype, size", [("float64", 8), ("float32", 4), ("float16", 2), ("bfloat16", 2),
                                         ("int8", 1)])
def test_dtype_bytes_and_param_bytes(dtype, size):
    assert fh.dtype_bytes(dtype) == size == fh.DTYPE_BYTES[dtype]
    assert fh.param_bytes(1000, dtype) == 1000 * size
    if dtype != "bfloat16":  # numpy has no bfloat16: check the rest against numpy's itemsize
        assert np.dtype(dtype).itemsize == size


def test_param_bytes_default_is_float32():
    assert fh.param_bytes(10) == 40


@pytest.mark.parametrize("bad", ["float", "fp16", "FLOAT32", "", None, np.float32])
def test_unknown_dtype_is_a_value_error_listing_the_valid_ones(bad):
    for f in (fh.dtype_bytes, lambda d: fh.param_bytes(10, d)):
        with pytest.raises(ValueError, match="unknown dtype") as info:
            f(bad)
        for name in fh.DTYPE_BYTES:
            assert repr(name) in str(info.value)


@pytest.mark.parametrize("gated", [False, True])
def test_flops_per_token_are_two_per_weight(gated):
    d_model, d_ff = 96, 384
    weights = fh.ffn_param_count(d_model, d_ff, bias=False, gated=gated)
    assert fh.ffn_flops_per_token(d_model, d_ff, gated=gated) == 2 * weights


def test_attention_param_count():
    assert fh.attention_param_count(4) == 4 * (16 + 4) == 80
    assert fh.attention_param_count(4, bias=False) == 64


def test_attention_with_shared_keys_and_values():
    # Grouped-query attention (Mixtral: 8 key/value heads of 128 for 32 query heads): K and V are d_model × d_kv.
    assert fh.attention_param_count(4096, bias=False, d_kv=1024) == 41_943_040
    assert fh.attention_param_count(256, d_kv=256) == fh.attention_param_count(256) == 263_168
    assert fh.attention_param_count(8, d_kv=2) == (8 * 8 + 8) * 2 + (8 * 2 + 2) * 2
    with pytest.raises(ValueError, match="d_kv must be positive, got 0"):
        fh.attention_param_count(8, d_kv=0)


def test_presets():
    assert set(fh.PRESETS) == {"transformer-base", "bert-base", "gpt2-small", "libtorch-example", "llama-7b"}
    for key, p in fh.PRESETS.items():
        assert fh.preset(key) is p and isinstance(p, ModelPreset)
        assert p.ffn_params_per_layer == fh.ffn_param_count(p.d_model, p.d_ff, bias=p.bias, gated=p.gated)
        assert p.ffn_params_total == p.n_layers * p.ffn_params_per_layer
    dims = {k: (p.d_model, p.d_ff, p.n_layers) for k, p in fh.PRESETS.items()}
    assert dims == {"transformer-base": (512, 2048, 6), "bert-base": (768, 3072, 12),
                    "gpt2-small": (768, 3072, 12), "libtorch-example": (256, 1024, 1),
                    "llama-7b": (4096, 11008, 32)}
    assert fh.preset("llama-7b").gated and not fh.preset("llama-7b").bias
    with pytest.raises(AttributeError):
        fh.preset("bert-base").d_ff = 1  # frozen


@pytest.mark.parametrize("bad", ["gpt-2", "BERT-base", None])
def test_unknown_preset_is_a_value_error_listing_the_valid_ones(bad):
    with pytest.raises(ValueError, match="unknown model") as info:
        fh.preset(bad)
    for key in fh.PRESETS:
        assert repr(key) in str(info.value)


@pytest.mark.parametrize("f", [fh.ffn_param_count, fh.ffn_flops_per_token])
@pytest.mark.parametrize("bad, error, pattern", [
    (768.0, TypeError, r"d_model must be a whole number, got 768\.0"),
    ("768", TypeError, r"d_model must be a whole number, got '768'"),
    (True, TypeError, r"d_model must be a whole number, got True"),
    (None, TypeError, r"d_model must be a whole number, got None"),
    (0, ValueError, r"d_model must be positive, got 0"),
    (-768, ValueError, r"d_model must be positive, got -768"),
])
def test_bad_dimensions(f, bad, error, pattern):
    with pytest.raises(error, match=pattern):
        f(bad, 3072)


def test_bad_n_params():
    with pytest.raises(ValueError, match="n_params must be positive, got -5"):
        fh.param_bytes(-5)
    with pytest.raises(TypeError, match="n_params must be a whole number, got 1.5"):
        fh.param_bytes(1.5)
