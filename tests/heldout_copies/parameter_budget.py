"""Held-out pairs for 06_parameter_budget."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "06_parameter_budget"

CLASSMATE_BYTES = '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    if dtype == "float64":
        size = 8
    elif dtype == "float32":
        size = 4
    elif dtype in ("float16", "bfloat16"):
        size = 2
    elif dtype == "int8":
        size = 1
    else:
        raise ValueError(f"dtype must be float64, float32, float16, bfloat16 or int8, not {dtype}")
    return int(n_params) * size
'''

CLASSMATE_PARTS = '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    out = {"embeddings": 0, "attention": 0, "ffn": 0, "norm": 0}
    for name, shape in shapes:
        n = int(np.prod(shape))
        low = name.lower()
        if "norm" in low or "ln_" in low:
            out["norm"] += n
        elif "embed" in low or "wte" in low or "wpe" in low or "lm_head" in low:
            out["embeddings"] += n
        elif "attn" in low or "attention" in low:
            out["attention"] += n
        elif "mlp" in low:
            out["ffn"] += n
        else:
            raise ValueError(f"cannot place parameter {name}")
    return out
'''

PAIRS = [
    Pair("renamed", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    w = d_model * d_ff + d_ff * d_model
    b = d_ff + d_model if bias else 0
    return w + b
'''),
    Pair("reordered", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    biases = d_ff + d_model if bias else 0
    weights = d_model * d_ff + d_ff * d_model
    return weights + biases
'''),
    Pair("commented", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    weights = d_model * d_ff + d_ff * d_model  # W1 is d_model x d_ff, W2 is d_ff x d_model
    biases = d_ff + d_model if bias else 0  # b1 and b2
    return weights + biases
'''),
    Pair("parentheses", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    weights = (d_model * d_ff) + (d_ff * d_model)
    biases = (d_ff + d_model) if bias else 0
    return (weights + biases)
'''),
    Pair("independent", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    total = 2 * d_model * d_ff
    if bias:
        total += d_model + d_ff
    return total
'''),
    Pair("renamed", "param_bytes", SOLUTION, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    nbytes = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
    if dtype not in nbytes:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(nbytes)}")
    return n_params * nbytes[dtype]
'''),
    Pair("reformatted", "param_bytes", SOLUTION, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    sizes = {
        "float64": 8,
        "float32": 4,
        "float16": 2,
        "bfloat16": 2,
        "int8": 1,
    }
    if dtype not in sizes:
        raise ValueError(
            f"unknown dtype {dtype!r}; expected one of {', '.join(sizes)}"
        )
    return n_params * sizes[dtype]
'''),
    Pair("dead_code", "param_bytes", SOLUTION, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    sizes = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
    bits = {k: 8 * v for k, v in sizes.items()}
    if dtype not in sizes:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(sizes)}")
    return n_params * sizes[dtype]
'''),
    Pair("temporaries", "param_bytes", CLASSMATE_BYTES, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    half = ("float16", "bfloat16")
    if dtype == "float64":
        size = 8
    elif dtype == "float32":
        size = 4
    elif dtype in half:
        size = 2
    elif dtype == "int8":
        size = 1
    else:
        message = f"dtype must be float64, float32, float16, bfloat16 or int8, not {dtype}"
        raise ValueError(message)
    n = int(n_params)
    return n * size
'''),
    Pair("commented", "param_bytes", CLASSMATE_BYTES, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    # bytes per parameter for each type
    if dtype == "float64":
        size = 8
    elif dtype == "float32":
        size = 4
    elif dtype in ("float16", "bfloat16"):  # both halves are 2 bytes
        size = 2
    elif dtype == "int8":
        size = 1
    else:
        raise ValueError(f"dtype must be float64, float32, float16, bfloat16 or int8, not {dtype}")
    return int(n_params) * size
'''),
    Pair("independent", "param_bytes", SOLUTION, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    if dtype == "bfloat16":
        return 2 * n_params
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        raise ValueError(f"{dtype} is not a dtype I know") from None
    if dtype not in ("float64", "float32", "float16", "int8"):
        raise ValueError(f"{dtype} is not a dtype I know")
    return n_params * itemsize
'''),
    Pair("independent", "param_bytes", CLASSMATE_BYTES, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    names = ["int8", "float16", "bfloat16", "float32", "float64"]
    widths = [8, 16, 16, 32, 64]
    for name, width in zip(names, widths):
        if name == dtype:
            return n_params * width // 8
    raise ValueError("unsupported dtype: " + str(dtype))
'''),
    Pair("renamed", "ffn_flops_per_token", SOLUTION, '''def ffn_flops_per_token(d_model, d_ff):
    """FLOPs of one token through one FFN layer: 2 per multiply-add, d_model·d_ff multiply-adds per matrix."""
    per_matrix = 2 * d_model * d_ff
    return 2 * per_matrix
'''),
    Pair("dead_code", "ffn_flops_per_token", SOLUTION, '''def ffn_flops_per_token(d_model, d_ff):
    """FLOPs of one token through one FFN layer: 2 per multiply-add, d_model·d_ff multiply-adds per matrix."""
    multiply_adds = 2 * d_model * d_ff
    params = multiply_adds
    return 2 * multiply_adds
'''),
    Pair("independent", "ffn_flops_per_token", SOLUTION, '''def ffn_flops_per_token(d_model, d_ff):
    """FLOPs of one token through one FFN layer: 2 per multiply-add, d_model·d_ff multiply-adds per matrix."""
    flops_first = d_model * d_ff * 2
    flops_second = d_ff * d_model * 2
    return flops_first + flops_second
'''),
    Pair("renamed", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    n = 0
    for _, s in shapes:
        n += math.prod(s)
    return n
'''),
    Pair("free_cell", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    return total_params(shapes)
''', free='''def total_params(shapes):
    total = 0
    for _name, shape in shapes:
        total += math.prod(shape)
    return total
'''),
    Pair("dead_code", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    total = 0
    names = []
    for _name, shape in shapes:
        names.append(_name)
        total += math.prod(shape)
    return total
'''),
    Pair("independent", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    return int(sum(np.prod(shape, dtype=np.int64) for _, shape in shapes))
'''),
    Pair("renamed", "params_by_part", SOLUTION, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    table = [("norm", ("norm", "ln_")), ("embeddings", ("embed", "wte", "wpe", "lm_head")),
             ("attention", ("attn", "attention")), ("ffn", ("mlp",))]
    counts = {p: 0 for p, _ in table}
    for pname, pshape in shapes:
        low = pname.lower()
        which = next((p for p, words in table if any(w in low for w in words)), None)
        if which is None:
            raise ValueError(f"no part for parameter {pname!r}: expected a name with one of "
                             "norm, ln_, embed, wte, wpe, lm_head, attn, attention, mlp")
        counts[which] += math.prod(pshape)
    return counts
'''),
    Pair("temporaries", "params_by_part", SOLUTION, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    rules = [("norm", ("norm", "ln_")), ("embeddings", ("embed", "wte", "wpe", "lm_head")),
             ("attention", ("attn", "attention")), ("ffn", ("mlp",))]
    totals = {part: 0 for part, _ in rules}
    for name, shape in shapes:
        lowered = name.lower()
        matches = (part for part, keys in rules if any(k in lowered for k in keys))
        part = next(matches, None)
        if part is None:
            raise ValueError(f"no part for parameter {name!r}: expected a name with one of "
                             "norm, ln_, embed, wte, wpe, lm_head, attn, attention, mlp")
        count = math.prod(shape)
        totals[part] += count
    return totals
'''),
    Pair("reformatted", "params_by_part", CLASSMATE_PARTS, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    out = {"embeddings": 0,
           "attention": 0,
           "ffn": 0,
           "norm": 0}
    for name, shape in shapes:
        n = int(np.prod(shape)); low = name.lower()
        if "norm" in low or "ln_" in low: out["norm"] += n
        elif "embed" in low or "wte" in low or "wpe" in low or "lm_head" in low: out["embeddings"] += n
        elif "attn" in low or "attention" in low: out["attention"] += n
        elif "mlp" in low: out["ffn"] += n
        else: raise ValueError(f"cannot place parameter {name}")
    return out
'''),
    Pair("renamed", "params_by_part", CLASSMATE_PARTS, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    result = {"embeddings": 0, "attention": 0, "ffn": 0, "norm": 0}
    for key, dims in shapes:
        size = int(np.prod(dims))
        k = key.lower()
        if "norm" in k or "ln_" in k:
            result["norm"] += size
        elif "embed" in k or "wte" in k or "wpe" in k or "lm_head" in k:
            result["embeddings"] += size
        elif "attn" in k or "attention" in k:
            result["attention"] += size
        elif "mlp" in k:
            result["ffn"] += size
        else:
            raise ValueError(f"cannot place parameter {key}")
    return result
'''),
    Pair("dead_code", "params_by_part", CLASSMATE_PARTS, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    out = {"embeddings": 0, "attention": 0, "ffn": 0, "norm": 0}
    seen = set()
    for name, shape in shapes:
        n = int(np.prod(shape))
        low = name.lower()
        seen.add(low)
        if "norm" in low or "ln_" in low:
            out["norm"] += n
        elif "embed" in low or "wte" in low or "wpe" in low or "lm_head" in low:
            out["embeddings"] += n
        elif "attn" in low or "attention" in low:
            out["attention"] += n
        elif "mlp" in low:
            out["ffn"] += n
        else:
            raise ValueError(f"cannot place parameter {name}")
    total = sum(out.values())
    return out
'''),
    Pair("independent", "params_by_part", SOLUTION, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    def part_of(name):
        n = name.lower()
        for part, words in (("norm", ["norm", "ln_"]), ("embeddings", ["embed", "wte", "wpe", "lm_head"]),
                            ("attention", ["attn", "attention"]), ("ffn", ["mlp"])):
            for word in words:
                if word in n:
                    return part
        raise ValueError("unknown parameter " + name)

    sums = dict.fromkeys(["embeddings", "attention", "ffn", "norm"], 0)
    for name, shape in shapes:
        count = 1
        for dim in shape:
            count *= dim
        sums[part_of(name)] += count
    return sums
'''),
    Pair("independent", "params_by_part", CLASSMATE_PARTS, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    import re
    patterns = {"norm": r"norm|ln_", "embeddings": r"embed|wte|wpe|lm_head", "attention": r"attn|attention",
                "ffn": r"mlp"}
    totals = collections.Counter({part: 0 for part in patterns})
    for name, shape in shapes:
        part = next((p for p, pattern in patterns.items() if re.search(pattern, name, re.IGNORECASE)), None)
        if part is None:
            raise ValueError(f"parameter {name} belongs to no part")
        totals[part] += math.prod(shape)
    return dict(totals)
'''),
    Pair("free_cell", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    return n_params(d_model, d_ff, bias)
''', free='''def n_params(d_model, d_ff, bias):
    weights = d_model * d_ff + d_ff * d_model
    biases = d_ff + d_model if bias else 0
    return weights + biases

print(n_params(512, 2048, True))
'''),
    Pair("reformatted", "ffn_param_count", SOLUTION, '''def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    weights = d_model*d_ff + d_ff*d_model; biases = d_ff + d_model if bias else 0
    return weights+biases
'''),
    Pair("parentheses", "param_bytes", SOLUTION, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    sizes = ({"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1})
    if (dtype not in sizes):
        raise ValueError((f"unknown dtype {dtype!r}; expected one of {', '.join(sizes)}"))
    return (n_params * sizes[dtype])
'''),
    Pair("reordered", "param_bytes", CLASSMATE_BYTES, '''def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    if dtype == "int8":
        size = 1
    elif dtype in ("float16", "bfloat16"):
        size = 2
    elif dtype == "float32":
        size = 4
    elif dtype == "float64":
        size = 8
    else:
        raise ValueError(f"dtype must be float64, float32, float16, bfloat16 or int8, not {dtype}")
    return int(n_params) * size
'''),
    Pair("parentheses", "ffn_flops_per_token", SOLUTION, '''def ffn_flops_per_token(d_model, d_ff):
    """FLOPs of one token through one FFN layer: 2 per multiply-add, d_model·d_ff multiply-adds per matrix."""
    multiply_adds = (2 * d_model) * d_ff
    return (2 * multiply_adds)
'''),
    Pair("commented", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    total = 0
    for _name, shape in shapes:  # the name does not matter here
        total += math.prod(shape)  # entries = product of the dims
    return total
'''),
    Pair("reformatted", "count_from_shapes", SOLUTION, '''def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    total = 0
    for _name, shape in shapes: total += math.prod(shape)
    return total
'''),
    Pair("commented", "params_by_part", SOLUTION, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    # order matters: norm first, so "attn.ln_1" is a norm
    rules = [("norm", ("norm", "ln_")), ("embeddings", ("embed", "wte", "wpe", "lm_head")),
             ("attention", ("attn", "attention")), ("ffn", ("mlp",))]
    totals = {part: 0 for part, _ in rules}
    for name, shape in shapes:
        lowered = name.lower()  # case-insensitive match
        part = next((part for part, keys in rules if any(k in lowered for k in keys)), None)
        if part is None:
            raise ValueError(f"no part for parameter {name!r}: expected a name with one of "
                             "norm, ln_, embed, wte, wpe, lm_head, attn, attention, mlp")
        totals[part] += math.prod(shape)
    return totals
'''),
    Pair("free_cell", "params_by_part", CLASSMATE_PARTS, '''def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    return split_params(shapes)
''', free='''def split_params(shapes):
    out = {"embeddings": 0, "attention": 0, "ffn": 0, "norm": 0}
    for name, shape in shapes:
        n = int(np.prod(shape))
        low = name.lower()
        if "norm" in low or "ln_" in low:
            out["norm"] += n
        elif "embed" in low or "wte" in low or "wpe" in low or "lm_head" in low:
            out["embeddings"] += n
        elif "attn" in low or "attention" in low:
            out["attention"] += n
        elif "mlp" in low:
            out["ffn"] += n
        else:
            raise ValueError(f"cannot place parameter {name}")
    return out
'''),
]
