"""Which catalogued mistakes (ffn_helpers.mistakes) a learner's result confirms: `diagnose` on one input,
`diagnose_cases` on every case of a test. A check names a mistake only where these inputs single it out; the grader
reads the keys a failure carries (verdicts.named_mistakes), never its text.
"""

import warnings

import numpy as np

from .compare import DEFAULT_ATOL, DEFAULT_RTOL, compare


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
