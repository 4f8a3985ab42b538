"""Alternative answers for 02_forward_pass."""

from . import Wrong

_NP = "import numpy as np\n\n"

CORRECT = {
    # Naming modules is no evidence of anything: this answer must get full marks and no flag from the grader.
    "imports-modules": {
        "ffn_forward": "import gc, importlib, inspect, os, sys\n\nimport numpy as np\n\n\n"
                       "def ffn_forward(x, W1, b1, W2, b2):\n"
                       "    assert inspect.isfunction(ffn_forward) and sys.version_info >= (3,) and os.sep\n"
                       "    return np.maximum(np.asarray(x, float) @ W1 + b1, 0.0) @ W2 + b2\n",
    },
    "vectorised": {
        "ffn_forward": _NP + "def ffn_forward(x, W1, b1, W2, b2):\n"
                             "    return np.maximum(np.asarray(x, float) @ W1 + b1, 0.0) @ W2 + b2\n",
        "linear_torch": _NP + "def linear_torch(x, weight, bias):\n"
                              "    y = np.asarray(x, float) @ np.asarray(weight, float).T\n"
                              "    return y if bias is None else y + bias\n",
        "dead_fraction": _NP + "def dead_fraction(x, W1, b1):\n"
                               "    h = np.maximum(np.asarray(x, float) @ W1 + b1, 0.0)\n"
                               "    return float(np.mean(h == 0))\n",
    },
    "einsum": {
        "ffn_forward": _NP + "def ffn_forward(x, W1, b1, W2, b2):\n"
                             "    z = np.einsum('...i,ij->...j', np.asarray(x, float), W1) + b1\n"
                             "    h = np.where(z > 0, z, 0.0)\n"
                             "    return np.einsum('...j,jk->...k', h, W2) + b2\n",
        "linear_torch": _NP + "def linear_torch(x, weight, bias):\n"
                              "    y = np.einsum('...i,oi->...o', np.asarray(x, float), weight)\n"
                              "    return y + (0.0 if bias is None else bias)\n",
        "dead_fraction": _NP + "def dead_fraction(x, W1, b1):\n"
                               "    z = np.einsum('...i,ij->...j', np.asarray(x, float), W1) + b1\n"
                               "    return np.count_nonzero(z <= 0) / z.size\n",
    },
    "loop": {
        "ffn_forward": _NP + "def ffn_forward(x, W1, b1, W2, b2):\n"
                             "    x = np.asarray(x, float)\n"
                             "    rows = x.reshape(-1, x.shape[-1])\n"
                             "    out = []\n"
                             "    for row in rows:  # one token at a time\n"
                             "        h = np.maximum(row @ W1 + b1, 0.0)\n"
                             "        out.append(h @ W2 + b2)\n"
                             "    return np.array(out).reshape(x.shape[:-1] + (W2.shape[1],))\n",
        "linear_torch": _NP + "def linear_torch(x, weight, bias):\n"
                              "    y = np.tensordot(np.asarray(x, float), weight, axes=([-1], [1]))\n"
                              "    if bias is not None:\n"
                              "        y = y + bias\n"
                              "    return y\n",
        "dead_fraction": _NP + "def dead_fraction(x, W1, b1):\n"
                               "    x = np.asarray(x, float)\n"
                               "    zeros = total = 0\n"
                               "    for row in x.reshape(-1, x.shape[-1]):\n"
                               "        h = np.maximum(row @ W1 + b1, 0.0)\n"
                               "        zeros += int(np.sum(h == 0))\n"
                               "        total += h.size\n"
                               "    return zeros / total\n",
    },
}

WRONG = [
    # ffn_forward
    Wrong("ffn-missing-b1", "ffn_forward",
          _NP + "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden"), diagnosis="missing_b1"),
    Wrong("ffn-relu-on-output", "ffn_forward",
          _NP + "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(np.maximum(x @ W1 + b1, 0) @ W2 + b2, 0)\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden"), diagnosis="activation_on_output"),
    Wrong("ffn-no-activation", "ffn_forward",
          "def ffn_forward(x, W1, b1, W2, b2):\n    return (x @ W1 + b1) @ W2 + b2\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden"), diagnosis="no_activation"),
    Wrong("ffn-relu-after-W2-only", "ffn_forward",
          _NP + "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum((x @ W1 + b1) @ W2 + b2, 0)\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden"), diagnosis="activation_after_W2_only"),
    Wrong("ffn-bias-after-relu", "ffn_forward",
          _NP + "def ffn_forward(x, W1, b1, W2, b2):\n    return (np.maximum(x @ W1, 0) + b1) @ W2 + b2\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden"), diagnosis="bias_after_activation"),
    Wrong("ffn-torch-layout", "ffn_forward",
          _NP + "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1.T + b1, 0) @ W2.T + b2\n",
          loses=("test_ffn_forward", "test_ffn_forward_hidden")),
    # linear_torch
    Wrong("lin-no-transpose", "linear_torch",
          "def linear_torch(x, weight, bias):\n    return x @ weight + (0 if bias is None else bias)\n",
          loses=("test_linear_torch", "test_linear_torch_hidden"), diagnosis="torch_layout"),
    Wrong("lin-no-bias", "linear_torch", "def linear_torch(x, weight, bias):\n    return x @ weight.T\n",
          loses=("test_linear_torch", "test_linear_torch_hidden"), diagnosis="missing_bias"),
    Wrong("lin-column-vector", "linear_torch",  # W x + b: right for one token, wrong for a batch of rows
          "def linear_torch(x, weight, bias):\n    return weight @ x + (0 if bias is None else bias)\n",
          loses=("test_linear_torch_hidden",)),
    Wrong("lin-bias-none", "linear_torch",  # nn.Linear(..., bias=False) has bias None
          "def linear_torch(x, weight, bias):\n    return x @ weight.T + bias\n",
          loses=("test_linear_torch_hidden",)),
    # dead_fraction
    Wrong("dead-strict-negative", "dead_fraction",
          _NP + "def dead_fraction(x, W1, b1):\n    return float(np.mean(x @ W1 + b1 < 0))\n",
          loses=("test_dead_fraction", "test_dead_fraction_hidden"), diagnosis="strict_negative"),
    Wrong("dead-per-token", "dead_fraction",
          _NP + "def dead_fraction(x, W1, b1):\n    return np.mean(np.maximum(x @ W1 + b1, 0) == 0, axis=-1)\n",
          loses=("test_dead_fraction", "test_dead_fraction_hidden"), diagnosis="per_token_share"),
    Wrong("dead-count", "dead_fraction",
          _NP + "def dead_fraction(x, W1, b1):\n    return int(np.sum(np.maximum(x @ W1 + b1, 0) == 0))\n",
          loses=("test_dead_fraction", "test_dead_fraction_hidden"), diagnosis="count_not_share"),
    Wrong("dead-always-off", "dead_fraction",
          _NP + "def dead_fraction(x, W1, b1):\n"
                "    h = np.maximum(np.atleast_2d(x) @ W1 + b1, 0).reshape(-1, W1.shape[1])\n"
                "    return float(np.mean(np.all(h == 0, axis=0)))\n",
          loses=("test_dead_fraction", "test_dead_fraction_hidden"), diagnosis="always_inactive_units"),
    Wrong("dead-missing-b1", "dead_fraction",  # W-2 and W-3 happen not to show it
          _NP + "def dead_fraction(x, W1, b1):\n    return float(np.mean(np.maximum(x @ W1, 0) == 0))\n",
          loses=("test_dead_fraction_hidden",), diagnosis="missing_b1"),
]
