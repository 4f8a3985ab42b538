"""The course's worked examples W-1 ... W-10, with their expected numbers, read-only.

`W_2` is worked example W-2 and so on. Notebooks and tests read these, so every
stated number lives in one place; the tests recompute each one with the
reference code. Arrays are float64 and not writeable.
"""

import math
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np


def _ro(values):
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr


def _frozen(mapping):
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class SignCase:
    """One input to the single neuron of W-1 and what it gives."""

    x: np.ndarray  # (4,)
    dot: float  # x · w
    z: float  # x · w + b
    relu: float


@dataclass(frozen=True)
class NeuronExample:
    """W-1: one neuron z = x · w + b, the three sign cases A, B, C."""

    w: np.ndarray
    b: float
    cases: MappingProxyType  # "A" | "B" | "C" -> SignCase
    b_for_zero_z_C: float  # the bias that makes case C's z zero
    published_b_C: float  # the wrong bias some texts print ...
    z_C_with_published_b: float  # ... and the z it really gives
    float_residue_z_C: float  # z_C with b = 0.01 in float64, summed left to right: tiny, not 0
    fma_residue_z_C: float  # the same sum in another order with a fused multiply-add (AVX-512 BLAS)
    exact_zero_x: np.ndarray  # a case C built from exactly representable numbers
    exact_zero_w: np.ndarray
    exact_zero_b: float
    norm_x_A: float
    norm_w: float


@dataclass(frozen=True)
class FFNExample:
    """A small FFN with one input and every stage of its forward pass."""

    name: str
    x: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    xW1: np.ndarray
    z: np.ndarray  # pre-activation x W1 + b1
    h: np.ndarray  # ReLU(z)
    y: np.ndarray  # output
    extra: MappingProxyType = field(default_factory=lambda: _frozen({}))

    @property
    def params(self):
        """(W1, b1, W2, b2), ready to unpack into `ffn_forward(x, *ex.params)`."""
        return self.W1, self.b1, self.W2, self.b2


W_1 = NeuronExample(
    w=_ro([0.5, 0.2, -0.3, 0.4]),
    b=0.1,
    cases=_frozen({
        "A": SignCase(_ro([1, 0, -1, 2]), dot=1.6, z=1.7, relu=1.7),
        "B": SignCase(_ro([-2, 0, 1, 0]), dot=-1.3, z=-1.2, relu=0.0),
        "C": SignCase(_ro([0.2, -1, -0.3, 0]), dot=-0.01, z=0.09, relu=0.09),
    }),
    b_for_zero_z_C=0.01,
    published_b_C=-0.09,
    z_C_with_published_b=-0.1,
    # ((0.2·0.5 + (-1)·0.2) + (-0.3)·(-0.3)) + 0·0.4) + 0.01, one rounding per operation: the
    # same bits on every IEEE-754 machine. It is -5·2⁻⁵⁹ ≈ -8.67e-18 ("about -8.7e-18").
    float_residue_z_C=-8.673617379884035e-18,
    # What `x_C @ w + 0.01` gives with OpenBLAS's SkylakeX (AVX-512) kernel: the order
    # fma(-0.3, -0.3, 0.2·0.5 + (-1)·0.2) + (0·0.4 + 0.01). Other kernels give the value above.
    fma_residue_z_C=-1.214306433183765e-17,
    exact_zero_x=_ro([0.5, 0, 0, 0]),
    exact_zero_w=_ro([2, 1, 1, 1]),
    exact_zero_b=-1.0,
    norm_x_A=math.sqrt(6),  # ≈ 2.449
    norm_w=math.sqrt(0.54),  # ≈ 0.735
)

W_2 = FFNExample(
    name="W-2: 3 → 4 → 3",
    x=_ro([1.0, -0.5, 0.8]),
    W1=_ro([[0.5, -0.3, 0.8, 0.2], [-0.2, 0.6, 0.1, -0.4], [0.3, 0.1, -0.5, 0.7]]),
    b1=_ro([0.1, -0.1, 0.2, 0.0]),
    W2=_ro([[0.4, -0.2, 0.3], [0.1, 0.5, -0.1], [-0.3, 0.2, 0.4], [0.2, -0.4, 0.1]]),
    b2=_ro([0.05, -0.05, 0.1]),
    xW1=_ro([0.84, -0.52, 0.35, 0.96]),
    z=_ro([0.94, -0.62, 0.55, 0.96]),
    h=_ro([0.94, 0.0, 0.55, 0.96]),
    y=_ro([0.453, -0.512, 0.698]),
)

