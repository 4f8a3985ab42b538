"""The optional PyTorch cross-check of notebooks 09 and 13: your gradients against autograd's.

torch is no dependency of the course. Where it is installed, `autograd_ffn` and `autograd_loss`
compute the gradients PyTorch's autograd finds for the same parameters, in float64, and
`compare` prints, name by name, whether yours agree; where it is not, `skipped()` is the one
line the notebook prints instead. Nothing here imports torch until it is asked to.
"""

import importlib

import numpy as np

from ._arrays import as_float

RTOL, ATOL = 1e-9, 1e-12  # float64 both ways: only the order of the sums differs


def load():
    """(torch, None) where it imports, else (None, why not)."""
    try:
        return importlib.import_module("torch"), None
    except ImportError as exc:
        if getattr(exc, "name", None) == "torch":
            return None, "torch is not installed here (it is optional: `pip install torch` adds it)"
        return None, f"torch is installed but does not import ({type(exc).__name__}: {exc})"


def skipped(why):
    """The one line the cross-check prints when it cannot run."""
    return f"PyTorch cross-check skipped: {why}."


def _tensors(torch, arrays):
    return [None if a is None else torch.tensor(as_float(a, "a parameter"), dtype=torch.float64, requires_grad=True)
            for a in arrays]


def _forward(torch, x, W1, b1, W2, b2, activation):
    z = x @ W1 + (0 if b1 is None else b1)
    sigma = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}[activation]
    y = sigma(z) @ W2
    return y if b2 is None else y + b2


def _numpy(named):
    return {name: None if t is None else t.grad.detach().numpy().copy() for name, t in named.items()}


def autograd_ffn(torch, x, grad_out, W1, b1, W2, b2, activation="relu"):
    """autograd's gradients of L = Σ grad_out ⊙ FFN(x): {"W1", "b1", "W2", "b2", "x"} (None for a missing bias)."""
    x_t, W1_t, b1_t, W2_t, b2_t = _tensors(torch, (x, W1, b1, W2, b2))
    G = torch.tensor(as_float(grad_out, "grad_out"), dtype=torch.float64)
    (G * _forward(torch, x_t, W1_t, b1_t, W2_t, b2_t, activation)).sum().backward()
    return _numpy({"W1": W1_t, "b1": b1_t, "W2": W2_t, "b2": b2_t, "x": x_t})


def autograd_loss(torch, x, target, W1, b1, W2, b2):
    """L = ½ · (1/N) Σ_tokens ‖FFN(x) - target‖² (ReLU) and autograd's gradients: {"loss", "W1", "b1", "W2", "b2"}."""
    W1_t, b1_t, W2_t, b2_t = _tensors(torch, (W1, b1, W2, b2))
    x_t = torch.tensor(as_float(x, "x"), dtype=torch.float64)
    t = torch.tensor(as_float(target, "target"), dtype=torch.float64)
    diff = _forward(torch, x_t, W1_t, b1_t, W2_t, b2_t, "relu") - t
    loss = 0.5 * (diff * diff).sum() / (diff.numel() // diff.shape[-1])
    loss.backward()
    return {"loss": float(loss.detach()), **_numpy({"W1": W1_t, "b1": b1_t, "W2": W2_t, "b2": b2_t})}


def compare(yours, autograd, label=""):
    """Print, for each of autograd's names, whether `yours[name]` agrees with it; return {name: agrees}."""
    agrees = {}
    for name, theirs in autograd.items():
        mine = yours.get(name) if isinstance(yours, dict) else None
        if theirs is None or mine is None:
            agrees[name] = theirs is None and mine is None
            said = "both None" if agrees[name] else f"yours is {'None' if mine is None else 'given'}, autograd's " \
                                                    f"{'None' if theirs is None else 'is not'}"
        else:
            mine, theirs = np.asarray(as_float(mine, f"your {name}")), np.asarray(theirs)
            agrees[name] = mine.shape == theirs.shape and bool(np.allclose(mine, theirs, rtol=RTOL, atol=ATOL))
            said = (f"agrees (largest difference {np.max(np.abs(mine - theirs), initial=0.0):.1e})" if agrees[name]
                    else f"DIFFERS (shape {mine.shape} against {theirs.shape})" if mine.shape != theirs.shape
                    else f"DIFFERS (largest difference {np.max(np.abs(mine - theirs)):.1e})")
        print(f"  {label}{name:>4}: {said}")
    return agrees
