"""Checks for learners' code: one readable message saying what was expected,
what came back, how far apart they are and, where a known mistake explains the
difference, which one.

    check(ffn_forward, (x, W1, b1, W2, b2), expected, mistakes=mistakes.for_exercise("ffn_forward"))

raises AssertionError with that message, so an nbgrader test cell fails (and
scores 0) exactly when the learner's function is wrong. In IPython (a notebook) the
failure shows that message first, then only the learner's own frames, if any
(`message_first`): never the frames of this module.
"""

import functools
import hashlib
import json
import re
import sys
import traceback
import types
import warnings
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


def diagnose(actual, mistakes, args, *, expected=None, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, same=None,
             nothing=None):
    """The catalogued mistakes that `actual`, the learner's result on `args`, confirms (a list; [] for none).

    A mistake is named only where these inputs single it out: its own result on them differs from the right one
    (`expected`, when given) and from what an answer that computes nothing gives (zeros, one value in every entry,
    0 or 1 for a single number, one of `args` as it came: `_computes_nothing`), and `actual` is that result.
    Where several mistakes give that same result, the inputs cannot tell them apart: all of them are named, and
    `failure` says so. `same(a, b)`: whether two results are the same one (default: `compare` within the
    tolerances, shapes equal); a check that compares its own way (bit for bit, labels) passes its own.
    `nothing(result, expected)`: whether a result is one an answer that computes nothing gives (default:
    `_computes_nothing`).
    A single number, or a verdict, is seldom enough: `check_cases` and `diagnose_cases` confirm a mistake on every
    input of a test.
    """
    if same is None:
        def same(a, b):
            return np.shape(a) == np.shape(b) and compare(a, b, rtol=rtol, atol=atol).ok
    if nothing is None:
        # One part of a result (kv_ffn's W2) may be an argument as it came, and that is a mistake of its own
        # (W2 = V): an answer that returns an argument for the whole result computes nothing, one part of it does.
        given = () if any(getattr(m, "part", None) for m in mistakes) else args

        def nothing(result, expected):
            return _computes_nothing(result, given, same, expected)
    if expected is not None and _agree(same, actual, expected):
        return []
    results = []
    for mistake in mistakes:
        # A wrong formula may warn on these inputs (e.g. ddof=1 with d = 1); that is
        # not the learner's output and must not reach stderr in a test cell.
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append((mistake, mistake.compute(*args)))
        except Exception:  # the mistake may not even be possible for these inputs
            continue
    found = []
    for mistake, wrong in results:
        if not _agree(same, actual, wrong) or mistake.key in {m.key for m in found}:
            continue
        if (expected is not None and _agree(same, wrong, expected)) or nothing(wrong, expected):
            continue  # these inputs say nothing about this mistake
        found.append(mistake)
    return found