W_3 = FFNExample(
    name="W-3: 2 → 4 → 2, with exact zeros",
    x=_ro([2, -1]),
    W1=_ro([[1, 0, -1, 2], [0, 1, 1, -1]]),
    b1=_ro([0, 1, 3, 0]),
    W2=_ro([[1, 0], [0, 1], [1, 1], [0.5, 0]]),
    b2=_ro([0, 1]),
    xW1=_ro([2, -1, -3, 5]),
    z=_ro([2, 0, 0, 5]),
    h=_ro([2, 0, 0, 5]),
    y=_ro([4.5, 1.0]),
)

W_4 = FFNExample(
    name="W-4: 2 → 3 → 2, residual, LayerNorm, position-wise",
    x=_ro([1, -1]),
    W1=_ro([[1, 0, 2], [0, 1, -1]]),
    b1=_ro([0, 0, 0.5]),
    W2=_ro([[1, -1], [0, 1], [1, 0]]),
    b2=_ro([0, 1]),
    xW1=_ro([1, -1, 3]),
    z=_ro([1, -1, 3.5]),
    h=_ro([1, 0, 3.5]),
    y=_ro([4.5, 0]),
    extra=_frozen({
        "residual": _ro([5.5, -1]),  # x + FFN(x)
        "residual_mean": 2.25,
        "residual_std": 3.25,  # biased: divide by d = 2
        "post_ln_eps0": _ro([1, -1]),
        "post_ln_eps": _ro([0.9999995266, -0.9999995266]),  # eps = 1e-5
        "eps": 1e-5,
        "tokens": _ro([[1, 0], [0, 2]]),  # two tokens, one per row
        "tokens_out": _ro([[3.5, 0], [0, 3]]),
    }),
)

W_5 = _frozen({
    # z: (ReLU, SiLU, exact GELU, tanh-approximate GELU)
    "table": _frozen({
        -0.5: (0.0, -0.18877033, -0.15426877, -0.15428599),
        2.0: (2.0, 1.76159416, 1.95449974, 1.95459769),
        10.0: (10.0, 9.99954602, 10.0, 10.0),
        -10.0: (0.0, -4.5397868702e-04, -7.61985302416e-23, -0.0),
    }),
    "columns": ("relu", "silu", "gelu", "gelu_tanh"),
    "sigmoid": _frozen({-0.5: 0.37754067, 2.0: 0.88079708}),
    "Phi": _frozen({-0.5: 0.30853754, 2.0: 0.97724987}),
    "naive_sigmoid_overflow_below": -710.0,  # 1/(1+exp(-z)) overflows for z ≲ this
})

W_6 = _frozen({
    "bert_base": _frozen({
        "d_model": 768, "d_ff": 3072, "W1": 2_359_296, "b1": 3_072, "W2": 2_359_296, "b2": 768,
        "per_layer": 4_722_432, "approx_8_d_model_sq": 4_718_592, "n_layers": 12,
        "total": 56_669_184, "float32_bytes": 226_676_736, "float32_MiB": 216.18,
    }),
    "transformer_base": _frozen({
        "d_model": 512, "d_ff": 2048, "per_layer": 2_099_712, "published_wrong_sum": 2_101_760,
    }),
    "libtorch_example": _frozen({
        "d_model": 256, "d_ff": 1024, "with_bias": 525_568, "without_bias": 524_288,
        "bias": 1_280, "attention_with_bias": 263_168, "ffn_share_approx": 2 / 3,
    }),
    "llama_7b": _frozen({
        "d_model": 4096, "d_ff": 11008, "per_layer": 135_266_304, "n_layers": 32,
        "total": 4_328_521_728,
    }),
})

W_7 = FFNExample(
    name="W-7: collapse to linear",
    x=_ro([3, -1]),
    W1=_ro([[1, 2], [0, 1]]),
    b1=_ro([1, 0]),
    W2=_ro([[1, 0], [1, 1]]),
    b2=_ro([0, 1]),
    xW1=_ro([3, 5]),
    z=_ro([4, 5]),
    h=_ro([4, 5]),  # both positive, so with or without ReLU the output here is the same
    y=_ro([9, 6]),
    extra=_frozen({"W": _ro([[3, 2], [1, 1]]), "b": _ro([1, 1])}),
)

W_8 = _frozen({
    "silu_10": 9.999546,
    "silu_minus_10": -0.000454,
    "gelu_minus_10": -7.62e-23,
})


