"""Alternative answers for 06_parameter_budget."""

from . import Wrong

_COUNT_FORMULA = '''def ffn_param_count(d_model, d_ff, bias=True):
    count = 2 * d_model * d_ff
    if bias:
        count += d_ff + d_model
    return count
'''

_COUNT_SHAPES = '''import math

def ffn_param_count(d_model, d_ff, bias=True):
    shapes = [(d_model, d_ff), (d_ff, d_model)]
    if bias:
        shapes += [(d_ff,), (d_model,)]
    return sum(math.prod(shape) for shape in shapes)
'''

_BYTES_TABLE = '''def param_bytes(n_params, dtype="float32"):
    sizes = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
    if dtype not in sizes:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {sorted(sizes)}")
    return n_params * sizes[dtype]
'''

_BYTES_BITS = '''BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8}

def param_bytes(n_params, dtype="float32"):
    try:
        bits = BITS[dtype]
    except KeyError:
        raise ValueError(f"dtype must be one of {', '.join(BITS)}, got {dtype!r}") from None
    return n_params * bits // 8
'''

_FLOPS_TWO_STEPS = '''def ffn_flops_per_token(d_model, d_ff):
    multiply_adds = d_model * d_ff + d_ff * d_model
    return 2 * multiply_adds
'''

_FLOPS_ONE_LINE = '''def ffn_flops_per_token(d_model, d_ff):
    return 4 * d_model * d_ff
'''

_SWIGLU_FORMULA = '''def swiglu_param_count(d_model, d_ff):
    return 3 * d_model * d_ff
'''

_SWIGLU_MATRICES = '''def swiglu_param_count(d_model, d_ff):
    shapes = {"W_gate": (d_model, d_ff), "W_up": (d_model, d_ff), "W_down": (d_ff, d_model)}
    return sum(rows * cols for rows, cols in shapes.values())
'''

_SHAPES_MATH = '''import math

def count_from_shapes(shapes):
    return sum(math.prod(shape) for _name, shape in shapes)
'''

_SHAPES_NUMPY = '''import numpy as np

def count_from_shapes(shapes):
    total = 0
    for _name, shape in shapes:
        total += int(np.prod(shape, dtype=np.int64))
    return total
'''

_PARTS_IF_CHAIN = '''import math

def params_by_part(shapes):
    totals = {"embeddings": 0, "attention": 0, "ffn": 0, "norm": 0}
    for name, shape in shapes:
        n = name.lower()
        if "norm" in n or "ln_" in n:
            part = "norm"
        elif any(k in n for k in ("embed", "wte", "wpe", "lm_head")):
            part = "embeddings"
        elif "attn" in n or "attention" in n:
            part = "attention"
        elif "mlp" in n:
            part = "ffn"
        else:
            raise ValueError(f"unknown parameter {name}")
        totals[part] += math.prod(shape)
    return totals
'''

# The rules as regular expressions, and sizes multiplied out by hand.
_PARTS_REGEX = '''import re

RULES = [("norm", re.compile(r"norm|ln_")), ("embeddings", re.compile(r"embed|wte|wpe|lm_head")),
         ("attention", re.compile(r"attn|attention")), ("ffn", re.compile(r"mlp"))]

def params_by_part(shapes):
    totals = {part: 0 for part, _ in RULES}
    for name, shape in shapes:
        for part, rule in RULES:
            if rule.search(name.lower()):
                size = 1
                for n in shape:
                    size *= int(n)
                totals[part] += size
                break
        else:
            raise ValueError("no rule matches " + repr(name))
    return totals
'''

CORRECT = {
    "formulas": {"ffn_param_count": _COUNT_FORMULA, "param_bytes": _BYTES_TABLE,
                 "ffn_flops_per_token": _FLOPS_TWO_STEPS, "swiglu_param_count": _SWIGLU_FORMULA,
                 "count_from_shapes": _SHAPES_MATH, "params_by_part": _PARTS_IF_CHAIN},
    "from-shapes": {"ffn_param_count": _COUNT_SHAPES, "param_bytes": _BYTES_BITS,
                    "ffn_flops_per_token": _FLOPS_ONE_LINE, "swiglu_param_count": _SWIGLU_MATRICES,
                    "count_from_shapes": _SHAPES_NUMPY, "params_by_part": _PARTS_REGEX},
}

_BOTH = ("test_{0}", "test_{0}_hidden")


def _cells(name, hidden_only=False):
    return (f"test_{name}_hidden",) if hidden_only else tuple(c.format(name) for c in _BOTH)