def _agree(same, a, b):
    """same(a, b), False where it cannot even compare them."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(same(a, b))
    except Exception:
        return False


def _computes_nothing(result, args, same, expected=None, alone=True):
    """Whether an answer that computes nothing could give `result`: zeros, one value in every entry (where the right
    result, `expected`, is not one value itself), or one of `args` as it came; for a result of several parts (a
    tuple), each part. Such a result singles out no mistake: a learner's `return 0`, integer division or `return x`
    gives it too. `alone`: the result is all the evidence there is, so that a single number 0 or 1, a verdict or
    a label is such a result too (not so for one of several inputs' results: `diagnose_cases`)."""
    if isinstance(result, tuple | list):
        matched = isinstance(expected, tuple | list) and len(expected) == len(result)
        parts = expected if matched else [None] * len(result)
        return bool(result) and all(_computes_nothing(r, args, same, e, alone)
                                    for r, e in zip(result, parts, strict=True))
    try:
        values = np.asarray(result)
    except Exception:
        return False
    if values.dtype.kind not in "biufUS" or values.size == 0:
        return values.size == 0
    flat = values.ravel()
    if flat.size > 1 and bool(np.all(flat == flat[0])) and not (flat[0] == 0 or _filled(expected)):
        return True
    if flat.size > 1 and bool(np.all(flat == 0)):
        return True
    if alone and flat.size == 1 and (values.dtype.kind in "bUS" or float(flat[0]) in (0.0, 1.0)):
        return True
    return any(_agree(same, arg, result) for arg in args)


def _filled(values):
    """Whether `values` is an array of one value in every entry (a result such as b1 = -θ)."""
    try:
        flat = np.ravel(np.asarray(values))
    except Exception:
        return False
    return flat.size > 1 and flat.dtype.kind in "biuf" and bool(np.all(flat == flat[0]))


NO_RESULT = object()  # a case whose call crashed: no evidence either way


def diagnose_cases(results, mistakes, cases, *, expected, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, same=None):
    """`diagnose` over several inputs of one test: the mistakes whose results on every input of `cases` (a list of
    argument tuples, as their computations take them) are the learner's `results` there (`NO_RESULT` where the
    learner's call crashed: no evidence), given the right ones, `expected`. The other inputs confirm what one
    input, a single number or a verdict, cannot: a mistake whose results are one value on every input, or nothing
    computed on each, singles out nothing."""
    if same is None:
        def same(a, b):
            return np.shape(a) == np.shape(b) and compare(a, b, rtol=rtol, atol=atol).ok
    cases = [tuple(args) for args in cases]

    def same_all(a, b):
        return len(a) == len(b) and all(x is NO_RESULT or y is NO_RESULT or _agree(same, x, y)
                                        for x, y in zip(a, b, strict=True))

    # As in `diagnose`: where the mistakes explain one part of a result, that part may be an argument as it came.
    given = [() for _ in cases] if any(getattr(m, "part", None) for m in mistakes) else cases

    def nothing(vector, expected):
        known = [(r, args, e) for r, args, e in zip(vector, given, expected, strict=True) if r is not NO_RESULT]
        constant = len(known) > 1 and all(_agree(same, r, known[0][0]) for r, _, _ in known)
        alone = len(known) == 1  # one input's result is all the evidence: judged as `diagnose` judges it
        return constant or all(_computes_nothing(r, args, same, e, alone=alone) for r, args, e in known)

    def over_cases(mistake):
        def compute():
            return [_quietly(mistake.compute, args) for args in cases]

        return mistake.computing(compute)

    return diagnose(list(results), [over_cases(m) for m in mistakes], (), expected=list(expected), same=same_all,
                    nothing=nothing)


def _quietly(compute, args):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compute(*args)
    except Exception:
        return NO_RESULT


def check_cases(fn, cases, *, name=None, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, mistakes=(), exact=False, about=None,
                shown=None):
    """`check` over several inputs of one test: `cases` holds (args, expected) pairs, or (args, expected, the
    arguments the mistakes take) triples. The first wrong result fails as `check` would, and the learner's function
    still runs on the remaining inputs, so that a mistake is named only where it explains the learner's result on
    every one of them (`diagnose_cases`). `exact`: each result is compared as `check_equal` does (a label, a
    verdict, a count), and its call is shown with its arguments (or as `shown` gives it, one text per case);
    `about`: a description of each case, shown above its failure (`in_case`). Returns the results."""
    name = name or getattr(fn, "__name__", "result")
    cases = [tuple(case) if len(case) == 3 else (*case, case[0]) for case in cases]
    results, failed = [], None
    for i, (args, expected, _) in enumerate(cases):
        if failed is None:
            try:
                actual = call(fn, *args, name=name)
            except AssertionError as crash:
                if about is None:
                    raise
                raise in_case(about[i], crash) from crash.__cause__
            error = _wrong(actual, expected, name, args, rtol, atol, exact, None if shown is None else shown[i])
            failed = None if error is None else (i, error)
        else:
            actual = evidence(fn, args, name)
        results.append(actual)
    if failed is None:
        return results
    same = (lambda a, b: _kind(a) == _kind(b) and bool(a == b)) if exact else None
    found = diagnose_cases(results, mistakes, [c[2] for c in cases], expected=[c[1] for c in cases], rtol=rtol,
                           atol=atol, same=same)
    i, error = failed
    raise (in_case(about[i], error, found) if about is not None else failure(str(error), found, keeps=error))


def _wrong(actual, expected, name, args, rtol, atol, exact, shown=None):
    """The failure of one case of `check_cases`, or None when its result is right."""
    if exact:
        shown = shown or (call_text(name, args) if all(map(_plain, args)) else f"{name}(...)")
        try:
            check_equal(actual, expected, name=shown)
        except AssertionError as error:
            return error
        return None
    comparison = compare(actual, expected, name=f"{name}(...)", rtol=rtol, atol=atol)
    return None if comparison.ok else failure(comparison.message, public=comparison.public or comparison.message)


def _plain(value):
    """Whether `value`'s repr is short and reads as Python: a number, a string, a flag, None, or a tuple of them."""
    if isinstance(value, tuple | list):
        return len(value) <= 8 and all(map(_plain, value))
    return value is None or isinstance(value, bool | int | float | str | np.number | np.bool_)


def call_text(name, args, kwargs=None):
    """The call `name(*args, **kwargs)` as Python reads it: every argument, by its repr."""
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(shown)})"


