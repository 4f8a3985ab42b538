"""Alternative answers for 08_limiting_behaviour.

Each answer cell is self-contained: a submission replaces only the cells it names,
so the others still raise NotImplementedError.
"""

from . import Wrong

# --- sigmoid -----------------------------------------------------------------------------------

_SIGMOID_MASKS = '''import numpy as np

def sigmoid(z):
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    positive = z >= 0
    out[positive] = 1.0 / (1.0 + np.exp(-z[positive]))
    e = np.exp(z[~positive])
    out[~positive] = e / (1.0 + e)
    return out
'''

_SIGMOID_LOGADDEXP = '''import numpy as np

def sigmoid(z):
    # s(z) = exp(-log(1 + e^(-z))); logaddexp(0, -z) never overflows
    return np.exp(-np.logaddexp(0.0, -np.asarray(z, dtype=float)))
'''

_SIGMOID_EXPIT = '''from scipy.special import expit

def sigmoid(z):
    return expit(z)
'''

_SIGMOID_NAIVE = '''import numpy as np

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=float)))
'''

_SIGMOID_WHERE = '''import numpy as np

def sigmoid(z):
    z = np.asarray(z, dtype=float)
    return np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))
'''

_SIGMOID_TANH = '''import numpy as np

def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))
'''

_SIGMOID_EXP_RATIO = '''import numpy as np

def sigmoid(z):
    e = np.exp(np.asarray(z, dtype=float))
    return e / (1.0 + e)
'''

# --- silu_stable -------------------------------------------------------------------------------

_SILU_MASKS = '''import numpy as np

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    s = np.empty_like(z)
    positive = z >= 0
    s[positive] = 1.0 / (1.0 + np.exp(-z[positive]))
    e = np.exp(z[~positive])
    s[~positive] = e / (1.0 + e)
    return z * s
'''

_SILU_EXPIT = '''import numpy as np
from scipy import special

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    return z * special.expit(z)
'''

_SILU_ABS = '''import numpy as np

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, z / (1.0 + e), z * e / (1.0 + e))
'''

_SILU_NAIVE = '''import numpy as np

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    return z / (1.0 + np.exp(-z))
'''

_SILU_WHERE = '''import numpy as np

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    return z * np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))
'''

_SILU_TANH = '''import numpy as np

def silu_stable(z):
    z = np.asarray(z, dtype=float)
    return z * 0.5 * (1.0 + np.tanh(0.5 * z))
'''

_SILU_SIGMOID_ONLY = '''from scipy import special

def silu_stable(z):
    return special.expit(z)
'''

# --- gelu_exact --------------------------------------------------------------------------------

_GELU_NDTR = '''import numpy as np
from scipy.special import ndtr

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return z * ndtr(z)
'''

_GELU_MATH_ERFC = '''import math
import numpy as np

_erfc = np.vectorize(math.erfc, otypes=[float])

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return 0.5 * z * _erfc(-z / math.sqrt(2.0))
'''

_GELU_ERFC_SQRT_HALF = '''import numpy as np
from scipy import special

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return z * (0.5 * special.erfc(-z * np.sqrt(0.5)))
'''

_GELU_ERF = '''import numpy as np
from scipy.special import erf

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (1.0 + erf(z / np.sqrt(2.0)))
'''

_GELU_TANH = '''import numpy as np

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z**3)))
'''

_GELU_ERFC_SIGN = '''import numpy as np
from scipy.special import erfc

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return 0.5 * z * erfc(z / np.sqrt(2.0))
'''

_GELU_OVERFLOW_ORDER = '''import numpy as np
from scipy.special import erfc

def gelu_exact(z):
    z = np.asarray(z, dtype=float)
    return z * erfc(-z / np.sqrt(2.0)) / 2.0   # z * 2 overflows near the top of float64
'''

CORRECT = {
    "masks": {"sigmoid": _SIGMOID_MASKS, "silu_stable": _SILU_MASKS, "gelu_exact": _GELU_NDTR},
    "library": {"sigmoid": _SIGMOID_EXPIT, "silu_stable": _SILU_EXPIT, "gelu_exact": _GELU_MATH_ERFC},
    "logaddexp": {"sigmoid": _SIGMOID_LOGADDEXP, "silu_stable": _SILU_ABS, "gelu_exact": _GELU_ERFC_SQRT_HALF},
}

WRONG = [
    Wrong("sigmoid-naive", "sigmoid", _SIGMOID_NAIVE, loses=("test_sigmoid", "test_sigmoid_hidden"),
          diagnosis="naive_sigmoid_overflow"),
    Wrong("sigmoid-where", "sigmoid", _SIGMOID_WHERE, loses=("test_sigmoid", "test_sigmoid_hidden"),
          diagnosis="where_evaluates_both_branches"),
    Wrong("sigmoid-tanh", "sigmoid", _SIGMOID_TANH, loses=("test_sigmoid_hidden",), diagnosis="tanh_cancellation"),
    Wrong("sigmoid-exp-ratio", "sigmoid", _SIGMOID_EXP_RATIO, loses=("test_sigmoid", "test_sigmoid_hidden"),
          diagnosis="exp_ratio_overflow"),
    Wrong("silu-naive", "silu_stable", _SILU_NAIVE, loses=("test_silu_stable", "test_silu_stable_hidden"),
          diagnosis="naive_silu_overflow"),
    Wrong("silu-where", "silu_stable", _SILU_WHERE, loses=("test_silu_stable", "test_silu_stable_hidden"),
          diagnosis="where_evaluates_both_branches"),
    # Exact on paper and quiet, but 1 + tanh(z/2) cancels in the tails the exercise names.
    Wrong("silu-tanh", "silu_stable", _SILU_TANH, loses=("test_silu_stable_hidden",), diagnosis="tanh_cancellation"),
    Wrong("silu-sigmoid-only", "silu_stable", _SILU_SIGMOID_ONLY,
          loses=("test_silu_stable", "test_silu_stable_hidden"), diagnosis="sigmoid_for_silu"),
    Wrong("gelu-erf", "gelu_exact", _GELU_ERF, loses=("test_gelu_exact", "test_gelu_exact_hidden"),
          diagnosis="erf_cancellation"),
    Wrong("gelu-tanh", "gelu_exact", _GELU_TANH, loses=("test_gelu_exact", "test_gelu_exact_hidden"),
          diagnosis="gelu_tanh_for_exact"),
    Wrong("gelu-erfc-sign", "gelu_exact", _GELU_ERFC_SIGN, loses=("test_gelu_exact", "test_gelu_exact_hidden"),
          diagnosis="erfc_sign"),
    Wrong("gelu-overflow-order", "gelu_exact", _GELU_OVERFLOW_ORDER, loses=("test_gelu_exact_hidden",)),
]
