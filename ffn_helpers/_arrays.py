"""Input validation shared by the reference computations: float64 arrays with clear errors."""

import numbers
import operator

import numpy as np


def as_float(a, name):
    """Return `a` as a float64 ndarray; raise TypeError for anything non-numeric."""
    if a is None:
        raise TypeError(f"{name} must be a number or an array of numbers, not None")
    try:
        arr = np.asarray(a)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of numbers; could not convert it: {exc}") from exc
    if arr.dtype == np.float64:
        return arr
    if arr.dtype.kind == "O":  # a list mixing numbers with something else (or ints too big for int64)
        bad = [v for v in arr.ravel() if not isinstance(v, numbers.Real)][:1]
        if bad:
            raise TypeError(f"{name} must hold real numbers, but it contains {bad[0]!r} "
                            f"of type {type(bad[0]).__name__}")
        return arr.astype(np.float64)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers, got dtype {arr.dtype} "
            f"(e.g. {np.ravel(arr)[:1].tolist()!r})"
        )
    return arr.astype(np.float64)


def check_shape(arr, expected, name, hint=""):
    """Raise ValueError unless `arr.shape` equals `expected` (tuple)."""
    if arr.shape != tuple(expected):
        raise ValueError(f"{name} should have shape {tuple(expected)}, got {arr.shape}.{hint}")


def check_matrix(arr, name):
    if arr.ndim != 2:
        raise ValueError(f"{name} should be a 2-D matrix, got an array of shape {arr.shape}")


def positive_int(value, name):
    """`value` as an int > 0: ints and numpy integers, not floats or bools."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be a whole number, got {value!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value