def evidence(fn, args, name=None):
    """fn(*args) for a diagnosis only (`diagnose_cases`): its result, or `NO_RESULT` where it fails."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(fn, *args, name=name)
    except AssertionError:
        return NO_RESULT


_NOT_CLOSE = re.compile(r"^(?P<name>.+?) is not close to the expected value: (?P<n>\d+) of (?P<of>\d+) entries differ")
_LARGEST = re.compile(r"largest absolute difference (?P<diff>\S+)")


def brief(message, name=None):
    """The shortest fact of a check's failure `message`, on one line: what differs and by how much (`compare`'s
    tolerance arithmetic and values left out), its dtype and shape notes kept, a "Case: ..." put in front, a line
    that ends on a colon joined to the next; no "Likely mistake" line (the diagnosis says it, from the keys).
    `name`: the exercise, whose "name(...)" in front goes without saying where the line already names it."""
    lines = [line.strip() for line in str(message).strip().splitlines()
             if line.strip() and not line.startswith("Likely mistake (") and line != ALIKE]
    if not lines:
        return ""
    lines[0] = re.sub(r"^\w+Error: ", "", lines[0])
    case = lines.pop(0).removeprefix("Case: ") if lines[0].startswith("Case: ") and len(lines) > 1 else None
    first, rest = _fact(lines[0], lines[1:]), lines[1:]
    while first.endswith(":") and rest and not rest[0].startswith(("expected:", "got:", "note:", "largest ")):
        following = rest.pop(0)
        first = f"{first} {_fact(following, rest)}"
    notes = [line.removeprefix("note: ") for line in rest if line.startswith("note: ")]
    text = "; ".join([first.removesuffix("."), *notes])
    if name and text.startswith(f"{name}(...)"):
        text = text.removeprefix(f"{name}(...)").lstrip(": ").removeprefix("is ")
    return f"{case}: {text}" if case else text


def _fact(line, rest):
    """One line of a failure, `compare`'s "is not close" one as how many entries differ and by how much."""
    found = _NOT_CLOSE.match(line)
    if not found:
        return line
    largest = next((m["diff"] for m in map(_LARGEST.search, rest) if m), None)
    if found["of"] == "1":
        return f"{found['name']} is off by {largest}" if largest else f"{found['name']} is wrong"
    by = f", by up to {largest}" if largest else ""
    return f"{found['name']}: {found['n']} of {found['of']} entries differ{by}"


def message_first(exc):
    """Make IPython show the exception `exc` as its message, then the learner's frames of its cause; return it.

    IPython asks an exception for `_render_traceback_()` before formatting one itself.
    Without it, a failed check sits under a traceback through this module, and a
    learner's crash under two chained ones. The learner's own frames are formatted by
    IPython, which leaves out frames that set `__tracebackhide__` (this module's `call`).
    """
    exc._render_traceback_ = lambda: _rendered(exc)
    return exc


