"""Held-out pairs for 09_ffn_module."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "09_ffn_module"

CLASSMATE_FORWARD = '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    activations = {
        "relu": lambda z: np.maximum(z, 0.0),
        "gelu": lambda z: z * special.ndtr(z),
        "silu": lambda z: z * special.expit(z),
    }
    if activation not in activations:
        raise ValueError(f"unknown activation {activation}")
    z = np.asarray(x, dtype=float) @ W1 + (0.0 if b1 is None else b1)
    return activations[activation](z) @ W2 + (0.0 if b2 is None else b2)
'''

PAIRS = [
    Pair("renamed", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    sigma = np.sqrt(2.0 / (d_model + d_ff))
    gen = np.random.default_rng(seed)
    first = gen.normal(0.0, sigma, size=(d_model, d_ff))
    second = gen.normal(0.0, sigma, size=(d_ff, d_model))
    if not use_bias:
        return first, None, second, None
    return first, np.zeros(d_ff), second, np.zeros(d_model)
'''),
    Pair("reordered", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    rng = np.random.default_rng(seed)
    std = np.sqrt(2.0 / (d_model + d_ff))
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)
'''),
    Pair("commented", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    std = np.sqrt(2.0 / (d_model + d_ff))  # Glorot
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))  # W1 must be drawn first!
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    # biases start at zero
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)
'''),
    Pair("dead_code", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    std = np.sqrt(2.0 / (d_model + d_ff))
    he_std = np.sqrt(2.0 / d_model)
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    else:
        pass
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)
'''),
    Pair("independent", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    generator = np.random.default_rng(seed)
    spread = math.sqrt(2 / (d_model + d_ff))
    weights = [generator.standard_normal(shape) * spread for shape in ((d_model, d_ff), (d_ff, d_model))]
    biases = [np.zeros(d_ff), np.zeros(d_model)] if use_bias else [None, None]
    return weights[0], biases[0], weights[1], biases[1]
'''),
    Pair("renamed", "count_parameters", SOLUTION, '''def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1 and W2, and of b1, b2 unless None (an int)."""
    return sum(int(np.size(t)) for t in (W1, b1, W2, b2) if t is not None)
'''),
    Pair("temporaries", "count_parameters", SOLUTION, '''def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1 and W2, and of b1, b2 unless None (an int)."""
    params = (W1, b1, W2, b2)
    sizes = [int(np.size(p)) for p in params if p is not None]
    return sum(sizes)
'''),
    Pair("independent", "count_parameters", SOLUTION, '''def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1 and W2, and of b1, b2 unless None (an int)."""
    n = W1.size + W2.size
    if b1 is not None:
        n += len(b1)
    if b2 is not None:
        n += len(b2)
    return int(n)
