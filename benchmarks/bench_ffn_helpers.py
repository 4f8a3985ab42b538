"""ffn_forward against the two bare matrix products it cannot avoid, and the import time."""

import subprocess
import sys
import timeit

import numpy as np

from benchmarks import Row
from ffn_helpers import ffn_forward

N_TOKENS, D_MODEL, D_FF = 2048, 768, 3072


def _best(fn, repeat=7):
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def rows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N_TOKENS, D_MODEL))
    W1 = rng.standard_normal((D_MODEL, D_FF)) / np.sqrt(D_MODEL)
    b1 = rng.standard_normal(D_FF)
    W2 = rng.standard_normal((D_FF, D_MODEL)) / np.sqrt(D_FF)
    b2 = rng.standard_normal(D_MODEL)
    h = np.maximum(x @ W1, 0)

    def bare():
        x @ W1
        h @ W2

    t_bare = _best(bare)
    out = []
    for activation, target in (("relu", "<= 1.15"), ("gelu", "<= 1.4")):
        t = _best(lambda a=activation: ffn_forward(x, W1, b1, W2, b2, activation=a))
        out.append(Row(f"ffn_forward {N_TOKENS}x{D_MODEL}, d_ff {D_FF}, {activation} / bare GEMMs",
                       t / t_bare, "ratio", target, f"bare GEMMs {t_bare * 1e3:.0f} ms"))
    code = "import time; t = time.perf_counter(); import ffn_helpers; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(5)]
    leaked = subprocess.run([sys.executable, "-c", "import sys, ffn_helpers; print('matplotlib' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    out.append(Row("import ffn_helpers (best of 5, fresh interpreter)", min(times), "s", "< 0.3",
                   f"matplotlib imported: {leaked}"))
    return out