def _rendered(exc):
    lines = str(exc).splitlines() or [type(exc).__name__]
    cause = exc.__cause__
    if cause is None or cause.__traceback__ is None:
        return lines
    try:
        from IPython import get_ipython

        frames = get_ipython().InteractiveTB.structured_traceback(type(cause), cause, cause.__traceback__)
    except Exception:  # outside a working IPython shell: Python's own formatting
        frames = traceback.format_exception(cause)
    # IPython notes each frame it hid; the learner never wrote those, so the note says nothing to them.
    frames = ["\n".join(line for line in part.split("\n") if not _HIDDEN_NOTE.search(line)) for part in frames]
    return lines + [""] + [part for part in frames if part.strip()]


_HIDDEN_NOTE = re.compile(r"\[\.\.\. skipping hidden \d+ frames?\]")


def call(fn, *args, name=None):
    """Call the learner's `fn(*args)`; turn 'not implemented' and crashes into clear failures.

    In a notebook whose setup cell states the course functions each exercise may call (`may_call`), every other
    one is refused while `fn` runs, as the grader refuses it (`_Rule`): the check fails with the grader's words.
    """
    __tracebackhide__ = True  # noqa: F841 (read by IPython: this frame is the course's, not the learner's)
    name = name or getattr(fn, "__name__", "the function")
    rule = _Rule.of(fn, name)
    try:
        with rule:
            result = fn(*rule.arguments(args))
    except NotImplementedError:
        if rule.refused:
            raise rule.fail() from None
        text = (f"{name} is not implemented yet: replace `raise NotImplementedError()` "
                "in its cell with your code, run that cell, then run this test again.")
        raise failure(text, public=text) from None
    except Exception as exc:
        if rule.refused:  # whatever the learner's code made of the refusal
            raise rule.fail() from None
        # The learner's own words (their exception's message) are theirs to see, whatever the inputs were.
        text = f"{name} raised {type(exc).__name__}: {exc}"
        raise failure(text, public=text) from exc
    if rule.refused:
        raise rule.fail()
    return result


def assert_close(actual, expected, *, name="result", rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL,
                 mistakes=(), args=()):
    """Raise AssertionError with the full explanation unless `actual` is close to `expected`."""
    result = compare(actual, expected, name=name, rtol=rtol, atol=atol)
    if result.ok:
        return
    raise failure(result.message, diagnose(actual, mistakes, args, expected=expected, rtol=rtol, atol=atol),
                  public=result.public or result.message)


ALIKE = "Each of these mistakes gives exactly this result here (these inputs cannot tell them apart):"


def failure(message, found=(), *, keeps=None, public=None):
    """The AssertionError a check raises (`raise checks.failure(...)`, also in a notebook's own check helper):
    `message`, then a "Likely mistake (key): explanation" line per mistake `found`, with the keys
    attached as data (`named_mistakes` reads them), shown message first (`message_first`).

    The grader takes a diagnosis from those keys only, never from the text, which quotes
    what the learner's code returned or raised. `keeps`: an earlier failure whose keys this
    one carries on (a helper that rewords a check's message), and its `public` text unless this one gives its own.
    `public`: the message without the test's data (its inputs, the expected values, what came back), which is
    all the student reads of a failed hidden test of a private offering (`public_message`); True when `message`
    holds no such data itself. A failure without one says there only that its values are withheld.
    """
    public = message if public is True else public
    lines = {m.key: f"\nLikely mistake ({m.key}): {m.explanation}" for m in found}
    if len(lines) > 1:  # the inputs gave each of these mistakes this very result
        lines = {"": f"\n{ALIKE}", **lines}
    error = AssertionError(message + "".join(lines.values()))
    error.mistake_keys = tuple(dict.fromkeys([*named_mistakes(keeps), *(key for key in lines if key)]))
    inherited = public is None and public_text(keeps) is not None
    public = public_text(keeps) if inherited else public
    if public is not None:  # an inherited text ends with its own mistakes' lines already
        said = set(named_mistakes(keeps)) if inherited else set()
        error.public_text = public + "".join(line for key, line in lines.items() if not key or key not in said)
    return message_first(error)


