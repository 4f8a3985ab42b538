"""Notebook 03's mistakes: LayerNorm, and the post-LN and pre-LN blocks around a sublayer."""

import numpy as np

from ..norm import layer_norm
from .mistake import Mistake


def _layer_norm(x, gamma=None, beta=None, eps=1e-5, *, ddof=0, eps_outside=False, axis=-1):
    x = np.asarray(x, float)
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)
    out = (x - mean) / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


def _rms_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


def _not_centred(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


def _missing_sqrt(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = (x - x.mean(axis=-1, keepdims=True)) / (x.var(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


LAYER_NORM = (
    Mistake("unbiased_variance", "you used the unbiased variance (divide by d - 1); LayerNorm divides by d (ddof=0).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, ddof=1)),
    Mistake("eps_outside_sqrt", "eps belongs inside the square root: (x - μ) / √(σ² + eps).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, eps_outside=True)),
    Mistake("wrong_axis",
            "you normalised over the wrong axis: LayerNorm normalises each token over its features (axis=-1).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, axis=0)),
    Mistake("no_eps", "you left out eps: it keeps the division safe when a row is constant.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, 0.0)),
    Mistake("ignored_gamma_beta", "gamma and beta were ignored: scale by gamma, then add beta.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, None, None, eps)),
    Mistake("ignored_gamma", "gamma was ignored: scale the normalised x by gamma before adding beta.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, None, beta, eps)),
    Mistake("ignored_beta", "beta was ignored: add beta after scaling by gamma.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, None, eps)),
    Mistake("ignored_eps", "your result uses eps = 1e-5 whatever eps is passed: use the eps argument.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, 1e-5)),
    Mistake("missing_sqrt", "you divided by the variance σ² + eps; LayerNorm divides by its square root.",
            _missing_sqrt),
    Mistake("not_centred", "you divided x itself by the standard deviation: subtract the mean μ first.",
            _not_centred),
    Mistake("rms_norm", "this is RMSNorm, x / √(mean(x²) + eps), with no mean subtracted; LayerNorm centres "
            "first and divides by √(σ² + eps).", _rms_norm),
)

# The mistakes both blocks can make: one explanation, each block's own wrong result.
_MISSING_RESIDUAL = ("missing_residual", "the residual x is missing: the block adds x itself, post-LN as "
                     "LN(x + sublayer(x)), pre-LN as x + sublayer(LN(x)).")
_EPS_NOT_PASSED = ("eps_not_passed", "your block ignores its eps: pass it on to LayerNorm, LN(..., eps=eps).")
_MISSING_LAYER_NORM = ("missing_layer_norm", "there is no LayerNorm in your block: post-LN is LN(x + sublayer(x)), "
                       "pre-LN is x + sublayer(LN(x)).")

POST_LN_BLOCK = (
    Mistake("normalised_before_add", "you normalised before the residual add; post-LN is LN(x + sublayer(x)).",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(x)),
    Mistake("pre_ln_for_post_ln", "this is pre-LN, x + sublayer(LN(x)); post-LN adds first, then normalises.",
            lambda x, sublayer, eps=1e-5: x + sublayer(layer_norm(x, eps=eps))),
    Mistake(*_MISSING_RESIDUAL, lambda x, sublayer, eps=1e-5: layer_norm(sublayer(x), eps=eps)),
    Mistake(*_EPS_NOT_PASSED, lambda x, sublayer, eps=1e-5: layer_norm(x + sublayer(x))),
    Mistake(*_MISSING_LAYER_NORM, lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(x)),
)

PRE_LN_BLOCK = (
    Mistake("post_ln_for_pre_ln", "this is post-LN, LN(x + sublayer(x)); pre-LN normalises the sublayer's input only.",
            lambda x, sublayer, eps=1e-5: layer_norm(x + sublayer(x), eps=eps)),
    Mistake("normalised_residual", "you added LN(x) instead of x: the residual path carries x unchanged.",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(layer_norm(x, eps=eps))),
    Mistake(*_MISSING_RESIDUAL, lambda x, sublayer, eps=1e-5: sublayer(layer_norm(x, eps=eps))),
    Mistake(*_EPS_NOT_PASSED, lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(layer_norm(x))),
    Mistake(*_MISSING_LAYER_NORM, lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(x)),
)

CATALOGUE = {"layer_norm": LAYER_NORM, "post_ln_block": POST_LN_BLOCK, "pre_ln_block": PRE_LN_BLOCK}