# W-9: the FFN as a key-value memory. Three orthonormal keys (K = I) and their values, stored by
# W1 = Kᵀ, b1 = -θ, W2 = V / (1 - θ), b2 = 0 with θ = 0.5; the input is a noisy copy of key 0.
_W9_VALUES = [[1, 2, 0], [0, -1, 3], [2, 0, 1]]
W_9 = FFNExample(
    name="W-9: a key-value memory",
    x=_ro([0.9, 0.3, 0]),
    W1=_ro(np.eye(3)),
    b1=_ro([-0.5, -0.5, -0.5]),
    W2=_ro(np.multiply(_W9_VALUES, 2)),
    b2=_ro([0, 0, 0]),
    xW1=_ro([0.9, 0.3, 0]),
    z=_ro([0.4, -0.2, -0.5]),
    h=_ro([0.4, 0, 0]),
    y=_ro([0.8, 1.6, 0]),  # 0.8 · V[0]: the right value, scaled; key 1's share (0.3) is filtered out
    extra=_frozen({
        "keys": _ro(np.eye(3)),
        "values": _ro(_W9_VALUES),
        "threshold": 0.5,
        "key_h": _ro(0.5 * np.eye(3)),  # key i gives h = 0.5 e_i ...
        "key_y": _ro(_W9_VALUES),  # ... and recalls V[i] exactly
        "y_without_threshold": _ro([0.9, 1.5, 0.9]),  # θ = 0: 0.9 V[0] + 0.3 V[1]
        "high_threshold": 0.95,  # above x · k_0 = 0.9: nothing fires, y = 0
    }),
)


@dataclass(frozen=True)
class MoEExample:
    """W-10: a router picks k of E expert FFNs per token, gates = softmax over the k chosen logits."""

    W_r: np.ndarray  # (d_model, E) router weights
    experts: tuple  # E tuples (W1, b1, W2, b2), ReLU FFNs
    k: int
    x: np.ndarray  # (n_tokens, d_model)
    logits: np.ndarray  # (n_tokens, E), x W_r
    indices: np.ndarray  # (n_tokens, k), largest logit first
    gates: np.ndarray  # (n_tokens, k), rounded to 6 decimals as stated
    y: np.ndarray  # (n_tokens, d_model), rounded to 6 decimals as stated


_I2, _ZERO2 = np.eye(2), np.zeros(2)

W_10 = MoEExample(
    W_r=_ro([[1, 0, -1], [0, 1, 1]]),
    experts=tuple(tuple(_ro(a) for a in expert) for expert in (
        (_I2, _ZERO2, _I2, _ZERO2),  # FFN_0 = (W1 = I, W2 = I)
        (-_I2, _ZERO2, _I2, _ZERO2),  # FFN_1 = (W1 = -I, W2 = I)
        (_I2, _ZERO2, 2 * _I2, _ZERO2),  # FFN_2 = (W1 = I, W2 = 2I)
    )),
    k=2,
    x=_ro([[2, 1], [-1, 2]]),
    logits=_ro([[2, 1, -1], [-1, 2, 3]]),
    indices=np.array([[0, 1], [2, 1]]),
    gates=_ro([[0.731059, 0.268941], [0.731059, 0.268941]]),
    y=_ro([[1.462117, 0.731059], [0.268941, 2.924234]]),
)
W_10.indices.flags.writeable = False

EXAMPLES = _frozen({
    "W-1": W_1, "W-2": W_2, "W-3": W_3, "W-4": W_4,
    "W-5": W_5, "W-6": W_6, "W-7": W_7, "W-8": W_8, "W-9": W_9, "W-10": W_10,
})

# Notebook 12 (low precision): the formats' facts and the worked examples of
# bfloat16 rounding, int8 quantisation and float16 overflow.
PRECISION = _frozen({
    "float16": _frozen({"max": 65504.0, "tiny": 6.103515625e-05, "eps": 2.0**-10, "overflows": 70000.0}),
    "bfloat16": _frozen({"max": 3.3895313892515355e38, "eps": 2.0**-7}),
    # float32 input -> the bfloat16 value PyTorch's conversion gives (as float32)
    "bfloat16_rounding": _frozen({
        3.14159265: 3.140625, 65504.0: 65536.0, 70000.0: 70144.0,
        1.0 + 2.0**-8: 1.0,  # halfway between 1 and 1 + 2^-7: a tie, to the even neighbour 1.0
        1.0 + 3 * 2.0**-9: 1.0078125,
    }),
    "int8": _frozen({
        "W": _ro([[0.5, -1.0], [0.25, 2.0], [-0.75, 0.1]]),
        "scale": _ro([0.75 / 127, 2.0 / 127]),  # 0.00590551, 0.01574803: the columns' max |W| over 127
        "q": ((85, -64), (42, 127), (-127, 6)),
    }),
    # d_model = 4, d_ff = 8, all values exact in float16: z = 4·256·80 = 81920 > 65504,
    # y = 8·81920/1024 = 640 (float16 holds 640 exactly)
    "float16_overflow": _frozen({
        "x": _ro([256.0] * 4), "W1": _ro(np.full((4, 8), 80.0)), "b1": _ro(np.zeros(8)),
        "W2": _ro(np.full((8, 4), 1.0 / 1024)), "b2": _ro(np.zeros(4)), "z": 81920.0, "y": 640.0,
    }),
})