def wrong_result(call, wanted, got):
    """The failure of a call whose result is not the kind asked for: "`call` should return `wanted`, got ..."
    (`wanted` like "a pair (W, b)"); its public text describes what came (`describe`) without its values."""
    said = f"{call} should return {wanted}, got {describe(got)}"
    return failure(f"{said}: {_short_repr(got)}", public=said)


def describe(value):
    """What `value` is, without its values: its type, and its length, shape and dtype where it has them."""
    kind = type(value).__name__
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an ndarray of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, tuple | list | dict):
        return f"a {kind} of length {len(value)}"
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _short_repr(value, limit=200):
    try:
        text = repr(value)
    except Exception as exc:  # the learner's own __repr__
        text = f"<repr raised {type(exc).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def in_case(case, error, found=()):
    """The failure `error` of a check, as one case of several: "Case: `case`" above its message and its public
    text, and the mistakes `found` (besides those it names already) below them."""
    inner, named = public_text(error), named_mistakes(error)
    return failure(f"Case: {case}\n{error}", [m for m in found if m.key not in named], keeps=error,
                   public=None if inner is None else f"Case: {case}\n{inner}")


def public_text(error):
    """The `public` text a check's failure carries (see `failure`), or None."""
    text = getattr(error, "public_text", None) if isinstance(error, AssertionError) else None
    return text if type(text) is str else None


WITHHELD = ("this hidden test failed on inputs of this course offering's own; the grader's message quotes them, "
            "so it goes to your instructor only")


def public_message(error):
    """What the student reads of a failed hidden test whose inputs are a private offering's own: the check's
    `public` text (what failed, the shapes, how far off, the likely mistakes), without the inputs, the expected
    values or what came back; for any other error, its type and a line saying the rest is withheld."""
    text = public_text(error)
    return f"{type(error).__name__}: {text if text is not None else WITHHELD}"


def named_mistakes(error):
    """The catalogue keys a check attached to `error` (see `failure`); () for any other exception."""
    keys = getattr(error, "mistake_keys", ()) if isinstance(error, AssertionError) else ()
    return tuple(keys) if isinstance(keys, tuple) and all(type(k) is str for k in keys) else ()


def check(fn, args, expected, *, name=None, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, mistakes=()):
    """Call `fn(*args)` and assert its result is close to `expected`; return the result. `name`: the function's name,
    shown as `name(...)`, or a call shown as Python reads it (`f"ffn_module_forward(x, W1, b1, W2, b2, activation=
    {activation!r})"`), shown as it is."""
    name = name or getattr(fn, "__name__", "result")
    actual = call(fn, *args, name=name.partition("(")[0])
    shown = name if name.endswith(")") else f"{name}(...)"
    assert_close(actual, expected, name=shown, rtol=rtol, atol=atol, mistakes=mistakes, args=args)
    return actual


# numpy's scalars stand in for Python's: np.bool_ for bool, np.int64 for int, np.str_ for str.
_KINDS = (((bool, np.bool_), "bool"), ((int, np.integer), "int"), ((str, np.str_), "str"),
          ((float, np.floating), "float"))


def _kind(value):
    for kinds, kind in _KINDS:  # bool first: True is an int too
        if isinstance(value, kinds):
            return kind
    return type(value).__name__


def check_equal(actual, expected, *, name="result"):
    """Assert exact equality for non-array answers (strings, booleans, integers)."""
    # The public texts leave out the name too: a helper may name the call by its (hidden) argument.
    if _kind(actual) != _kind(expected):
        raise failure(
            f"{name} should be of type {_kind(expected)} ({expected!r}), "
            f"got type {type(actual).__name__}: {actual!r}",
            public=f"the result should be of type {_kind(expected)}, got type {type(actual).__name__}")
    if actual != expected:
        raise failure(f"{name}: expected {expected!r}, got {actual!r}",
                      public=f"the result (of type {_kind(expected)}) is not the expected value")


