"""Held-out pairs for 08_limiting_behaviour."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "08_limiting_behaviour"

CLASSMATE_SIGMOID = '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out
'''

PAIRS = [
    Pair("renamed", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    arr = np.asarray(z, dtype=float)
    small = np.exp(-np.abs(arr))
    return np.where(arr >= 0, 1.0 / (1.0 + small), small / (1.0 + small))
'''),
    Pair("commented", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    # exp of a non-positive number cannot overflow
    e = np.exp(-np.abs(z))
    # two formulas depending on the sign of z
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
'''),
    Pair("parentheses", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp((-(np.abs(z))))
    return np.where((z >= 0), (1.0 / (1.0 + e)), (e / (1.0 + e)))
'''),
    Pair("temporaries", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    denom = 1.0 + e
    positive = 1.0 / denom
    negative = e / denom
    return np.where(z >= 0, positive, negative)
'''),
    Pair("dead_code", "sigmoid", CLASSMATE_SIGMOID, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    pos = z >= 0
    # naive = 1 / (1 + np.exp(-z))  # overflows
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    if out.ndim == 0:
        return out
    return out
'''),
    Pair("reordered", "sigmoid", CLASSMATE_SIGMOID, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    pos = z >= 0
    out = np.empty_like(z)
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    return out
'''),
    Pair("renamed", "sigmoid", CLASSMATE_SIGMOID, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    v = np.asarray(z, dtype=float)
    res = np.empty_like(v)
    mask = v >= 0
    res[mask] = 1.0 / (1.0 + np.exp(-v[mask]))
    expv = np.exp(v[~mask])
    res[~mask] = expv / (1.0 + expv)
    return res
'''),
    Pair("independent", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    return 0.5 * (1.0 + np.tanh(0.5 * z))
'''),
    Pair("independent", "sigmoid", CLASSMATE_SIGMOID, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    return np.exp(-np.logaddexp(0.0, -z))
'''),
    Pair("renamed", "silu_stable", SOLUTION, '''def silu_stable(v):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    v = np.asarray(v, dtype=float)
    t = np.exp(-np.abs(v))
    return v * np.where(v >= 0, 1.0 / (1.0 + t), t / (1.0 + t))
'''),
    Pair("dead_code", "silu_stable", SOLUTION, '''def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    while False:
        e = e * 2
    return z * np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
'''),
    Pair("free_cell", "silu_stable", SOLUTION, '''def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    return stable_silu_helper(z)
''', free='''def stable_silu_helper(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return z * np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
'''),
    Pair("independent", "silu_stable", SOLUTION, '''def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    return z * special.expit(z)
'''),
    Pair("renamed", "gelu_exact", SOLUTION, '''def gelu_exact(value):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    value = np.asarray(value, dtype=float)
    return 0.5 * value * special.erfc(-value / np.sqrt(2.0))
'''),
    Pair("temporaries", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    z = np.asarray(z, dtype=float)
    root2 = np.sqrt(2.0)
    cdf = 0.5 * special.erfc(-z / root2)
    return z * cdf
'''),
    Pair("independent", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    return np.asarray(z, dtype=float) * stats.norm.cdf(z)
'''),
    Pair("reformatted", "sigmoid", SOLUTION, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0,
                    1.0/(1.0 + e),
                    e/(1.0 + e))
'''),
    Pair("free_cell", "sigmoid", CLASSMATE_SIGMOID, '''def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    return safe_sigmoid(z)
''', free='''def safe_sigmoid(z):
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out
'''),
    Pair("commented", "silu_stable", SOLUTION, '''def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))  # never overflows
    # same trick as the stable sigmoid above
    return z * np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
'''),
    Pair("parentheses", "silu_stable", SOLUTION, '''def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    z = np.asarray(z, dtype=float)
    e = np.exp(-(np.abs(z)))
    return (z * (np.where((z >= 0), (1.0 / (1.0 + e)), (e / (1.0 + e)))))
'''),
    Pair("reformatted", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    z = np.asarray(z, dtype=float)
    return 0.5*z*special.erfc(-z/np.sqrt(2.0))
'''),
    Pair("commented", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    z = np.asarray(z, dtype=float)
    # Phi(z) = erfc(-z / sqrt 2) / 2, accurate in the left tail
    return 0.5 * z * special.erfc(-z / np.sqrt(2.0))
'''),
    Pair("free_cell", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    return gelu_erfc(z)
''', free='''def gelu_erfc(t):
    t = np.asarray(t, dtype=float)
    return 0.5 * t * special.erfc(-t / np.sqrt(2.0))
'''),
    Pair("parentheses", "gelu_exact", SOLUTION, '''def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    z = np.asarray(z, dtype=float)
    return ((0.5 * z) * special.erfc(((-z) / np.sqrt(2.0))))
'''),
]
