"""In-place activations for `ffn_forward`, split across threads for large arrays.

numpy's matrix products use every core but its elementwise ufuncs use one;
running the activation on row blocks in a thread pool (ufuncs release the GIL)
keeps exact GELU from dominating the FFN's time.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import activations
from ._lazy import special

_N_THREADS = os.cpu_count() or 1
_MIN_PARALLEL = 1 << 16  # below this many elements, threads cost more than they save
_pool = None


def _gelu_inplace(z):
    if activations.has_neg_inf(z):  # -inf · Φ(-inf) is NaN; the public gelu returns the limit
        z[...] = activations.gelu(z)
    else:
        with np.errstate(under="ignore"):
            z *= special().ndtr(z)


def _silu_inplace(z):
    if activations.has_neg_inf(z):
        z[...] = activations.silu(z)
    else:
        with np.errstate(under="ignore"):
            z *= special().expit(z)


_INPLACE = {
    "relu": lambda z: np.maximum(z, 0.0, out=z),
    "gelu": _gelu_inplace,
    "silu": _silu_inplace,
}


def activate_inplace(z, name, fallback):
    """Apply activation `name` to float64 array z, in place where we know how."""
    kernel = _INPLACE.get(name) if isinstance(name, str) else None
    if kernel is None:
        return fallback(z)
    # Threads only for large contiguous arrays: there, reshape(-1) is a view, so the
    # blocks written in place are z itself.
    if name == "relu" or z.size < _MIN_PARALLEL or _N_THREADS == 1 or not z.flags.c_contiguous:
        kernel(z)
        return z
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(_N_THREADS, thread_name_prefix="ffn_helpers")
    list(_pool.map(kernel, np.array_split(z.reshape(-1), _N_THREADS)))
    return z
