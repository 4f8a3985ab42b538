"""Alternative answers for 03_residual_layernorm."""

from . import Wrong

_LN_VECTORISED = '''import numpy as np

def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
'''

_LN_LOOP = '''import math
import numpy as np

def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.array(x, dtype=float)
    d = x.shape[-1]
    rows = x.reshape(-1, d)
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        mean = sum(row) / d
        var = sum((v - mean) ** 2 for v in row) / d
        for i in range(d):
            value = (row[i] - mean) / math.sqrt(var + eps)
            if gamma is not None:
                value *= gamma[i]
            if beta is not None:
                value += beta[i]
            out[r, i] = value
    return out.reshape(x.shape)
'''

_LN_STD_DEFAULTS = '''import numpy as np

def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    gamma = np.ones(d) if gamma is None else np.asarray(gamma, dtype=float)
    beta = np.zeros(d) if beta is None else np.asarray(beta, dtype=float)
    centred = x - np.mean(x, axis=-1, keepdims=True)
    scale = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    return gamma * centred * scale + beta
'''

_POST = '''import numpy as np

def post_ln_block(x, sublayer, eps=1e-5):
    return layer_norm(x + sublayer(x), eps=eps)
'''

_POST_CHECKED = '''import numpy as np

def post_ln_block(x, sublayer, eps=1e-5):
    x = np.asarray(x, dtype=float)
    out = np.asarray(sublayer(x), dtype=float)
    if out.shape != x.shape:
        raise ValueError(f"sublayer(x) has shape {out.shape}, expected {x.shape}")
    return layer_norm(x + out, None, None, eps)
'''

_PRE = '''import numpy as np

def pre_ln_block(x, sublayer, eps=1e-5):
    return x + sublayer(layer_norm(x, eps=eps))
'''

_PRE_CHECKED = '''import numpy as np

def pre_ln_block(x, sublayer, eps=1e-5):
    x = np.asarray(x, dtype=float)
    normalised = layer_norm(x, None, None, eps)
    out = np.asarray(sublayer(normalised), dtype=float)
    if out.shape != x.shape:
        raise ValueError(f"sublayer(LN(x)) has shape {out.shape}, expected {x.shape}")
    return np.add(x, out)
'''

CORRECT = {
    "vectorised": {"layer_norm": _LN_VECTORISED, "post_ln_block": _POST, "pre_ln_block": _PRE},
    "loops": {"layer_norm": _LN_LOOP, "post_ln_block": _POST_CHECKED, "pre_ln_block": _PRE_CHECKED},
    "defaults": {"layer_norm": _LN_STD_DEFAULTS, "post_ln_block": _POST, "pre_ln_block": _PRE_CHECKED},
}


def _ln(body):
    return "import numpy as np\n\ndef layer_norm(x, gamma=None, beta=None, eps=1e-5):\n" + body


_LN_TAIL = '''    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
'''

_LN_LOSES = ("test_layer_norm", "test_layer_norm_hidden")

WRONG = [
    Wrong("ln-unbiased", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    out = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps)
''' + _LN_TAIL), loses=_LN_LOSES, diagnosis="unbiased_variance"),
    Wrong("ln-eps-outside", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    out = (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps)
''' + _LN_TAIL), loses=_LN_LOSES, diagnosis="eps_outside_sqrt"),
    Wrong("ln-axis-0", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    out = (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + eps)
''' + _LN_TAIL), loses=("test_layer_norm_hidden",), diagnosis="wrong_axis"),
    Wrong("ln-no-gamma-beta", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
'''), loses=_LN_LOSES, diagnosis="ignored_gamma_beta"),
    Wrong("ln-fixed-eps", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    out = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
''' + _LN_TAIL), loses=_LN_LOSES, diagnosis="ignored_eps"),
    Wrong("ln-rms", "layer_norm", _ln('''    x = np.asarray(x, dtype=float)
    out = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)
''' + _LN_TAIL), loses=_LN_LOSES, diagnosis="rms_norm"),
    Wrong("post-is-pre", "post_ln_block", _PRE.replace("pre_ln_block", "post_ln_block"),
          loses=("test_post_ln_block", "test_post_ln_block_hidden"), diagnosis="pre_ln_for_post_ln"),
    Wrong("post-norm-first", "post_ln_block", '''import numpy as np

def post_ln_block(x, sublayer, eps=1e-5):
    return layer_norm(x, eps=eps) + sublayer(x)
''', loses=("test_post_ln_block", "test_post_ln_block_hidden"), diagnosis="normalised_before_add"),
    Wrong("post-drops-eps", "post_ln_block", '''import numpy as np

def post_ln_block(x, sublayer, eps=1e-5):
    return layer_norm(x + sublayer(x))
''', loses=("test_post_ln_block", "test_post_ln_block_hidden"), diagnosis="eps_not_passed"),
    Wrong("post-no-residual", "post_ln_block", '''import numpy as np

def post_ln_block(x, sublayer, eps=1e-5):
    return layer_norm(sublayer(x), eps=eps)
''', loses=("test_post_ln_block", "test_post_ln_block_hidden"), diagnosis="missing_residual"),
    Wrong("pre-is-post", "pre_ln_block", _POST.replace("post_ln_block", "pre_ln_block"),
          loses=("test_pre_ln_block", "test_pre_ln_block_hidden"), diagnosis="post_ln_for_pre_ln"),
    Wrong("pre-normalised-residual", "pre_ln_block", '''import numpy as np

def pre_ln_block(x, sublayer, eps=1e-5):
    x = layer_norm(x, eps=eps)
    return x + sublayer(x)
''', loses=("test_pre_ln_block", "test_pre_ln_block_hidden"), diagnosis="normalised_residual"),
    Wrong("pre-no-residual", "pre_ln_block", '''import numpy as np

def pre_ln_block(x, sublayer, eps=1e-5):
    return sublayer(layer_norm(x, eps=eps))
''', loses=("test_pre_ln_block", "test_pre_ln_block_hidden"), diagnosis="missing_residual"),
    Wrong("pre-drops-eps", "pre_ln_block", '''import numpy as np

def pre_ln_block(x, sublayer, eps=1e-5):
    return x + sublayer(layer_norm(x))
''', loses=("test_pre_ln_block", "test_pre_ln_block_hidden"), diagnosis="eps_not_passed"),
]
