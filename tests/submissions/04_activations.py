"""Alternative answers for 04_activations."""

from . import Wrong

CORRECT = {
    # exp(-z) overflows for very negative z: numpy warns, the answer catches the warning, the result is right.
    "overflow-caught": {
        "silu": "import warnings\n\nimport numpy as np\n\n\n"
                "def silu(z):\n"
                "    z = np.asarray(z, dtype=float)\n"
                "    with warnings.catch_warnings():\n"
                "        warnings.simplefilter('ignore', RuntimeWarning)\n"
                "        return z / (1.0 + np.exp(-z))\n",
    },
    "erf-exp": {
        "gelu": '''import numpy as np
from scipy import special

def gelu(z):
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (1.0 + special.erf(z / np.sqrt(2.0)))
''',
        "gelu_tanh": '''import numpy as np

def gelu_tanh(z):
    z = np.asarray(z, dtype=float)
    inner = np.sqrt(2.0 / np.pi) * (z + 0.044715 * z ** 3)
    return 0.5 * z * (1.0 + np.tanh(inner))
''',
        "silu": '''import numpy as np

def silu(z):
    z = np.asarray(z, dtype=float)
    return z / (1.0 + np.exp(-z))
''',
        "swiglu_ffn": '''import numpy as np

def swiglu_ffn(x, W_gate, W_up, W_down):
    x = np.asarray(x, dtype=float)
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down
''',
    },
    "math-vectorize-einsum": {
        "gelu": '''import math
import numpy as np

_gelu = np.vectorize(lambda t: 0.5 * t * (1.0 + math.erf(t / math.sqrt(2.0))), otypes=[float])

def gelu(z):
    return _gelu(z)
''',
        "gelu_tanh": '''import math
import numpy as np

def gelu_tanh(z):
    # 0.5 (1 + tanh(u)) = sigmoid(2u)
    z = np.asarray(z, dtype=float)
    u = math.sqrt(2.0 / math.pi) * (z + 0.044715 * z * z * z)
    return z / (1.0 + np.exp(-2.0 * u))
''',
        "silu": '''import numpy as np

def silu(z):
    # sigmoid(z) = (1 + tanh(z / 2)) / 2
    z = np.asarray(z, dtype=float)
    return z * 0.5 * (1.0 + np.tanh(z / 2.0))
''',
        "swiglu_ffn": '''import numpy as np

def swiglu_ffn(x, W_gate, W_up, W_down):
    x = np.asarray(x, dtype=float)
    gate = np.einsum("...i,ij->...j", x, W_gate)
    up = np.einsum("...i,ij->...j", x, W_up)
    return np.einsum("...j,jk->...k", silu(gate) * up, W_down)
''',
    },
    "ndtr-loop": {
        "gelu": '''import numpy as np
from scipy import special

def gelu(z):
    z = np.asarray(z, dtype=float)
    return z * special.ndtr(z)
''',
        "gelu_tanh": '''import numpy as np

def gelu_tanh(z):
    z = np.asarray(z, dtype=float)
    c = np.sqrt(2.0 / np.pi)
    return z * (0.5 + 0.5 * np.tanh(c * z * (1.0 + 0.044715 * z ** 2)))
''',
        "silu": '''import numpy as np
from scipy import special

def silu(z):
    z = np.asarray(z, dtype=float)
    return z * special.expit(z)
''',
        "swiglu_ffn": '''import numpy as np

def swiglu_ffn(x, W_gate, W_up, W_down):
    x = np.asarray(x, dtype=float)
    tokens = x.reshape(-1, x.shape[-1])
    out = np.zeros((tokens.shape[0], W_down.shape[1]))
    for t, token in enumerate(tokens):
        for j in range(W_gate.shape[1]):
            g = token @ W_gate[:, j]
            out[t] += silu(g) * (token @ W_up[:, j]) * W_down[j]
    return out.reshape(x.shape[:-1] + (W_down.shape[1],))
''',
    },
}


def _fn(name, body, imports="import numpy as np\nfrom scipy import special\n"):
    return f"{imports}\ndef {name}:\n    z = np.asarray(z, dtype=float)\n{body}"


_GELU = ("test_gelu", "test_gelu_hidden")
_TANH = ("test_gelu_tanh", "test_gelu_tanh_hidden")
_SILU = ("test_silu", "test_silu_hidden")
_SWIGLU = ("test_swiglu_ffn", "test_swiglu_ffn_hidden")


def _swiglu(expr):
    return ("import numpy as np\n\ndef swiglu_ffn(x, W_gate, W_up, W_down):\n"
            f"    x = np.asarray(x, dtype=float)\n    return {expr}\n")


WRONG = [
    Wrong("gelu-tanh-form", "gelu",
          _fn("gelu(z)", "    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))\n"),
          loses=_GELU, diagnosis="gelu_tanh_for_exact"),
    Wrong("gelu-sigmoid-1702", "gelu", _fn("gelu(z)", "    return z * special.expit(1.702 * z)\n"),
          loses=_GELU, diagnosis="gelu_sigmoid_approx"),
    Wrong("gelu-erf-no-sqrt2", "gelu", _fn("gelu(z)", "    return 0.5 * z * (1 + special.erf(z))\n"),
          loses=_GELU, diagnosis="erf_without_sqrt2"),
    Wrong("gelu-cdf-only", "gelu", _fn("gelu(z)", "    return special.ndtr(z)\n"),
          loses=_GELU, diagnosis="cdf_for_gelu"),
    Wrong("tanh-no-cubic", "gelu_tanh",
          _fn("gelu_tanh(z)", "    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * z))\n"),
          loses=_TANH, diagnosis="missing_cubic_term"),
    Wrong("tanh-sqrt2-over-pi", "gelu_tanh",
          _fn("gelu_tanh(z)", "    return 0.5 * z * (1 + np.tanh(np.sqrt(2) / np.pi * (z + 0.044715 * z**3)))\n"),
          loses=_TANH, diagnosis="sqrt2_over_pi"),
    Wrong("tanh-no-half", "gelu_tanh",
          _fn("gelu_tanh(z)", "    return z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))\n"),
          loses=_TANH, diagnosis="missing_half"),
    Wrong("silu-is-sigmoid", "silu", _fn("silu(z)", "    return 1 / (1 + np.exp(-z))\n"),
          loses=_SILU, diagnosis="sigmoid_for_silu"),
    Wrong("silu-sign", "silu", _fn("silu(z)", "    return z / (1 + np.exp(z))\n"),
          loses=_SILU, diagnosis="sigmoid_sign"),
    Wrong("silu-is-gelu", "silu", _fn("silu(z)", "    return z * special.ndtr(z)\n"),
          loses=_SILU, diagnosis="gelu_for_silu"),
    Wrong("swiglu-swapped", "swiglu_ffn", _swiglu("(silu(x @ W_up) * (x @ W_gate)) @ W_down"),
          loses=_SWIGLU, diagnosis="gate_up_swapped"),
    Wrong("swiglu-no-silu", "swiglu_ffn", _swiglu("((x @ W_gate) * (x @ W_up)) @ W_down"),
          loses=_SWIGLU, diagnosis="missing_silu"),
    Wrong("swiglu-sum", "swiglu_ffn", _swiglu("(silu(x @ W_gate) + (x @ W_up)) @ W_down"),
          loses=_SWIGLU, diagnosis="sum_for_product"),
    Wrong("swiglu-relu", "swiglu_ffn", _swiglu("(np.maximum(x @ W_gate, 0) * (x @ W_up)) @ W_down"),
          loses=_SWIGLU, diagnosis="relu_for_silu"),
]
