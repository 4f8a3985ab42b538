"""Held-out pairs for 02_forward_pass."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "02_forward_pass"

CLASSMATE_FFN = '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    hidden = x @ W1 + b1
    hidden[hidden < 0] = 0
    return hidden @ W2 + b2
'''

CLASSMATE_LINEAR = '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    out = np.matmul(x, np.transpose(weight))
    if bias is not None:
        out = out + bias
    return out
'''

PAIRS = [
    Pair("renamed", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    pre = np.asarray(x, dtype=float) @ W1 + b1
    act = np.maximum(pre, 0.0)
    return act @ W2 + b2
'''),
    Pair("commented", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    # first layer: project up to d_ff
    z = np.asarray(x, dtype=float) @ W1 + b1
    # ReLU: kill the negatives
    h = np.maximum(z, 0.0)
    # second layer back down to d_model
    return h @ W2 + b2
'''),
    Pair("reformatted", "ffn_forward", SOLUTION, '''def ffn_forward(x,W1,b1,W2,b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""

    z=np.asarray(x,dtype=float)@W1+b1

    h=np.maximum(z,0.0)

    return h@W2+b2
'''),
    Pair("parentheses", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    z = ((np.asarray(x, dtype=float) @ W1) + b1)
    h = np.maximum((z), 0.0)
    return ((h @ W2) + b2)
'''),
    Pair("dead_code", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    d_model = W1.shape[0]
    z = np.asarray(x, dtype=float) @ W1 + b1
    unused = z.copy()
    h = np.maximum(z, 0.0)
    return h @ W2 + b2
    print("done")
'''),
    Pair("temporaries", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    xf = np.asarray(x, dtype=float)
    xw = xf @ W1
    z = xw + b1
    h = np.maximum(z, 0.0)
    hw = h @ W2
    y = hw + b2
    return y
'''),
    Pair("free_cell", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    return forward(x, W1, b1, W2, b2)
''', free='''def forward(inp, A, a, B, c):
    z = np.asarray(inp, dtype=float) @ A + a
    h = np.maximum(z, 0.0)
    return h @ B + c
'''),
    Pair("temporaries", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    first = x @ W1
    hidden = first + b1
    negative = hidden < 0
    hidden[negative] = 0
    result = hidden @ W2 + b2
    return result
'''),
    Pair("dead_code", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    hidden = x @ W1 + b1
    n_negative = np.sum(hidden < 0)
    hidden[hidden < 0] = 0
    if n_negative < 0:
        raise RuntimeError("impossible")
    return hidden @ W2 + b2
'''),
    Pair("independent", "ffn_forward", SOLUTION, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    return np.clip(np.matmul(x, W1) + b1, 0, None).dot(W2) + b2
'''),
    Pair("independent", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for token in flat:
        pre = token @ W1 + b1
        rows.append(np.where(pre > 0, pre, 0.0) @ W2 + b2)
    return np.array(rows).reshape(x.shape[:-1] + (W2.shape[1],))
'''),
    Pair("renamed", "linear_torch", SOLUTION, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    out = np.asarray(x, dtype=float) @ np.asarray(weight, dtype=float).T
    return out if bias is None else out + bias
'''),
    Pair("commented", "linear_torch", SOLUTION, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    # torch stores weight as (out, in) so transpose it
    y = np.asarray(x, dtype=float) @ np.asarray(weight, dtype=float).T
    return y if bias is None else y + bias  # bias is optional
'''),
    Pair("reformatted", "linear_torch", CLASSMATE_LINEAR, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    out = np.matmul(
        x,
        np.transpose(weight),
    )
    if bias is not None: out = out + bias
    return out
'''),
    Pair("renamed", "linear_torch", CLASSMATE_LINEAR, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    res = np.matmul(x, np.transpose(weight))
    if bias is not None:
        res = res + bias
    return res
'''),
    Pair("dead_code", "linear_torch", SOLUTION, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    n_out, n_in = np.shape(weight)
    y = np.asarray(x, dtype=float) @ np.asarray(weight, dtype=float).T
    return y if bias is None else y + bias
'''),
    Pair("independent", "linear_torch", SOLUTION, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    result = np.einsum("...i,oi->...o", np.asarray(x, float), np.asarray(weight, float))
    if bias is None:
        return result
    return result + np.asarray(bias, float)
'''),
    Pair("renamed", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    pre = np.asarray(x, dtype=float) @ W1 + b1
    return float(np.mean(pre <= 0))
'''),
    Pair("temporaries", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    z = np.asarray(x, dtype=float) @ W1 + b1
    dead = z <= 0
    share = np.mean(dead)
    return float(share)
'''),
    Pair("free_cell", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    return frac_dead(x, W1, b1)
''', free='''def frac_dead(x, W1, b1):
    z = np.asarray(x, dtype=float) @ W1 + b1
    return float(np.mean(z <= 0))
'''),
    Pair("independent", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    h = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0)
    return np.count_nonzero(h == 0) / h.size
'''),
    Pair("reordered", "linear_torch", CLASSMATE_LINEAR, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    weight_t = np.transpose(weight)
    x = np.asarray(x)
    out = np.matmul(x, weight_t)
    if bias is not None:
        out = out + bias
    return out
'''),
    Pair("parentheses", "linear_torch", SOLUTION, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    y = (np.asarray(x, dtype=float)) @ (np.asarray(weight, dtype=float).T)
    return (y if (bias is None) else (y + bias))
'''),
    Pair("free_cell", "linear_torch", CLASSMATE_LINEAR, '''def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    return torch_like_linear(x, weight, bias)
''', free='''def torch_like_linear(inp, w, b):
    result = np.matmul(inp, np.transpose(w))
    if b is not None:
        result = result + b
    return result
'''),
    Pair("commented", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    z = np.asarray(x, dtype=float) @ W1 + b1  # pre-activations
    # a unit is dead when z <= 0 (ReLU gives exactly 0 then)
    return float(np.mean(z <= 0))
'''),
    Pair("parentheses", "dead_fraction", SOLUTION, '''def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    z = (np.asarray(x, dtype=float) @ W1) + b1
    return float(np.mean((z <= 0)))
'''),
    Pair("reformatted", "dead_fraction", SOLUTION, '''def dead_fraction( x, W1, b1 ):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    z = np.asarray( x, dtype=float ) @ W1 + b1 ; return float( np.mean( z <= 0 ) )
'''),
    Pair("reordered", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    hidden = x @ W1 + b1
    hidden[hidden < 0] = 0
    return b2 + hidden @ W2
'''),
    Pair("reformatted", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    hidden = x@W1 + b1; hidden[hidden<0] = 0
    return hidden@W2 + b2
'''),
    Pair("commented", "ffn_forward", CLASSMATE_FFN, '''def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    hidden = x @ W1 + b1  # (..., d_ff)
    hidden[hidden < 0] = 0  # ReLU in place
    return hidden @ W2 + b2  # (..., d_model)
'''),
]
