"""How far a result is from the expected one: `compare` and its message (`ffn_helpers.checks` re-exports it).

The message says what was expected, what came back and how far apart they are, a dtype or shape slip first; its
`public` form leaves the values out, for a hidden test of a private offering (verdicts.public_message).
"""

from dataclasses import dataclass

import numpy as np

DEFAULT_RTOL = 1e-7
DEFAULT_ATOL = 1e-12


@dataclass(frozen=True)
class Comparison:
    """The result of `compare`: `ok` and a message that explains it.

    `public`: the message without the values compared (the expected one, what came back): what a failure may say
    to the student when the inputs are a private offering's own (`failure`'s `public`). "" for the same message.
    """

    ok: bool
    message: str
    max_abs: float = float("nan")
    max_rel: float = float("nan")
    public: str = ""


def _fmt(a):
    return np.array2string(np.asarray(a), precision=10, threshold=12, edgeitems=3, max_line_width=100)


def compare(actual, expected, *, name="result", rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL):
    """Compare `actual` with `expected` elementwise (|a - e| <= atol + rtol·|e|, NaN equal to NaN)."""
    expected = np.asarray(expected)
    got, refused = _as_comparable(actual, expected, name)
    if refused is not None:
        return refused
    note = ""
    if expected.dtype.kind == "f" and got.dtype != expected.dtype:
        note = f"\n  note: dtype is {got.dtype}, expected {expected.dtype}"
    note += _one_factor(got, expected)
    # The course computes in float64. A float32 answer (PyTorch's default) passes only if it is
    # exact; otherwise it fails, and the dtype is the first thing the message says, not a footnote.
    lower_precision = (expected.dtype.kind == "f" and got.dtype.kind == "f"
                       and got.dtype.itemsize < expected.dtype.itemsize)
    diff, rel, close = _differences(got.astype(np.float64), expected.astype(np.float64), rtol, atol)
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    if close.all() and not (lower_precision and max_abs > 0):
        how = "equal" if max_abs == 0 else (
            f"close (largest absolute difference {max_abs:.3g}, largest relative difference {max_rel:.3g})")
        return Comparison(True, f"{name}: {how}{note}", max_abs, max_rel)
    if lower_precision:
        close = diff == 0  # only exact entries of a lower-precision answer count as right
        lines = _lower_precision_lines(name, got.dtype, expected.dtype, int((~close).sum()), close.size)
    else:
        lines = [f"{name} is not close to the expected value: {int((~close).sum())} of {close.size} entries differ "
                 f"(tolerance: |got - expected| <= {atol:g} + {rtol:g}·|expected|)."]
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    lines.append(f"  largest absolute difference {max_abs:.6g} at index {tuple(int(i) for i in worst)}, "
                 f"largest relative difference {max_rel:.3g}")
    values = [f"  expected: {_fmt(expected)}", f"  got:      {_fmt(got)}"]
    return Comparison(False, "\n".join(lines + values) + note, max_abs, max_rel, public="\n".join(lines) + note)


def _one_factor(got, expected):
    """A note when every entry is the expected one times one factor (not 1): a scale slip, such as a wrong std."""
    if got.size < 2 or expected.dtype.kind not in "biuf" or got.dtype.kind not in "biuf":
        return ""
    with np.errstate(all="ignore"):
        e, g = expected.astype(np.float64), got.astype(np.float64)
        if not (np.all(np.isfinite(e)) and np.all(np.isfinite(g)) and np.all(e != 0)):
            return ""
        ratio = g / e
    first = float(ratio.flat[0])
    if abs(first - 1.0) < 1e-6 or not np.allclose(ratio, first, rtol=1e-9, atol=0):
        return ""
    return f"\n  note: every entry is {first:.4g} times the expected one"


def _as_comparable(actual, expected, name):
    """(`actual` as an array of numbers of the expected shape, None), or (None, the failed Comparison: why not)."""
    if actual is None:
        return None, Comparison(False, f"{name} is None: did the function forget to `return` its result?")
    try:
        got = np.asarray(actual)
    except Exception as exc:
        return None, Comparison(False, f"{name} could not be read as an array: {exc}")
    if got.dtype.kind not in "biuf":
        public = f"{name} should hold numbers, got dtype {got.dtype}"
        return None, Comparison(False, f"{public}: {_fmt(got)}", public=public)
    if got.shape != expected.shape:
        hint = ""
        if got.shape[::-1] == expected.shape and got.ndim > 1:
            hint = (" (the expected shape reversed: computed along another axis than the one asked, or "
                    "transposed)")
        elif got.size == expected.size:
            hint = " (same number of elements: check for a reshape, a squeeze or a flattening)"
        has = "is a single number (shape ())" if got.shape == () else f"has shape {got.shape}"
        public = f"{name} {has}, expected {_shape_words(expected.shape)}{hint}."
        return None, Comparison(False, f"{public}\n  expected: {_fmt(expected)}\n  got:      {_fmt(got)}",
                                public=public)
    return got, None


def _shape_words(shape):
    """A shape as a learner reads it: "a single number (shape ())", or "shape (3, 4)"."""
    return "a single number (shape ())" if shape == () else f"shape {shape}"


def _differences(g, e, rtol, atol):
    """Elementwise |g - e|, the relative difference and closeness; NaN matches NaN and an infinity the same one."""
    with np.errstate(all="ignore"):
        diff = np.abs(g - e)
        both_nan = np.isnan(g) & np.isnan(e)
        same_inf = np.isinf(g) & (g == e)
        diff = np.where(both_nan | same_inf, 0.0, diff)
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number: as far apart as can be
        scale = np.abs(np.where(np.isfinite(e), e, 0.0))
        close = diff <= atol + rtol * scale
        rel = np.where(diff == 0, 0.0, np.where(scale != 0, diff / scale, np.inf))
    return diff, rel, close


def _lower_precision_lines(name, got_dtype, expected_dtype, n_bad, size):
    """The message's first lines for an answer in a lower precision than the course's: the dtype comes first."""
    return [f"{name} has dtype {got_dtype}, expected {expected_dtype}: compute in {expected_dtype} "
            f"({got_dtype} keeps only about {np.finfo(got_dtype).precision} significant digits).",
            f"  {n_bad} of {size} entries differ from the {expected_dtype} values."]
