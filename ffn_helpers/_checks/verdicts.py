"""What a failed check carries for the grader, and what the grader reads of it.

`checks.failure` attaches to its AssertionError the catalogue keys of the mistakes it names (`mistake_keys`) and the
message without the test's data (`public_text`). The grader reads those attributes only, never the text: the
diagnosis from `named_mistakes`, what a student reads of a failed hidden test of a private offering from
`public_message`, and the `check` command's one line per failed test from `brief`.
"""

import re

ALIKE = "Each of these mistakes gives exactly this result here (these inputs cannot tell them apart):"


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