'''),
    Pair("renamed", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    pre = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        pre = pre + b1
    if activation == "relu":
        act = np.maximum(pre, 0.0)
    elif activation == "gelu":
        act = pre * special.ndtr(pre)
    elif activation == "silu":
        act = pre * special.expit(pre)
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")
    out = act @ W2
    return out if b2 is None else out + b2
'''),
    Pair("reformatted", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation = "relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    z = np.asarray(x, dtype = float) @ W1
    if b1 is not None: z = z + b1

    if activation == "relu": h = np.maximum(z, 0.0)
    elif activation == "gelu": h = z * special.ndtr(z)
    elif activation == "silu": h = z * special.expit(z)
    else: raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")

    y = h @ W2
    return y if b2 is None else y + b2
'''),
    Pair("dead_code", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h = np.maximum(z, 0.0)
    elif activation == "gelu":
        h = z * special.ndtr(z)
    elif activation == "silu":
        h = z * special.expit(z)
    elif activation == "tanh":
        h = np.tanh(z)
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")
    y = h @ W2
    return y if b2 is None else y + b2
'''),
    Pair("free_cell", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    return my_forward(x, W1, b1, W2, b2, activation)
''', free='''def my_forward(x, W1, b1, W2, b2, act):
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if act == "relu":
        h = np.maximum(z, 0.0)
    elif act == "gelu":
        h = z * special.ndtr(z)
    elif act == "silu":
        h = z * special.expit(z)
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {act!r}")
    y = h @ W2
    return y if b2 is None else y + b2
'''),
    Pair("commented", "ffn_module_forward", CLASSMATE_FORWARD, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    # table of the three activations
    activations = {
        "relu": lambda z: np.maximum(z, 0.0),
        "gelu": lambda z: z * special.ndtr(z),  # exact
        "silu": lambda z: z * special.expit(z),
    }
    if activation not in activations:
        raise ValueError(f"unknown activation {activation}")
    # a missing bias acts like zero
    z = np.asarray(x, dtype=float) @ W1 + (0.0 if b1 is None else b1)
    return activations[activation](z) @ W2 + (0.0 if b2 is None else b2)
'''),
    Pair("temporaries", "ffn_module_forward", CLASSMATE_FORWARD, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    activations = {
        "relu": lambda z: np.maximum(z, 0.0),
        "gelu": lambda z: z * special.ndtr(z),
        "silu": lambda z: z * special.expit(z),
    }
    if activation not in activations:
        raise ValueError(f"unknown activation {activation}")
    first_bias = 0.0 if b1 is None else b1
    second_bias = 0.0 if b2 is None else b2
    z = np.asarray(x, dtype=float) @ W1 + first_bias
    sigma = activations[activation]
    h = sigma(z)
    return h @ W2 + second_bias
'''),
    Pair("independent", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    z = np.matmul(x, W1)
    z = z if b1 is None else z + b1
    match activation:
        case "relu":
            h = z * (z > 0)
        case "gelu":
            h = 0.5 * z * (1 + special.erf(z / np.sqrt(2)))
        case "silu":
            h = z / (1 + np.exp(-z))
        case _:
            raise ValueError("activation must be relu, gelu or silu")
    out = np.matmul(h, W2)
    if b2 is not None:
        out += b2
    return out
'''),
    Pair("independent", "ffn_module_forward", CLASSMATE_FORWARD, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    if activation not in ("relu", "gelu", "silu"):
        raise ValueError(activation)
    pre = np.einsum("...i,ij->...j", np.asarray(x, float), W1)
    if b1 is not None:
        pre += b1
    gate = {"relu": (pre > 0).astype(float), "gelu": special.ndtr(pre), "silu": special.expit(pre)}[activation]
    result = np.einsum("...j,jk->...k", pre * gate, W2)
    return result + b2 if b2 is not None else result
'''),
    Pair("renamed", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    pt = np.array(x, dtype=float)
    g = np.zeros_like(pt)
    for idx in np.ndindex(pt.shape):
        saved = pt[idx]
        pt[idx] = saved + h
        up = f(pt)
        pt[idx] = saved - h
        down = f(pt)
        pt[idx] = saved
        g[idx] = (up - down) / (2.0 * h)
    return g
'''),
    Pair("commented", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    x = np.array(x, dtype=float)  # copy!
    grad = np.zeros_like(x)
    # loop over every entry of x, whatever its shape
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h  # step forward
        f_plus = f(x)
        x[index] = old - h  # step backward
        f_minus = f(x)
        x[index] = old  # restore
        grad[index] = (f_plus - f_minus) / (2.0 * h)
    return grad
'''),
    Pair("dead_code", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    calls = 0
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h
        f_plus = f(x)
        x[index] = old - h
        f_minus = f(x)
        calls += 2
        x[index] = old
        grad[index] = (f_plus - f_minus) / (2.0 * h)
    return grad
'''),
    Pair("temporaries", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    two_h = 2.0 * h
    for index in np.ndindex(x.shape):
        old = x[index]
        up = old + h
        x[index] = up
        f_plus = f(x)
        down = old - h
        x[index] = down
        f_minus = f(x)
        x[index] = old
        diff = f_plus - f_minus
        grad[index] = diff / two_h
    return grad
'''),
    Pair("independent", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    base = np.asarray(x, dtype=float)
    flat_grad = []
    for i in range(base.size):
        step = np.zeros(base.size)
        step[i] = h
        step = step.reshape(base.shape)
        flat_grad.append((f(base + step) - f(base - step)) / (2 * h))
    return np.array(flat_grad, dtype=float).reshape(base.shape)
'''),
    Pair("parentheses", "count_parameters", SOLUTION, '''def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1 and W2, and of b1, b2 unless None (an int)."""
    return sum((int(np.size(p)) for p in (W1, b1, W2, b2) if (p is not None)))
'''),
    Pair("reordered", "ffn_module_forward", CLASSMATE_FORWARD, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    activations = {
        "silu": lambda z: z * special.expit(z),
        "relu": lambda z: np.maximum(z, 0.0),
        "gelu": lambda z: z * special.ndtr(z),
    }
    if activation not in activations:
        raise ValueError(f"unknown activation {activation}")
    z = np.asarray(x, dtype=float) @ W1 + (0.0 if b1 is None else b1)
    return activations[activation](z) @ W2 + (0.0 if b2 is None else b2)
'''),
    Pair("parentheses", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    z = (np.asarray(x, dtype=float) @ W1)
    if (b1 is not None):
        z = (z + b1)
    if (activation == "relu"):
        h = np.maximum(z, 0.0)
    elif (activation == "gelu"):
        h = (z * special.ndtr(z))
    elif (activation == "silu"):
        h = (z * special.expit(z))
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")
    y = (h @ W2)
    return (y if (b2 is None) else (y + b2))
'''),
    Pair("reordered", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old - h
        f_minus = f(x)
        x[index] = old + h
        f_plus = f(x)
        x[index] = old
        grad[index] = (f_plus - f_minus) / (2.0 * h)
    return grad
'''),
    Pair("reformatted", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    x = np.array(x, dtype=float); grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h; f_plus = f(x)
        x[index] = old - h; f_minus = f(x)
        x[index] = old
        grad[index] = (f_plus - f_minus)/(2.0*h)
    return grad
'''),
    Pair("free_cell", "numerical_gradient", SOLUTION, '''def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    return centred(f, x, h)
''', free='''def centred(f, x, h):
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h
        f_plus = f(x)
        x[index] = old - h
        f_minus = f(x)
        x[index] = old
        grad[index] = (f_plus - f_minus) / (2.0 * h)
    return grad
'''),
    Pair("reordered", "xavier_init", SOLUTION, '''def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    std = np.sqrt(2.0 / (d_model + d_ff))
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if use_bias:
        return W1, np.zeros(d_ff), W2, np.zeros(d_model)
    return W1, None, W2, None
'''),
    Pair("reordered", "ffn_module_backward", SOLUTION, '''def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
    G = np.asarray(grad_out, dtype=float)
    x = np.asarray(x, dtype=float)
    d_model, d_ff = W1.shape
    z = x @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h, dsigma = np.maximum(z, 0.0), (z > 0).astype(float)
    elif activation == "gelu":
        pdf = np.exp(-0.5 * np.minimum(np.abs(z), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
        h, dsigma = z * special.ndtr(z), special.ndtr(z) + z * pdf
    else:
        s = special.expit(z)
        h, dsigma = z * s, s * (1.0 + z * (1.0 - s))
    dz = (G @ W2.T) * dsigma
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    x2, h2 = x.reshape(-1, d_model), h.reshape(-1, d_ff)
    return {
        "W1": x2.T @ dz2,
        "b1": None if b1 is None else dz2.sum(axis=0),
        "W2": h2.T @ G2,
        "b2": None if b2 is None else G2.sum(axis=0),
        "x": dz @ W1.T,
    }
'''),
    Pair("renamed", "ffn_module_backward", SOLUTION, '''def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
    inp = np.asarray(x, dtype=float)
    g = np.asarray(grad_out, dtype=float)
    pre = inp @ W1
    if b1 is not None:
        pre = pre + b1
    if activation == "relu":
        act, deriv = np.maximum(pre, 0.0), (pre > 0).astype(float)
    elif activation == "gelu":
        density = np.exp(-0.5 * np.minimum(np.abs(pre), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
        act, deriv = pre * special.ndtr(pre), special.ndtr(pre) + pre * density
    else:
        sg = special.expit(pre)
        act, deriv = pre * sg, sg * (1.0 + pre * (1.0 - sg))
    dpre = (g @ W2.T) * deriv
    dm, df = W1.shape
    inp2, act2 = inp.reshape(-1, dm), act.reshape(-1, df)
    g2, dpre2 = g.reshape(-1, dm), dpre.reshape(-1, df)
    return {
        "W1": inp2.T @ dpre2,
        "b1": None if b1 is None else dpre2.sum(axis=0),
        "W2": act2.T @ g2,
        "b2": None if b2 is None else g2.sum(axis=0),
        "x": dpre @ W1.T,
    }
'''),
    Pair("dead_code", "ffn_module_backward", SOLUTION, '''def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
    x = np.asarray(x, dtype=float)
    G = np.asarray(grad_out, dtype=float)
    z = x @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h, dsigma = np.maximum(z, 0.0), (z > 0).astype(float)
    elif activation == "gelu":
        pdf = np.exp(-0.5 * np.minimum(np.abs(z), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
        h, dsigma = z * special.ndtr(z), special.ndtr(z) + z * pdf
    else:
        s = special.expit(z)
        h, dsigma = z * s, s * (1.0 + z * (1.0 - s))
    y = h @ W2 if b2 is None else h @ W2 + b2
    loss = np.sum(G * y)
    dz = (G @ W2.T) * dsigma
    d_model, d_ff = W1.shape
    x2, h2 = x.reshape(-1, d_model), h.reshape(-1, d_ff)
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    grads = {
        "W1": x2.T @ dz2,
        "b1": None if b1 is None else dz2.sum(axis=0),
        "W2": h2.T @ G2,
        "b2": None if b2 is None else G2.sum(axis=0),
        "x": dz @ W1.T,
    }
    return grads
'''),
    Pair("parentheses", "ffn_module_backward", SOLUTION, '''def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
    x = np.asarray(x, dtype=float)
    G = np.asarray(grad_out, dtype=float)
    z = (x @ W1)
    if (b1 is not None):
        z = (z + b1)
    if (activation == "relu"):
        h, dsigma = (np.maximum(z, 0.0), (z > 0).astype(float))
    elif (activation == "gelu"):
        pdf = (np.exp((-0.5 * (np.minimum(np.abs(z), 40.0) ** 2))) / np.sqrt((2.0 * np.pi)))
        h, dsigma = ((z * special.ndtr(z)), (special.ndtr(z) + (z * pdf)))
    else:
        s = special.expit(z)
        h, dsigma = ((z * s), (s * (1.0 + (z * (1.0 - s)))))
    dz = ((G @ W2.T) * dsigma)
    d_model, d_ff = W1.shape
    x2, h2 = (x.reshape(-1, d_model), h.reshape(-1, d_ff))
    G2, dz2 = (G.reshape(-1, d_model), dz.reshape(-1, d_ff))
    return {
        "W1": (x2.T @ dz2),
        "b1": (None if (b1 is None) else dz2.sum(axis=0)),
        "W2": (h2.T @ G2),
        "b2": (None if (b2 is None) else G2.sum(axis=0)),
        "x": (dz @ W1.T),
    }
'''),
    Pair("independent", "ffn_module_backward", SOLUTION, '''def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
    shape = np.shape(x)
    X = np.asarray(x, dtype=float).reshape(-1, shape[-1])
    dY = np.asarray(grad_out, dtype=float).reshape(-1, shape[-1])
    pre = X @ W1 + (b1 if b1 is not None else 0.0)

    def act_and_slope(u):
        if activation == "relu":
            return np.where(u > 0, u, 0.0), np.where(u > 0, 1.0, 0.0)
        if activation == "gelu":
            cdf = special.ndtr(u)
            return u * cdf, cdf + u * np.exp(-u * u / 2 * (np.abs(u) < 40)) / math.sqrt(2 * math.pi)
        sig = 1 / (1 + np.exp(-u))
        return u * sig, sig + u * sig * (1 - sig)

    post, slope = act_and_slope(pre)
    dpre = np.einsum("tm,fm->tf", dY, W2) * slope
    out = {"W2": np.einsum("tf,tm->fm", post, dY), "W1": np.einsum("tm,tf->mf", X, dpre)}
    out["b2"] = dY.sum(0) if b2 is not None else None
    out["b1"] = dpre.sum(0) if b1 is not None else None
    out["x"] = (dpre @ W1.T).reshape(shape)
    return out
'''),
    Pair("reordered", "FeedForwardNetwork", SOLUTION, '''class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its own parameters W1, b1, W2, b2; x: (..., d_model)."""

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        """Parameters from xavier_init (biases None if not use_bias); keep the activation too."""
        self.activation = activation
        self.W1, self.b1, self.W2, self.b2 = xavier_init(d_model, d_ff, use_bias, seed)

    def num_parameters(self):
        """How many numbers training adjusts (an int)."""
        return count_parameters(self.W1, self.b1, self.W2, self.b2)

    def __call__(self, x):
        """FFN(x) with the current W1, b1, W2, b2; x: (..., d_model) -> (..., d_model)."""
        return ffn_module_forward(x, self.W1, self.b1, self.W2, self.b2, self.activation)

    def backward(self, x, grad_out):
        """Gradients of L = Σ grad_out ⊙ FFN(x) with the current parameters: keys "W1" "b1" "W2" "b2" "x"."""
        return ffn_module_backward(x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)
'''),
    Pair("independent", "FeedForwardNetwork", SOLUTION, '''class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its own parameters W1, b1, W2, b2; x: (..., d_model)."""

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        """Parameters from xavier_init (biases None if not use_bias); keep the activation too."""
        params = xavier_init(d_model, d_ff, use_bias=use_bias, seed=seed)
        self.params = dict(zip(("W1", "b1", "W2", "b2"), params))
        self.activation = activation

    def __getattr__(self, name):
        if name in ("W1", "b1", "W2", "b2"):
            return self.__dict__["params"][name]
        raise AttributeError(name)

    def num_parameters(self):
        """How many numbers training adjusts (an int)."""
        return sum(0 if p is None else p.size for p in self.params.values())

    def __call__(self, x):
        """FFN(x) with the current W1, b1, W2, b2; x: (..., d_model) -> (..., d_model)."""
        return ffn_module_forward(x, **self.params, activation=self.activation)

    def backward(self, x, grad_out):
        """Gradients of L = Σ grad_out ⊙ FFN(x) with the current parameters: keys "W1" "b1" "W2" "b2" "x"."""
        return ffn_module_backward(x, grad_out, **self.params, activation=self.activation)
'''),
    Pair("reordered", "FeedForwardNetwork", SOLUTION, '''class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its own parameters W1, b1, W2, b2; x: (..., d_model)."""

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        """Parameters from xavier_init (biases None if not use_bias); keep the activation too."""
        self.W1, self.b1, self.W2, self.b2 = xavier_init(d_model, d_ff, use_bias, seed)
        self.activation = activation

    def __call__(self, x):
        """FFN(x) with the current W1, b1, W2, b2; x: (..., d_model) -> (..., d_model)."""
        return ffn_module_forward(x, self.W1, self.b1, self.W2, self.b2, self.activation)

    def backward(self, x, grad_out):
        """Gradients of L = Σ grad_out ⊙ FFN(x) with the current parameters: keys "W1" "b1" "W2" "b2" "x"."""
        return ffn_module_backward(x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)

    def num_parameters(self):
        """How many numbers training adjusts (an int)."""
        return count_parameters(self.W1, self.b1, self.W2, self.b2)
'''),
    Pair("reordered", "ffn_module_forward", SOLUTION, '''def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if activation == "gelu":
        h = z * special.ndtr(z)
    elif activation == "silu":
        h = z * special.expit(z)
    elif activation == "relu":
        h = np.maximum(z, 0.0)
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")
    y = h @ W2
    return y if b2 is None else y + b2
'''),
]