_MISSING = object()


class substitute:
    """Grade one exercise on its own: while the block runs, names of the learner's are the course's functions.

        with checks.substitute(layer_norm=norm.layer_norm):
            checks.check(post_ln_block, ...)   # the learner's block calls the reference layer_norm

    so that a slip in `layer_norm` costs points in its own tests only. It rebinds the
    names in the calling cell's globals (the notebook's namespace), and puts them back
    afterwards. Each value must be a function of `ffn_helpers`: the autograder's clean
    re-run (`substitute.hook`) rebinds the same names in the learner's process by the
    function's dotted name, so both runs grade exactly the same thing.
    """

    hook = None  # set by the autograder's clean re-run: dotted names -> a context manager
    handed = []  # a stack: the functions each block under way hands over (`_Rule` lets the learner's code call them)

    def __init__(self, **names):
        for name, function in names.items():
            if not str(getattr(function, "__module__", "")).startswith("ffn_helpers"):
                raise ValueError(f"substitute({name}=...) takes a function of ffn_helpers, got {function!r}")
        self.names = names

    def dotted(self):
        return {name: f"{f.__module__}.{f.__qualname__}" for name, f in self.names.items()}

    def __enter__(self):
        self._globals = sys._getframe(1).f_globals
        self._saved = rebind(self._globals, self.names)
        self._remote = substitute.hook(self.dotted()) if substitute.hook is not None else None
        if self._remote is not None:
            self._remote.__enter__()
        substitute.handed.append(tuple(self.names.values()))  # the course functions the learner may call meanwhile
        return self

    def __exit__(self, *exc):
        substitute.handed.pop()
        try:
            if self._remote is not None:
                self._remote.__exit__(*exc)
        finally:
            restore(self._globals, self._saved)
        return False


def rebind(namespace, values):
    """Bind `values` (name -> object) in `namespace`; return what to give `restore` to undo it."""
    saved = {name: namespace.get(name, _MISSING) for name in values}
    namespace.update(values)
    return saved


def restore(namespace, saved):
    """Undo `rebind`: each name gets its old object back, or is removed if it had none."""
    for name, value in saved.items():
        if value is _MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = value


# --- The course functions an answer may call ------------------------------------------------------------------
# While an exercise is graded, the grader's clean re-run computes only the course functions its answer cell lists
# (autograder/may_call.py) and those a test hands over (`substitute`); any other call is refused, and the test fails
# (`refusal`'s words). The build writes the same lists into the notebook's setup cell (`may_call`), so that the
# notebook's own checks refuse the same calls before the learner submits (`_Rule`). In the clean re-run the grader
# does it itself: there `substitute.hook` is set, and `_Rule` stands aside.

_LISTS = "__course_may_call__"  # the notebook's global under which `may_call` keeps the lists
_PACKAGE = "ffn_helpers"
_OPEN = ("ffn_helpers.checks", "ffn_helpers.examples")  # the grader hands these to the learner's code as they are


def may_call(**lists):
    """State, in the notebook that runs this (the build adds it to each setup cell, from the answer cells'
    metadata), the course functions each exercise's answer may call: `may_call(recall=["ffn_forward"], kv_ffn=[])`,
    by their names under ffn_helpers. While a check calls the learner's function of one of these exercises, every
    other course function the notebook's names reach is refused, as the grader refuses it."""
    sys._getframe(1).f_globals[_LISTS] = {exercise: tuple(names) for exercise, names in lists.items()}


def refusal(exercise, dotted, allowed):
    """The words of a refused call of the course's function `dotted` in `exercise`'s answer (the notebook's checks
    and the grader's clean re-run say the same); `allowed`: the names of the course functions it may call."""
    listed = ", ".join(allowed) or "none"
    return (f"{exercise} uses the course's {dotted} (the course functions it may call: {listed}), which the grader "
            f"does not run for {exercise}: its test fails as for an unimplemented function")


