"""Checks for learners' code: one readable message saying what was expected,
what came back, how far apart they are and, where a known mistake explains the
difference, which one.

    check(ffn_forward, (x, W1, b1, W2, b2), expected, mistakes=mistakes.for_exercise("ffn_forward"))

raises AssertionError with that message, so an nbgrader test cell fails (and
scores 0) exactly when the learner's function is wrong. In IPython (a notebook) the
failure shows that message first, then only the learner's own frames, if any
(`message_first`): never the frames of this module.

This module holds what a notebook's test cells call: `check`, `check_cases`, `check_equal`, `assert_close`,
`call`, `failure` and the helpers that build one, `ok`. The rest lives in ffn_helpers/_checks/ and is re-exported
here, so that a test cell reads `checks.` only:

- `compare` (_checks/compare.py), the comparison every check makes;
- the grading protocol, what the grader sets in the checks and reads out of them:
  `diagnose`, `diagnose_cases`, `NO_RESULT` (_checks/diagnosis.py: the mistakes a result confirms);
  `named_mistakes`, `public_text`, `public_message`, `brief` (_checks/verdicts.py: what a failure carries);
  `substitute`, `may_call`, `refusal` (_checks/rule.py: the course functions a learner's code may run);
  `set_offering_seed`, `private_offering`, `hidden_rng`, `hidden_seed`, `hidden_stream` (_checks/hidden.py: the
  hidden tests' inputs).
"""

import re
import traceback
import warnings

import numpy as np

from ._checks.compare import DEFAULT_ATOL, DEFAULT_RTOL, Comparison, compare
from ._checks.diagnosis import NO_RESULT, diagnose, diagnose_cases
from ._checks.hidden import hidden_rng, hidden_seed, hidden_stream, private_offering, set_offering_seed
from ._checks.rule import _Rule, may_call, rebind, refusal, restore, substitute
from ._checks.verdicts import ALIKE, WITHHELD, brief, named_mistakes, public_message, public_text

__all__ = [  # what a notebook, or the grader, reads here: this module's own, and the parts re-exported above
    "ALIKE", "DEFAULT_ATOL", "DEFAULT_RTOL", "NO_RESULT", "WITHHELD", "Comparison", "assert_close", "brief", "call",
    "call_text", "check", "check_cases", "check_equal", "compare", "describe", "diagnose", "diagnose_cases",
    "evidence", "failure", "hidden_rng", "hidden_seed", "hidden_stream", "in_case", "may_call", "message_first",
    "named_mistakes", "ok", "private_offering", "public_message", "public_text", "rebind", "refusal", "restore",
    "set_offering_seed", "substitute", "wrong_result",
]


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


def check_judged(run, cases, mistakes, *, expected, parts=None, mistake_args=None, comparison=None):
    """A test's own judgement of the learner's code on several inputs, diagnosed over all of them: `cases` holds
    (args, judge) pairs, `run(*args)` calls the learner's code (through `call`), and `judge(result)` raises an
    AssertionError at a wrong result. The first failure is the check's; the learner's code still runs on the later
    inputs, as evidence only (`evidence`). A failure that names the part of the result it found wrong, as its
    attribute `part` (one of `parts`, the names of a result's parts in order), is raised with the mistakes
    `mistakes(part)` that give that part of the learner's result on every input (`diagnose_cases`); with `parts`
    None, with the mistakes `mistakes(None)` of the whole result. A failure that names no part of a result of parts
    (the result is not a pair, say) is raised as it is.

    `expected`: the reference's results, one per case, or a function that returns them once the learner's code has
    run on every case; `mistake_args`: the arguments the mistakes take, one tuple per case (each case's args by
    default); `comparison`: `diagnose_cases`'s rtol, atol or same, as a dict or a function of the part.
    """
    results, failed = [], None
    for args, judge in cases:
        if failed is not None:
            results.append(evidence(run, args))
            continue
        got = run(*args)
        results.append(got)
        try:
            judge(got)
        except AssertionError as error:
            failed = error
    if failed is None:
        return
    part = getattr(failed, "part", None) if parts is not None else None
    found = []
    if parts is None or part is not None:
        index = None if part is None else parts.index(part)

        def piece(result):
            if index is None:
                return result
            return result[index] if isinstance(result, tuple | list) and len(result) == len(parts) else NO_RESULT

        options = comparison(part) if callable(comparison) else dict(comparison or {})
        wanted = expected() if callable(expected) else expected
        taken = mistake_args if mistake_args is not None else [args for args, _ in cases]
        found = diagnose_cases([piece(r) for r in results], mistakes(part), taken,
                               expected=[piece(e) for e in wanted], **options)
    named = named_mistakes(failed)
    raise failure(str(failed), [m for m in found if m.key not in named], keeps=failed) from None


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
            raise _refused(rule) from None
        text = (f"{name} is not implemented yet: replace `raise NotImplementedError()` "
                "in its cell with your code, run that cell, then run this test again.")
        raise failure(text, public=text) from None
    except Exception as exc:
        if rule.refused:  # whatever the learner's code made of the refusal
            raise _refused(rule) from None
        # The learner's own words (their exception's message) are theirs to see, whatever the inputs were.
        text = f"{name} raised {type(exc).__name__}: {exc}"
        raise failure(text, public=text) from exc
    if rule.refused:
        raise _refused(rule)
    return result


def _refused(rule):
    """The failure of a check whose call `rule` refused a course function: the first refusal, in the grader's words."""
    text = rule.refused[0]
    return failure(text, public=text)


def assert_close(actual, expected, *, name="result", rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL,
                 mistakes=(), args=()):
    """Raise AssertionError with the full explanation unless `actual` is close to `expected`."""
    result = compare(actual, expected, name=name, rtol=rtol, atol=atol)
    if result.ok:
        return
    raise failure(result.message, diagnose(actual, mistakes, args, expected=expected, rtol=rtol, atol=atol),
                  public=result.public or result.message)


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


def ok(message="All checks passed."):
    """Print a short success line (to stdout: nbgrader scores 0 for anything on stderr)."""
    print(f"✔ {message}")
