"""Held-out pairs for 04_activations."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "04_activations"

CLASSMATE_TANH = '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    c = math.sqrt(2 / math.pi)
    inner = c * (z + 0.044715 * np.power(z, 3))
    return 0.5 * z * (1 + np.tanh(inner))
'''

PAIRS = [
    Pair("renamed", "gelu", SOLUTION, '''def gelu(u):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    u = np.asarray(u, dtype=float)
    return u * special.ndtr(u)
'''),
    Pair("commented", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)  # work in float64
    # ndtr is the standard normal CDF Phi
    return z * special.ndtr(z)
'''),
    Pair("dead_code", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    approx = 0.5 * z * (1 + np.tanh(0.79788456 * (z + 0.044715 * z ** 3)))
    return z * special.ndtr(z)
'''),
    Pair("independent", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    phi = 0.5 * (1.0 + special.erf(z / math.sqrt(2.0)))
    return z * phi
'''),
    Pair("renamed", "gelu_tanh", SOLUTION, '''def gelu_tanh(t):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    t = np.asarray(t, dtype=float)
    return 0.5 * t * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (t + 0.044715 * t**3)))
'''),
    Pair("reformatted", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (
        1.0
        + np.tanh(
            np.sqrt(2.0 / np.pi)
            * (z + 0.044715 * z**3)
        )
    )
'''),
    Pair("parentheses", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    return ((0.5 * z) * (1.0 + np.tanh((np.sqrt((2.0 / np.pi)) * (z + (0.044715 * (z**3)))))))
'''),
    Pair("temporaries", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    k = np.sqrt(2.0 / np.pi)
    cube = z**3
    arg = k * (z + 0.044715 * cube)
    t = np.tanh(arg)
    return 0.5 * z * (1.0 + t)
'''),
    Pair("free_cell", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    return approx_gelu(z)
''', free='''def approx_gelu(v):
    v = np.asarray(v, dtype=float)
    return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * v**3)))

z_demo = np.linspace(-3, 3, 7)
print(approx_gelu(z_demo))
'''),
    Pair("renamed", "gelu_tanh", CLASSMATE_TANH, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    coef = math.sqrt(2 / math.pi)
    arg = coef * (z + 0.044715 * np.power(z, 3))
    return 0.5 * z * (1 + np.tanh(arg))
'''),
    Pair("dead_code", "gelu_tanh", CLASSMATE_TANH, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    c = math.sqrt(2 / math.pi)
    if z.size == 0:
        pass
    inner = c * (z + 0.044715 * np.power(z, 3))
    return 0.5 * z * (1 + np.tanh(inner))
'''),
    Pair("independent", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    x = np.asarray(z, dtype=np.float64)
    u = 0.7978845608028654 * x * (1.0 + 0.044715 * x * x)
    return x / (1.0 + np.exp(-2.0 * u))
'''),
    Pair("renamed", "silu", SOLUTION, '''def silu(a):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""
    a = np.asarray(a, dtype=float)
    return a * special.expit(a)
'''),
    Pair("temporaries", "silu", SOLUTION, '''def silu(z):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    sig = special.expit(z)
    out = z * sig
    return out
'''),
    Pair("independent", "silu", SOLUTION, '''def silu(z):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    return z / (1 + np.exp(-z))
'''),
    Pair("renamed", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(inp, Wg, Wu, Wd):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    inp = np.asarray(inp, dtype=float)
    return (silu(inp @ Wg) * (inp @ Wu)) @ Wd
'''),
    Pair("commented", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = np.asarray(x, dtype=float)
    # gate * up, then project down
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down  # no biases in SwiGLU
'''),
    Pair("temporaries", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = np.asarray(x, dtype=float)
    gate = silu(x @ W_gate)
    up = x @ W_up
    hidden = gate * up
    return hidden @ W_down
'''),
    Pair("reordered", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = np.asarray(x, dtype=float)
    return ((x @ W_up) * silu(x @ W_gate)) @ W_down
'''),
    Pair("dead_code", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = np.asarray(x, dtype=float)
    d_model, d_ff = np.shape(W_gate)
    assert np.shape(W_down) == (d_ff, d_model)
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down
'''),
    Pair("independent", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    both = np.concatenate([W_gate, W_up], axis=1)
    projected = np.asarray(x, float) @ both
    g, u = np.split(projected, 2, axis=-1)
    return np.matmul(g * special.expit(g) * u, W_down)
'''),
    Pair("reformatted", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    z=np.asarray(z,dtype=float); return z*special.ndtr(z)
'''),
    Pair("parentheses", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    z = np.asarray((z), dtype=float)
    return (z * (special.ndtr(z)))
'''),
    Pair("free_cell", "gelu", SOLUTION, '''def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    return exact(z)
''', free='''def exact(z):
    z = np.asarray(z, dtype=float)
    return z * special.ndtr(z)
'''),
    Pair("commented", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    # Hendrycks & Gimpel's approximation, as in GPT-2
    return 0.5 * z * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z**3)))  # 0.044715 from the paper
'''),
    Pair("reordered", "gelu_tanh", CLASSMATE_TANH, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    c = math.sqrt(2 / math.pi)
    z = np.asarray(z, dtype=float)
    inner = c * (z + 0.044715 * np.power(z, 3))
    return 0.5 * z * (1 + np.tanh(inner))
'''),
    Pair("parentheses", "silu", SOLUTION, '''def silu(z):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""
    z = (np.asarray(z, dtype=float))
    return (z) * (special.expit(z))
'''),
    Pair("reformatted", "silu", SOLUTION, '''def silu(z):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""

    z = np.asarray(
        z,
        dtype=float,
    )

    return z * special.expit(
        z
    )
'''),
    Pair("free_cell", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    return gated(x, W_gate, W_up, W_down)
''', free='''def gated(x, Wg, Wu, Wd):
    x = np.asarray(x, dtype=float)
    return (silu(x @ Wg) * (x @ Wu)) @ Wd
'''),
    Pair("reformatted", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = np.asarray(x, dtype=float)
    return (
        silu(x @ W_gate)
        * (x @ W_up)
    ) @ W_down
'''),
    Pair("parentheses", "swiglu_ffn", SOLUTION, '''def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    x = (np.asarray(x, dtype=float))
    return ((silu((x @ W_gate)) * (x @ W_up)) @ (W_down))
'''),
    Pair("reordered", "gelu_tanh", SOLUTION, '''def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (np.tanh(np.sqrt(2.0 / np.pi) * (0.044715 * z**3 + z)) + 1.0)
'''),
]