def _course_function(value):
    """The dotted name of `value` if it is a function or class of ffn_helpers the grader refuses unless allowed."""
    if type(value) is not types.FunctionType and not isinstance(value, type):
        return None
    module = value.__dict__.get("__module__") if isinstance(value, type) else value.__module__
    if not isinstance(module, str) or module in _OPEN or module.split(".")[0] != _PACKAGE:
        return None
    return f"{module}.{value.__qualname__}"


def _course_module(value):
    return (type(value) is types.ModuleType and value.__name__.split(".")[0] == _PACKAGE
            and value.__name__ not in _OPEN)


def _resolve(name):
    """The course function `name` (dotted under ffn_helpers) stands for, or None."""
    value = sys.modules.get(_PACKAGE)
    for part in str(name).split("."):
        value = getattr(value, part, None)
    return value


class _Rule:
    """One check's call of a learner's function of `exercise`: while it runs, each name of the notebook bound to a
    course function it may not call (or to a module of them) is bound to one that refuses, and says why."""

    def __init__(self, namespace=None, exercise=None, allowed=()):
        self.namespace, self.exercise, self.allowed = namespace, exercise, tuple(allowed)
        self.refused = []  # the refusals' messages, in order
        self._saved = {}
        permitted = [_resolve(name) for name in self.allowed] + [f for block in substitute.handed for f in block]
        self._permitted = {id(f): f for f in permitted if f is not None}

    @classmethod
    def of(cls, fn, name):
        """The rule for a check's call of `fn`, named `name` by the check; one that does nothing where none holds."""
        namespace = _notebook_of_caller() if substitute.hook is None else None
        lists = namespace.get(_LISTS) if namespace is not None else None
        if not isinstance(lists, dict):
            return cls()
        for exercise in _exercises_of(fn, name):
            if exercise in lists:
                return cls(namespace, exercise, lists[exercise])
        return cls()

    def __enter__(self):
        if self.namespace is not None:
            for key, value in list(self.namespace.items()):
                guarded = self._guarded(value)
                if guarded is not value:
                    self._saved[key] = (value, guarded)
                    self.namespace[key] = guarded
        return self

    def __exit__(self, *exc):
        for key, (value, guarded) in self._saved.items():
            if self.namespace.get(key) is guarded:  # the learner's own rebinding of the name stays
                self.namespace[key] = value
        self._saved = {}
        return False

    def _guarded(self, value):
        if id(value) in self._permitted:
            return value
        dotted = _course_function(value)
        if dotted is not None:
            return self._refuser(dotted)
        return _GuardedModule(value, self) if _course_module(value) else value

    def _refuser(self, dotted):
        def refused(*args, **kwargs):
            message = refusal(self.exercise, dotted, self.allowed)
            self.refused.append(message)
            raise NotImplementedError(message)

        refused.__qualname__ = refused.__name__ = dotted.rpartition(".")[2]
        return refused

    def arguments(self, args):
        """`args`, each function among them run as the course's own (the grader runs them on its side)."""
        if self.namespace is None:
            return args
        return tuple(self._outside(a) if type(a) in (types.FunctionType, types.MethodType) else a for a in args)

    def _outside(self, function):
        @functools.wraps(function)
        def courses(*args, **kwargs):
            saved = dict(self._saved)
            self.__exit__()
            try:
                return function(*args, **kwargs)
            finally:
                self.__enter__() if saved else None

        return courses

    def fail(self):
        """The check's failure: the first refusal, in the grader's words."""
        text = self.refused[0]
        return failure(text, public=text)


class _GuardedModule(types.ModuleType):
    """A module of ffn_helpers as an answer under a `_Rule` reaches it: its functions refuse, unless permitted."""

    def __init__(self, module, rule):
        super().__init__(module.__name__, module.__doc__)
        self.__dict__["_course_parts"] = (module, rule)

    def __getattr__(self, key):
        module, rule = self.__dict__["_course_parts"]
        return rule._guarded(getattr(module, key))


