"""Held-out pairs for 07_collapse_to_linear."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "07_collapse_to_linear"

PAIRS = [
    Pair("renamed", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    A, a, B, c = (np.asarray(m, dtype=float) for m in (W1, b1, W2, b2))
    return A @ B, a @ B + c
'''),
    Pair("temporaries", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    W = W1 @ W2
    b = b1 @ W2 + b2
    return W, b
'''),
    Pair("commented", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    # (x W1 + b1) W2 + b2 = x (W1 W2) + (b1 W2 + b2)
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    return W1 @ W2, b1 @ W2 + b2  # W, b
'''),
    Pair("independent", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    W = np.dot(np.array(W1, float), np.array(W2, float))
    b = np.dot(np.array(b1, float), np.array(W2, float)) + np.array(b2, float)
    return W, b
'''),
    Pair("renamed", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    gen = np.random.default_rng(seed)
    for _ in range(n_trials):
        s = 10.0 ** gen.uniform(-2, 3)
        u, v = gen.normal(scale=s, size=(2, d_in))
        t = gen.uniform(-1.0, 2.0)
        fu, fv = np.asarray(f(u), dtype=float), np.asarray(f(v), dtype=float)
        left = np.asarray(f(t * u + (1 - t) * v), dtype=float)
        right = t * fu + (1 - t) * fv
        big = max(np.abs(fu).max(), np.abs(fv).max(), np.abs(left).max())
        if not np.allclose(left, right, rtol=1e-9, atol=1e-9 * (1.0 + big)):
            return False
    return True
'''),
    Pair("commented", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        # random scale between 0.01 and 1000
        scale = 10.0 ** rng.uniform(-2, 3)
        # two random points
        x, y = rng.normal(scale=scale, size=(2, d_in))
        # a can be outside [0, 1] too
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        # tolerance relative to the size of the outputs
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False  # found a counterexample
    return True
'''),
    Pair("reordered", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        scale = 10.0 ** rng.uniform(-2, 3)
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False
    return True
'''),
    Pair("dead_code", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    rng = np.random.default_rng(seed)
    failures = 0
    for _ in range(n_trials):
        scale = 10.0 ** rng.uniform(-2, 3)
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        diff = np.abs(lhs - rhs)
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False
    return True
'''),
    Pair("temporaries", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        exponent = rng.uniform(-2, 3)
        scale = 10.0 ** exponent
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        mix = a * x + (1 - a) * y
        lhs = np.asarray(f(mix), dtype=float)
        rhs = a * fx + (1 - a) * fy
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        tol = 1e-9 * (1.0 + size)
        ok = np.allclose(lhs, rhs, rtol=1e-9, atol=tol)
        if not ok:
            return False
    return True
'''),
    Pair("independent", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    generator = np.random.default_rng(seed)
    points = generator.standard_normal((n_trials, 2, d_in)) * np.logspace(-2, 3, n_trials)[:, None, None]
    weights = generator.uniform(-1, 2, n_trials)
    results = []
    for (p, q), t in zip(points, weights):
        mixed = f(t * p + (1 - t) * q)
        combo = t * np.asarray(f(p)) + (1 - t) * np.asarray(f(q))
        scale = 1 + np.max(np.abs([np.max(np.abs(f(p))), np.max(np.abs(f(q)))]))
        results.append(np.max(np.abs(np.asarray(mixed) - combo)) <= 1e-9 * scale * 10)
    return bool(all(results))
'''),
    Pair("parentheses", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    return ((W1 @ W2), ((b1 @ W2) + b2))
'''),
    Pair("free_cell", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    return merge(W1, b1, W2, b2)
''', free='''def merge(W1, b1, W2, b2):
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    return W1 @ W2, b1 @ W2 + b2
'''),
    Pair("reformatted", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        scale = 10.0**rng.uniform(-2, 3)
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx = np.asarray(f(x), dtype=float); fy = np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a*x + (1 - a)*y), dtype=float)
        rhs = a*fx + (1 - a)*fy
        size = max(np.abs(fx).max(),
                   np.abs(fy).max(),
                   np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9*(1.0 + size)): return False
    return True
'''),
    Pair("free_cell", "is_affine", SOLUTION, '''def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    return affine_check(f, d_in, n_trials, seed)
''', free='''def affine_check(f, d_in, n_trials, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        scale = 10.0 ** rng.uniform(-2, 3)
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False
    return True
'''),
    Pair("reordered", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    b = b1 @ W2 + b2
    W = W1 @ W2
    return W, b
'''),
    Pair("dead_code", "collapse_linear", SOLUTION, '''def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    rank = np.linalg.matrix_rank(W1 @ W2)
    return W1 @ W2, b1 @ W2 + b2
'''),
]
