"""Reference computations, checks and plots for the FFN course.

    FFN(x) = σ(x W1 + b1) W2 + b2,   x: (..., d_model)

Modules: `activations`, `ffn`, `norm`, `budgets`, `examples` (the worked
examples W-1 ... W-10), `checks` and `mistakes` (feedback on learners' code; the parts of
`checks` a notebook does not call by name, its grading protocol among them, are in `_checks/`),
`module` (the references of notebook 09: FeedForwardNetwork, its parts, gradient checks),
`moe` (mixture of experts: router, forward pass, parameter counts, load balancing),
`positions` (the reference detector of mixing between positions),
`rounding` (float64 sums in a stated order, and every value any order can give),
`precision` (bfloat16 rounding, int8 quantisation, float16 forward passes),
`memory` (the FFN read as a key-value memory: storing pairs, recall, the units that fire),
`training` (notebook 13: the loss, a gradient-descent step, the loop, the memorising task),
`plots` and `widgets` (figures, one module of `plots` per family, and the interactive view;
imported on first use so that `import ffn_helpers` stays fast and never loads matplotlib).
"""

import importlib

from .activations import ACTIVATIONS, gelu, gelu_tanh, get_activation, relu, relu_grad, sigmoid, silu
from .budgets import (
    DTYPE_BYTES,
    PRESETS,
    attention_param_count,
    dtype_bytes,
    ffn_flops_per_token,
    ffn_param_count,
    param_bytes,
    preset,
)
from .ffn import FFNTrace, collapse_to_linear, ffn_forward, ffn_trace, from_torch_layout, swiglu_forward
from .norm import layer_norm, post_ln, pre_ln

__version__ = "1.0.0"

_LAZY = ("plots", "checks", "mistakes", "examples", "widgets", "module", "rounding", "memory", "moe",
         "positions", "precision", "training")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ffn_helpers' has no attribute {name!r}")


__all__ = [
    "ACTIVATIONS", "DTYPE_BYTES", "PRESETS", "FFNTrace",
    "attention_param_count", "collapse_to_linear", "dtype_bytes", "ffn_flops_per_token",
    "ffn_forward", "ffn_param_count", "ffn_trace", "from_torch_layout", "gelu", "gelu_tanh",
    "get_activation", "layer_norm", "param_bytes", "post_ln", "pre_ln", "preset", "relu",
    "relu_grad", "sigmoid", "silu", "swiglu_forward",
]