WRONG = [
    Wrong("count-forgot-biases", "ffn_param_count",
          "def ffn_param_count(d_model, d_ff, bias=True):\n    return 2 * d_model * d_ff\n",
          loses=_cells("ffn_param_count"), diagnosis="forgot_biases"),
    Wrong("count-b1-d-model", "ffn_param_count",
          "def ffn_param_count(d_model, d_ff, bias=True):\n"
          "    return 2 * d_model * d_ff + (d_model + d_model if bias else 0)\n",
          loses=_cells("ffn_param_count"), diagnosis="b1_sized_d_model"),
    Wrong("count-ignores-bias-flag", "ffn_param_count",
          "def ffn_param_count(d_model, d_ff, bias=True):\n    return 2 * d_model * d_ff + d_ff + d_model\n",
          loses=_cells("ffn_param_count"), diagnosis="bias_flag_ignored"),
    Wrong("swiglu-two-matrices", "swiglu_param_count",
          "def swiglu_param_count(d_model, d_ff):\n    return 2 * d_model * d_ff\n",
          loses=_cells("swiglu_param_count"), diagnosis="two_matrices"),
    Wrong("swiglu-with-biases", "swiglu_param_count",
          "def swiglu_param_count(d_model, d_ff):\n    return 3 * d_model * d_ff + 2 * d_ff + d_model\n",
          loses=_cells("swiglu_param_count"), diagnosis="gated_with_biases"),
    Wrong("bytes-bits", "param_bytes", _BYTES_BITS.replace("n_params * bits // 8", "n_params * bits"),
          loses=_cells("param_bytes"), diagnosis="bits_not_bytes"),
    # Right on float32 (the visible test); wrong on bfloat16.
    Wrong("bytes-bfloat16-four", "param_bytes", _BYTES_TABLE.replace('"bfloat16": 2', '"bfloat16": 4'),
          loses=_cells("param_bytes", hidden_only=True), diagnosis="bfloat16_as_four_bytes"),
    # numpy has no bfloat16 (a crash), and raises TypeError, not ValueError, for "float8".
    Wrong("bytes-numpy-itemsize", "param_bytes",
          "import numpy as np\n\ndef param_bytes(n_params, dtype='float32'):\n"
          "    return n_params * np.dtype(dtype).itemsize\n",
          loses=_cells("param_bytes")),
    Wrong("bytes-silent-default", "param_bytes",
          "def param_bytes(n_params, dtype='float32'):\n"
          "    sizes = {'float64': 8, 'float32': 4, 'float16': 2, 'bfloat16': 2, 'int8': 1}\n"
          "    return n_params * sizes.get(dtype, 4)\n",
          loses=_cells("param_bytes")),
    # The right number as a float: the exercise asks for an int, and the check compares exactly.
    Wrong("bytes-float", "param_bytes",
          _BYTES_TABLE.replace("n_params * sizes[dtype]", "n_params * float(sizes[dtype])"),
          loses=_cells("param_bytes")),
    Wrong("flops-multiply-adds", "ffn_flops_per_token",
          "def ffn_flops_per_token(d_model, d_ff):\n    return 2 * d_model * d_ff\n",
          loses=_cells("ffn_flops_per_token"), diagnosis="multiply_adds_not_flops"),
    Wrong("flops-params", "ffn_flops_per_token",
          "def ffn_flops_per_token(d_model, d_ff):\n    return 2 * d_model * d_ff + d_ff + d_model\n",
          loses=_cells("ffn_flops_per_token"), diagnosis="params_as_flops"),
    Wrong("shapes-weights-only", "count_from_shapes",
          "import math\n\ndef count_from_shapes(shapes):\n"
          "    return sum(math.prod(s) for _, s in shapes if len(s) == 2)\n",
          loses=_cells("count_from_shapes"), diagnosis="weights_only"),
    Wrong("shapes-summed", "count_from_shapes",
          "def count_from_shapes(shapes):\n    return sum(sum(s) for _, s in shapes)\n",
          loses=_cells("count_from_shapes"), diagnosis="summed_dimensions"),
    # Attention tested first: LLaMA's post_attention_layernorm lands in attention.
    Wrong("parts-attention-first", "params_by_part",
          _PARTS_IF_CHAIN.replace('''        if "norm" in n or "ln_" in n:
            part = "norm"
        elif any(k in n for k in ("embed", "wte", "wpe", "lm_head")):
            part = "embeddings"
        elif "attn" in n or "attention" in n:
            part = "attention"''', '''        if "attn" in n or "attention" in n:
            part = "attention"
        elif "norm" in n or "ln_" in n:
            part = "norm"
        elif any(k in n for k in ("embed", "wte", "wpe", "lm_head")):
            part = "embeddings"'''),
          loses=_cells("params_by_part")),
    # Names compared as given: BERT's "LayerNorm" and an upper-case "ATTN" match nothing.
    Wrong("parts-case-sensitive", "params_by_part", _PARTS_IF_CHAIN.replace("n = name.lower()", "n = name"),
          loses=_cells("params_by_part", hidden_only=True)),
    # A parameter no rule names is skipped: the totals no longer add up to the model.
    Wrong("parts-skip-unknown", "params_by_part",
          _PARTS_IF_CHAIN.replace('raise ValueError(f"unknown parameter {name}")', "continue"),
          loses=_cells("params_by_part", hidden_only=True)),
    # np.prod(()) is 1.0: the scalar parameter turns the total into a float.
    Wrong("shapes-float-total", "count_from_shapes",
          "import numpy as np\n\ndef count_from_shapes(shapes):\n    return sum(np.prod(s) for _, s in shapes)\n",
          loses=_cells("count_from_shapes", hidden_only=True)),
]
