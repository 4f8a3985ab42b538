"""Parameter counts, memory and FLOPs of an FFN, and presets for real models."""

from dataclasses import dataclass

from ._arrays import positive_int

DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


def ffn_param_count(d_model, d_ff, bias=True, gated=False):
    """Parameters of one FFN layer.

    Plain: W1 (d_model·d_ff) + W2 (d_ff·d_model), plus b1 (d_ff) + b2 (d_model) with bias.
    Gated (SwiGLU): three matrices W_gate, W_up, W_down, i.e. 3·d_model·d_ff;
    with bias, d_ff + d_ff + d_model more.
    """
    d_model, d_ff = positive_int(d_model, "d_model"), positive_int(d_ff, "d_ff")
    n_matrices = 3 if gated else 2
    weights = n_matrices * d_model * d_ff
    biases = ((n_matrices - 1) * d_ff + d_model) if bias else 0
    return weights + biases


def dtype_bytes(dtype):
    """Bytes per parameter for a dtype name (see `DTYPE_BYTES`)."""
    try:
        return DTYPE_BYTES[dtype]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in DTYPE_BYTES)
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {valid}") from None


def param_bytes(n_params, dtype="float32"):
    """Memory for `n_params` parameters stored as `dtype`."""
    return positive_int(n_params, "n_params") * dtype_bytes(dtype)


def ffn_flops_per_token(d_model, d_ff, gated=False):
    """FLOPs for one token: 2 per multiply-add, d_model·d_ff multiply-adds per matrix.

    Biases and the activation are ignored, as is usual.
    """
    d_model, d_ff = positive_int(d_model, "d_model"), positive_int(d_ff, "d_ff")
    return 2 * (3 if gated else 2) * d_model * d_ff


def attention_param_count(d_model, bias=True, d_kv=None):
    """The four projections (Q, K, V, output) of one attention sublayer.

    Q and the output are d_model × d_model; K and V are d_model × d_kv, where d_kv
    (n_kv_heads · head_dim) is d_model unless the heads share keys and values
    (grouped-query attention, as in Mistral and Mixtral).
    """
    d_model = positive_int(d_model, "d_model")
    d_kv = d_model if d_kv is None else positive_int(d_kv, "d_kv")
    weights = 2 * d_model * d_model + 2 * d_model * d_kv
    return weights + ((2 * d_model + 2 * d_kv) if bias else 0)


@dataclass(frozen=True)
class ModelPreset:
    """The FFN dimensions of a published model."""

    name: str
    d_model: int
    d_ff: int
    n_layers: int
    bias: bool = True
    gated: bool = False

    @property
    def ffn_params_per_layer(self):
        return ffn_param_count(self.d_model, self.d_ff, bias=self.bias, gated=self.gated)

    @property
    def ffn_params_total(self):
        return self.n_layers * self.ffn_params_per_layer


PRESETS = {
    # The original Transformer's 6 layers are its encoder's; its decoder has 6 more FFNs of the same size.
    "transformer-base": ModelPreset("Transformer base (2017)", 512, 2048, 6),
    "bert-base": ModelPreset("BERT-base", 768, 3072, 12),
    "gpt2-small": ModelPreset("GPT-2 small", 768, 3072, 12),
    "libtorch-example": ModelPreset("LibTorch-style example", 256, 1024, 1),
    "llama-7b": ModelPreset("LLaMA-7B", 4096, 11008, 32, bias=False, gated=True),
}


def preset(name):
    """Look up a `ModelPreset` by key (see `PRESETS`)."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in PRESETS)
        raise ValueError(f"unknown model {name!r}; expected one of {valid}") from None
