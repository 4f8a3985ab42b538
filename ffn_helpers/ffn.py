r"""The position-wise feed-forward network FFN(x) = σ(x W1 + b1) W2 + b2.

Row-vector convention: x: (..., d_model), W1: (d_model, d_ff), b1: (d_ff,),
W2: (d_ff, d_model), b2: (d_model,). Leading axes of x are batch axes
(tokens, sequences) and every position uses the same weights.
"""

from typing import NamedTuple

import numpy as np

from . import _fast
from ._arrays import as_float, check_matrix
from .activations import get_activation


class FFNTrace(NamedTuple):
    """Every stage of one forward pass: z = x W1 + b1, h = σ(z), y = h W2 + b2."""

    x: np.ndarray  # (..., d_model)
    z: np.ndarray  # (..., d_ff) pre-activation
    h: np.ndarray  # (..., d_ff) hidden
    y: np.ndarray  # (..., d_model) output


def check_ffn_shapes(x, W1, b1, W2, b2, names=("W1", "b1", "W2", "b2")):
    """Convert to float64 and check the FFN's shapes; return the converted arrays.

    `names` are the parameters' names in error messages (e.g. W_gate, W_down for SwiGLU).
    """
    n_W1, n_b1, n_W2, n_b2 = names
    x, W1, W2 = as_float(x, "x"), as_float(W1, n_W1), as_float(W2, n_W2)
    b1 = None if b1 is None else as_float(b1, n_b1)
    b2 = None if b2 is None else as_float(b2, n_b2)
    check_matrix(W1, n_W1)
    check_matrix(W2, n_W2)
    if x.ndim == 0:
        raise ValueError("x should have shape (..., d_model) with at least one axis, got a scalar")
    d_model = x.shape[-1]
    if W1.shape[0] != d_model:
        hint = ""
        if W1.shape[1] == d_model:
            hint = (
                f" {n_W1} looks transposed: {W1.shape} is PyTorch's (out_features, in_features) layout."
                f" Use {n_W1}.T, or from_torch_layout(...) to convert all four parameters."
            )
        raise ValueError(
            f"{n_W1} should have shape (d_model, d_ff) = ({d_model}, d_ff) to match x's last axis "
            f"of size {d_model}, got {W1.shape}.{hint}"
        )
    d_ff = W1.shape[1]
    if W2.shape != (d_ff, d_model):
        hint = ""
        if W2.shape == (d_model, d_ff):
            hint = f" {n_W2} looks transposed (PyTorch's (out, in) layout); use {n_W2}.T or from_torch_layout(...)."
        raise ValueError(
            f"{n_W2} should have shape (d_ff, d_model) = ({d_ff}, {d_model}), got {W2.shape}.{hint}"
        )
    if b1 is not None and b1.shape != (d_ff,):
        raise ValueError(f"{n_b1} should have shape (d_ff,) = ({d_ff},), got {b1.shape}")
    if b2 is not None and b2.shape != (d_model,):
        raise ValueError(f"{n_b2} should have shape (d_model,) = ({d_model},), got {b2.shape}")
    return x, W1, b1, W2, b2


def ffn_forward(x, W1, b1, W2, b2, activation="relu"):
    r"""FFN(x) = σ(x W1 + b1) W2 + b2, the same two layers at every position.

    x: (..., d_model)       leading axes are batch axes (tokens, sequences)
    W1: (d_model, d_ff)     b1: (d_ff,), or None for no bias
    W2: (d_ff, d_model)     b2: (d_model,), or None for no bias
    activation: σ, a name from ACTIVATIONS or a callable
    returns: (..., d_model)

    NaN in any input propagates to the affected outputs.
    """
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    if _fast.computes(activation):  # ReLU, GELU, SiLU: this formula, computed in place and across threads (_fast)
        return _fast.ffn_forward(x, W1, b1, W2, b2, activation)
    sigma = get_activation(activation)
    z = _affine(x, W1, b1)  # (..., d_ff)
    h = sigma(z)  # (..., d_ff)
    return _affine(h, W2, b2)  # (..., d_model)


def _affine(x, W, b):
    """x W + b, or x W when b is None."""
    return x @ W if b is None else x @ W + b


def ffn_trace(x, W1, b1, W2, b2, activation="relu"):
    """Like `ffn_forward`, but return every stage as an `FFNTrace(x, z, h, y)`."""
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    sigma = get_activation(activation)
    z = _affine(x, W1, b1)
    h = sigma(z)
    y = _affine(h, W2, b2)
    return FFNTrace(x, z, h, y)


def from_torch_layout(weight1, bias1, weight2, bias2):
    """Convert `nn.Linear` parameters, weights (out_features, in_features), to (W1, b1, W2, b2).

    nn.Linear computes x @ weight.T + bias, so W1 = weight1.T and W2 = weight2.T;
    biases are unchanged (None stays None).
    """
    weight1, weight2 = as_float(weight1, "weight1"), as_float(weight2, "weight2")
    check_matrix(weight1, "weight1")
    check_matrix(weight2, "weight2")
    d_ff, d_model = weight1.shape
    if weight2.shape != (d_model, d_ff):
        raise ValueError(
            f"weight2 should have shape (d_model, d_ff) = ({d_model}, {d_ff}) "
            f"after weight1 of shape (d_ff, d_model) = {weight1.shape}, got {weight2.shape}"
        )
    b1 = None if bias1 is None else as_float(bias1, "bias1")
    b2 = None if bias2 is None else as_float(bias2, "bias2")
    if b1 is not None and b1.shape != (d_ff,):
        raise ValueError(f"bias1 should have shape (d_ff,) = ({d_ff},), got {b1.shape}")
    if b2 is not None and b2.shape != (d_model,):
        raise ValueError(f"bias2 should have shape (d_model,) = ({d_model},), got {b2.shape}")
    return weight1.T.copy(), b1, weight2.T.copy(), b2


def swiglu_forward(x, W_gate, W_up, W_down):
    r"""Gated FFN: (SiLU(x W_gate) ⊙ (x W_up)) W_down, no biases (as in LLaMA).

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    from .activations import silu

    x, W_gate, _, W_down, _ = check_ffn_shapes(x, W_gate, None, W_down, None, names=("W_gate", "", "W_down", ""))
    W_up = as_float(W_up, "W_up")
    if W_up.shape != W_gate.shape:
        raise ValueError(f"W_up should have the shape of W_gate, {W_gate.shape}, got {W_up.shape}")
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down


def collapse_to_linear(W1, b1, W2, b2):
    r"""Without σ, x W1 + b1 then · W2 + b2 is one affine map x W + b.

    Returns (W, b) with W = W1 W2: (d_model, d_model) and b = b1 W2 + b2.
    """
    W1, W2 = as_float(W1, "W1"), as_float(W2, "W2")
    check_matrix(W1, "W1")
    check_matrix(W2, "W2")
    if W1.shape[1] != W2.shape[0]:
        raise ValueError(f"W2 should have {W1.shape[1]} rows to follow W1 {W1.shape}, got {W2.shape}")
    b1 = np.zeros(W1.shape[1]) if b1 is None else as_float(b1, "b1")
    b2 = np.zeros(W2.shape[1]) if b2 is None else as_float(b2, "b2")
    if b1.shape != (W1.shape[1],):
        raise ValueError(f"b1 should have shape ({W1.shape[1]},) to match W1 {W1.shape}, got {b1.shape}")
    if b2.shape != (W2.shape[1],):
        raise ValueError(f"b2 should have shape ({W2.shape[1]},) to match W2 {W2.shape}, got {b2.shape}")
    return W1 @ W2, b1 @ W2 + b2
