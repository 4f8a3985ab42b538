"""Held-out pairs for 03_residual_layernorm."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "03_residual_layernorm"

CLASSMATE_LN = '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    normed = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    if gamma is None:
        gamma = np.ones(x.shape[-1])
    if beta is None:
        beta = np.zeros(x.shape[-1])
    return gamma * normed + beta
'''

PAIRS = [
    Pair("renamed", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    arr = np.asarray(x, dtype=float)
    mean = arr.mean(axis=-1, keepdims=True)
    variance = ((arr - mean) ** 2).mean(axis=-1, keepdims=True)
    result = (arr - mean) / np.sqrt(variance + eps)
    if gamma is not None:
        result = result * gamma
    if beta is not None:
        result = result + beta
    return result
'''),
    Pair("commented", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    # statistics over the features of each token
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)  # biased variance, like torch
    out = (x - mu) / np.sqrt(var + eps)
    # optional affine part
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
'''),
    Pair("dead_code", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    std = np.sqrt(var)
    out = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
'''),
    Pair("temporaries", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    centred = x - mu
    squares = centred ** 2
    var = squares.mean(axis=-1, keepdims=True)
    denom = np.sqrt(var + eps)
    out = centred / denom
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
'''),
    Pair("parentheses", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    var = (((x - mu) ** 2)).mean(axis=(-1), keepdims=True)
    out = ((x - mu) / (np.sqrt((var + eps))))
    if (gamma is not None):
        out = (out * gamma)
    if (beta is not None):
        out = (out + beta)
    return (out)
'''),
    Pair("reformatted", "layer_norm", CLASSMATE_LN, '''def layer_norm(x,
               gamma=None,
               beta=None,
               eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    normed = (x - np.mean(x, axis=-1, keepdims=True)) \\
        / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    if gamma is None: gamma = np.ones(x.shape[-1])
    if beta is None: beta = np.zeros(x.shape[-1])
    return gamma * normed + beta
'''),
    Pair("temporaries", "layer_norm", CLASSMATE_LN, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    m = np.mean(x, axis=-1, keepdims=True)
    v = np.var(x, axis=-1, keepdims=True)
    normed = (x - m) / np.sqrt(v + eps)
    d = x.shape[-1]
    if gamma is None:
        gamma = np.ones(d)
    if beta is None:
        beta = np.zeros(d)
    scaled = gamma * normed
    return scaled + beta
'''),
    Pair("commented", "layer_norm", CLASSMATE_LN, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    # normalise: zero mean, unit variance per row
    normed = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    # defaults: gamma = 1, beta = 0
    if gamma is None:
        gamma = np.ones(x.shape[-1])
    if beta is None:
        beta = np.zeros(x.shape[-1])
    return gamma * normed + beta  # scale and shift
'''),
    Pair("independent", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.array(x, dtype=float)
    n = x.shape[-1]
    total = x.sum(axis=-1)[..., None]
    average = total / n
    spread = np.sum(np.square(x - average), axis=-1)[..., None] / n
    y = (x - average) * (1.0 / np.sqrt(spread + eps))
    g = 1.0 if gamma is None else np.asarray(gamma)
    s = 0.0 if beta is None else np.asarray(beta)
    return y * g + s
'''),
    Pair("independent", "layer_norm", CLASSMATE_LN, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1, x.shape[-1])
    out = np.empty_like(flat)
    for i, row in enumerate(flat):
        centred = row - row.mean()
        out[i] = centred / math.sqrt(centred.dot(centred) / len(row) + eps)
    out = out.reshape(x.shape)
    if gamma is not None:
        out *= gamma
    if beta is not None:
        out += beta
    return out
'''),
    Pair("renamed", "post_ln_block", SOLUTION, '''def post_ln_block(inp, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    inp = np.asarray(inp, dtype=float)
    return layer_norm(inp + sublayer(inp), eps=eps)
'''),
    Pair("temporaries", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    s = sublayer(x)
    residual = x + s
    return layer_norm(residual, eps=eps)
'''),
    Pair("dead_code", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    shape_in = x.shape
    return layer_norm(x + sublayer(x), eps=eps)
'''),
    Pair("independent", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    summed = np.add(x, sublayer(np.asarray(x, float)))
    mu = summed.mean(-1, keepdims=True)
    sd = np.sqrt(summed.var(-1, keepdims=True) + eps)
    return (summed - mu) / sd
'''),
    Pair("renamed", "pre_ln_block", SOLUTION, '''def pre_ln_block(tokens, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    tokens = np.asarray(tokens, dtype=float)
    return tokens + sublayer(layer_norm(tokens, eps=eps))
'''),
    Pair("commented", "pre_ln_block", SOLUTION, '''def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    # normalise first, then add the residual
    return x + sublayer(layer_norm(x, eps=eps))
'''),
    Pair("free_cell", "pre_ln_block", SOLUTION, '''def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    return pre_norm(x, sublayer, eps)
''', free='''def pre_norm(x, f, eps):
    x = np.asarray(x, dtype=float)
    return x + f(layer_norm(x, eps=eps))
'''),
    Pair("temporaries", "pre_ln_block", SOLUTION, '''def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    normed = layer_norm(x, eps=eps)
    update = sublayer(normed)
    return x + update
'''),
    Pair("independent", "pre_ln_block", SOLUTION, '''def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    out = np.array(x, dtype=float, copy=True)
    out += sublayer(layer_norm(out, None, None, eps))
    return out
'''),
    Pair("reordered", "layer_norm", CLASSMATE_LN, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    if beta is None:
        beta = np.zeros(x.shape[-1])
    if gamma is None:
        gamma = np.ones(x.shape[-1])
    normed = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    return gamma * normed + beta
'''),
    Pair("free_cell", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    return ln(x, gamma, beta, eps)
''', free='''def ln(x, g, b, eps):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    if g is not None:
        out = out * g
    if b is not None:
        out = out + b
    return out
'''),
    Pair("reformatted", "layer_norm", SOLUTION, '''def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True); var = ((x - mu)**2).mean(axis=-1, keepdims=True)
    out = (x - mu)/np.sqrt(var + eps)
    if gamma is not None: out = out*gamma
    if beta is not None: out = out+beta
    return out
'''),
    Pair("parentheses", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = (np.asarray(x, dtype=float))
    return layer_norm((x + (sublayer(x))), eps=(eps))
'''),
    Pair("free_cell", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    return post(x, sublayer, eps)
''', free='''def post(x, sub, eps=1e-5):
    x = np.asarray(x, dtype=float)
    return layer_norm(x + sub(x), eps=eps)
'''),
    Pair("commented", "post_ln_block", SOLUTION, '''def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    # residual first, then normalise (original transformer)
    return layer_norm(x + sublayer(x), eps=eps)
'''),
    Pair("reformatted", "pre_ln_block", SOLUTION, '''def pre_ln_block(x,
                 sublayer,
                 eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x,
                   dtype=float)
    return x + sublayer(
        layer_norm(x, eps=eps)
    )
'''),
    Pair("parentheses", "pre_ln_block", SOLUTION, '''def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    x = np.asarray(x, dtype=float)
    return (x + (sublayer((layer_norm(x, eps=eps)))))
'''),
]