def _notebook_of_caller():
    """The namespace of the nearest calling frame whose globals hold `may_call`'s lists (a notebook's), or None."""
    frame = sys._getframe(1)
    for _ in range(64):
        if frame is None:
            return None
        if _LISTS in frame.f_globals:
            return frame.f_globals
        frame = frame.f_back
    return None


def _exercises_of(fn, name):
    """The exercise names a check's call may be of: the check's own name for it, then the function's or class's."""
    found = [str(name).split(".")[0]] if name else []
    if type(fn) is types.MethodType:
        fn = fn.__func__
    if type(fn) is types.FunctionType:
        found.append(fn.__qualname__.split(".")[0])
    elif isinstance(fn, type):
        found.append(fn.__name__)
    else:
        found.append(type(fn).__qualname__.split(".")[0])
    return found


# A private offering's own seed (autograder/AUTHORING.md, "A private offering"). It is never written here: this
# module is public and every sandbox imports it. The grader's judge sets it, from the instructor's configuration
# outside the repository (autograder/offering.py), before it runs the hidden tests. None: the published inputs.
_offering_seed = None


def set_offering_seed(seed):
    """Draw every hidden test's inputs from an offering's own `seed` from now on (None: the published inputs)."""
    global _offering_seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"an offering's seed is a whole number >= 0 or None, got {seed!r}")
    _offering_seed = seed


def private_offering():
    """True while the hidden tests draw an offering's own inputs (`set_offering_seed`), not the published ones."""
    return _offering_seed is not None


# A hidden test's stream is named by its key: the notebook's assignment id, the test cell's grade id, and, where one
# test draws several streams (a loop over draws), further parts. The key is hashed (SHA-256: the same on every machine
# and Python, unlike hash()) together with the offering's seed, or "published" while none is set, into the entropy
# of numpy's SeedSequence. Two tests never share a stream unless they share a key (tests/test_hidden_streams.py holds
# every hidden test of the course to its own), and an offering's streams say nothing of the published ones'.
_KEY_PART = re.compile(r"[A-Za-z0-9_]+")


def hidden_stream(assignment, test, *parts):
    """The SeedSequence of the hidden test `test` (its cell's grade id) of `assignment` (its notebook's id);
    `parts` (names or whole numbers >= 0) tell apart several streams of one test. Published while no offering's
    seed is set, the offering's own otherwise."""
    key = [assignment, test, *parts]
    if not all(isinstance(k, str) and _KEY_PART.fullmatch(k) for k in key[:2]) or not all(
            (isinstance(p, str) and _KEY_PART.fullmatch(p)) or (type(p) is int and p >= 0) for p in parts):
        raise ValueError("a hidden stream's key is (assignment id, grade id, *parts), the ids and any named part "
                         f"made of letters, digits and _, any other part a whole number >= 0; got {tuple(key)!r}")
    offering = "published" if _offering_seed is None else _offering_seed
    digest = hashlib.sha256(json.dumps([offering, *key]).encode("ascii")).digest()
    return np.random.SeedSequence(int.from_bytes(digest, "big"))


def hidden_seed(assignment, test, *parts):
    """A hidden test's seed, a whole number below 2**32, for code that takes one (`reference.random_ffn(...,
    seed=)`): drawn from its stream (`hidden_stream`)."""
    return int(hidden_stream(assignment, test, *parts).generate_state(1, np.uint32)[0])


def hidden_rng(assignment, test, *parts):
    """The random generator of a hidden test: `checks.hidden_rng("02_forward_pass", "test_ffn_forward_hidden")`,
    its notebook's assignment id and its own cell's grade id (`hidden_stream`)."""
    return np.random.default_rng(hidden_stream(assignment, test, *parts))


def ok(message="All checks passed."):
    """Print a short success line (to stdout: nbgrader scores 0 for anything on stderr)."""
    print(f"✔ {message}")
