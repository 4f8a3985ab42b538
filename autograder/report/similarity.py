"""Answers that look copied: each student's answer cell against the published solution and every classmate's.

The technique MOSS is built on (Schleimer, Wilkerson and Aiken, "Winnowing", 2003): normalise the code,
fingerprint it by winnowing hashed k-grams, and score the fingerprints two answers share.
Own code, not copydetect: that compares every pair one by one (45,000 per cell here); this indexes fingerprints.

The code compared is what an answer runs: its cell, then the functions of the notebook's other code
cells it calls (code_it_runs). Normalising never runs it: where Python's syntax tree reads it,
normal_form.canonical writes it back without layout, comments, redundant parentheses, dead code and
single-use temporaries; `tokenize` then reads the result. Imports, docstrings and every `def`/`class`
line are dropped; names become one token `N` and literals `0` (numbers) or `"` (text), so renaming
changes nothing, except names after a dot (`np.einsum`) and builtins (`sum`, `range`): they are what
makes two correct answers different algorithms. The learner notebook's starter code is fingerprinted
the same way and taken out of every answer. Code the tree cannot read is tokenized as written; code
`tokenize` rejects is read as plain words, with a note; a cell counts up to MAX_CHARS characters and
MAX_TOKENS tokens.
"""

import ast
import builtins
import functools
import hashlib
import io
import keyword
import re
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass

from . import normal_form

K = 5  # tokens per k-gram: shorter grams are shared by any two numpy one-liners
WINDOW = 4  # winnowing window: any run of K + WINDOW - 1 = 8 equal tokens is always caught
MIN_TOKENS = 29  # shorter answers (normal form, temporaries counted: _normalised) are never reported: short
# formulas are alike by nature. 29, not the 30 counted on code as written: the normal form drops redundant parentheses
REPORT_AT = 0.8  # share of the smaller answer's fingerprints found in the other: a renamed copy scores 1.0, the
# course's independent correct answers below 0.8 (tests/test_similarity.py), the solution with one line changed 0.83+
COMMON = 20  # a fingerprint more than this many classmates share is an idiom (MOSS's -m), not a copy
MIN_FINGERPRINTS = round((MIN_TOKENS - K + 1) * 2 / (WINDOW + 1))  # what an answer of MIN_TOKENS has, on average
# (winnowing keeps 2 / (WINDOW + 1) of the k-grams): with idioms left out, a pair's score is never judged on fewer
MAX_CHARS = 60_000  # a cell is read up to here; the course's longest solution cell has about 4,200 characters
MAX_TOKENS = 3_000  # normalised tokens considered per cell; the longest solution has about 600

_BUILTINS = frozenset(dir(builtins))
_DROP = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python >= 3.12 splits an f-string into tokens
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_WORDS = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")


@dataclass(frozen=True)
class Answer:
    """One answer cell, normalised: its code as written, its tokens and fingerprints, and any note."""

    code: str
    tokens: tuple
    fingerprints: frozenset
    note: str = ""  # why it was read as plain words, or cut
    size: int = 0  # how much code the answer has, counted toward MIN_TOKENS (_normalised)

    @property
    def reportable(self):
        return self.size >= MIN_TOKENS


def code_it_runs(code, free_cells):
    """An answer cell's code, then each function or class of `free_cells` it calls, directly or not, once.

    The last definition of a name wins, as when the notebook runs top to bottom; free cells that do not
    parse are skipped, and those past 4 * MAX_CHARS characters in all are not read. A name the answer
    calls is found without running anything: any name it reads. `free_cells` may be free_definitions' result,
    so that a notebook's free cells are read once for all its answer cells.
    """
    defs = free_cells if isinstance(free_cells, dict) else free_definitions(free_cells)
    if not defs:
        return code
    out, queue, seen = [code], [code], set(re.findall(r"(?:def|class)\s+(\w+)", code))  # its own are its own
    while queue and sum(map(len, out)) < MAX_CHARS:
        for name in _WORDS.findall(queue.pop(0)):
            if name in defs and name not in seen:
                seen.add(name)
                out.append(defs[name])
                queue.append(defs[name])
    return "\n\n".join(c.rstrip("\n") for c in out) + "\n"


def free_definitions(free_cells):
    """{name: its source} of the functions and classes the free cells define, the last definition winning."""
    defs, budget = {}, 4 * MAX_CHARS  # a notebook of endless free cells costs bounded time too
    for cell in free_cells:
        budget -= len(cell)
        if budget < 0:
            break
        try:
            tree = ast.parse(cell[:MAX_CHARS])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = cell.splitlines(keepends=True)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defs[node.name] = "".join(lines[node.lineno - 1:node.end_lineno])
    return defs


def _kind(name, after_dot):
    if keyword.iskeyword(name) or after_dot or name in _BUILTINS:
        return name
    return "N"


def _python_tokens(code):
    """(type, text) of every token tokenize reads; raises tokenize.TokenError or SyntaxError on malformed code."""
    out, depth = [], 0
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == _FSTRING_START:  # read as one string token, as Python 3.11 does
            depth += 1
            continue
        if depth:
            depth -= tok.type == _FSTRING_END
            if not depth:
                out.append((tokenize.STRING, '""'))
            continue
        if tok.type not in _DROP and (tok.type != tokenize.ERRORTOKEN or tok.string.strip()):
            out.append((tok.type, tok.string))
    return out


_LEXEME = re.compile("|".join([
    r"(?P<string>(?:[rRbBuUfF]{1,2})?(?:'''(?:\\.|[^\\])*?'''|" + '"""' + r'(?:\\.|[^\\])*?' + '"""'
    + r"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))""",
    r"(?P<number>0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)",
    r"(?P<name>\w+)",
    r"(?P<newline>\n)",
    r"(?P<op>\*\*=|//=|>>=|<<=|\.\.\.|->|:=|\*\*|//|<<|>>|<=|>=|==|!=|[-+*/%@&|^]=|[-+*/%@&|^~<>()\[\]{},:.;=])",
    r"(?P<space> +)",
]))
_LEXEME_TYPES = {"string": tokenize.STRING, "number": tokenize.NUMBER, "name": tokenize.NAME,
                 "newline": tokenize.NEWLINE, "op": tokenize.OP}


def _unparsed_tokens(code):
    """_python_tokens of what ast.unparse writes, read by one regular expression: that code has one statement
    a line, spaces only, no comment and no line continued. None at anything else (then tokenize reads it)."""
    out, at = [], 0
    for m in _LEXEME.finditer(code):
        if m.start() != at:
            return None
        at = m.end()
        if m.lastgroup != "space":
            out.append((_LEXEME_TYPES[m.lastgroup], m.group()))
    return out if at == len(code) else None


def _statements(toks):
    """Split (type, text) tokens into statements (at NEWLINE and ';'); a statement is a list of tokens."""
    stmt, out = [], []
    for t in toks:
        if t[0] == tokenize.NEWLINE or t[1] == ";":
            out.append(stmt)
            stmt = []
        else:
            stmt.append(t)
    return out + [stmt]


def _strip_headers(stmt):
    """A statement without its leading `def ...:`/`class ...:` header (the body may follow on the same line)."""
    words = [text for _, text in stmt[:2]]
    if not (words[:1] in (["def"], ["class"]) or words == ["async", "def"]):
        return stmt
    depth = 0
    for i, (_, text) in enumerate(stmt):
        depth += (text in ("(", "[", "{")) - (text in (")", "]", "}"))
        if text == ":" and depth == 0:
            return stmt[i + 1:]
    return []


def normalise(code):
    """(normalised tokens, note): never runs `code`; malformed code is read as plain words, with a note."""
    tokens, _, note = _normalised(code)
    return tokens, note


def _normalised(code):
    """(the tokens compared, how many count toward MIN_TOKENS, note).

    What counts is the compared tokens and, for each single-use temporary put back, the three of its
    `N = ... ;`: naming a value is code the answer has, though its fingerprints leave it out.
    """
    note = ""
    if len(code) > MAX_CHARS:
        code, note = code[:MAX_CHARS], f"only its first {MAX_CHARS:,} characters were compared"
    try:
        code, inlined = normal_form.canonical(code)
        toks = _unparsed_tokens(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        inlined, toks = 0, None  # not Python `ast` reads (or too deep for it): its tokens as written
    tokens, note = _tokens(code, note, toks)
    return tokens, len(tokens) + 3 * inlined, note


def _tokens(code, note, toks=None):
    try:
        toks = toks if toks is not None else _python_tokens(code)
    except (tokenize.TokenError, SyntaxError) as exc:
        toks = [(tokenize.OP if not w[0].isalnum() and w[0] != "_" else
                 tokenize.NUMBER if w[0].isdigit() else tokenize.NAME, w) for w in _WORDS.findall(code)]
        note = f"not Python that tokenize reads ({exc.__class__.__name__}): compared as plain words"
        return _finish(toks, note)
    kept = []
    for stmt in _statements(toks):
        stmt = _strip_headers(stmt)
        if not stmt or stmt[0][1] in ("import", "from") or (len(stmt) == 1 and stmt[0][0] == tokenize.STRING):
            continue  # empty, an import, or a docstring (a string on its own is one)
        kept += stmt + [(tokenize.OP, ";")]
    return _finish(kept, note)


def _finish(toks, note):
    out, previous = [], ""
    for kind, text in toks:
        if kind == tokenize.NAME:
            out.append(_kind(text, previous == "."))
        elif kind == tokenize.NUMBER:
            out.append("0")
        elif kind == tokenize.STRING:
            out.append('"')
        else:
            out.append(text)
        previous = text
        if len(out) >= MAX_TOKENS:
            note = "; ".join(filter(None, (note, f"only its first {MAX_TOKENS:,} tokens were compared")))
            break
    return tuple(out), note


@functools.lru_cache(maxsize=1 << 16)  # a class shares most of its k-grams: each is hashed about once
def _hash(gram):
    return int.from_bytes(hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest(), "big")


def fingerprints(tokens):
    """The winnowed fingerprints of a token sequence: in each window of WINDOW k-gram hashes, the smallest."""
    hashes = [_hash(tokens[i:i + K]) for i in range(len(tokens) - K + 1)]
    if len(hashes) <= WINDOW:
        return frozenset([min(hashes)] if hashes else [])
    return frozenset(min(hashes[i:i + WINDOW]) for i in range(len(hashes) - WINDOW + 1))


def answer(code, starter=frozenset()):
    """An Answer for one cell's code; `starter` holds the fingerprints of the cell as the learner got it."""
    tokens, size, note = _normalised(code)
    return Answer(code[:MAX_CHARS], tokens, fingerprints(tokens) - starter, note, size)


@dataclass(frozen=True)
class Match:
    """Two answers to one cell that share much code: for a person to read, never a verdict."""

    grade_id: str
    student: str
    other: str | None  # a classmate, or None for the published solution
    score: float  # the share of the smaller answer's fingerprints found in the other
    code: str
    other_code: str


def _score(a, b):
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _classmates(grade_id, cells, copied):
    """Pairs of classmates sharing REPORT_AT of the smaller answer's own fingerprints: an idiom, which more
    than COMMON students have, is evidence neither way (left out of the share, not counted against it). Two
    students who both match the solution ({student: score} in `copied`) are listed as a pair only when they
    share more with each other than one of them does with the solution."""
    index = defaultdict(list)
    for student, a in cells.items():
        if a.reportable:
            for fp in a.fingerprints:
                index[fp].append(student)
    idioms = {fp for fp, students in index.items() if len(students) > COMMON}
    own = {s: len(a.fingerprints - idioms) for s, a in cells.items()}
    shared = Counter()
    for fp, students in index.items():
        if fp not in idioms and len(students) >= 2:
            shared.update((s, t) for i, s in enumerate(students) for t in students[i + 1:])
    out = []
    for (s, t), n in shared.items():
        smaller = min(len(cells[s].fingerprints), len(cells[t].fingerprints))
        score = n / max(min(own[s], own[t]), min(smaller, MIN_FINGERPRINTS))
        if score >= REPORT_AT and score > min(copied.get(s, 0.0), copied.get(t, 0.0)):
            out.append(Match(grade_id, s, t, score, cells[s].code, cells[t].code))
    return out


def compare_cell(grade_id, answers, solution, starter_code=""):
    """Matches for one answer cell: each student against the solution, then pairs of classmates.

    answers: {student: code}; solution: the published solution's code. Two students who both match the
    solution are not listed again as a pair unless they share more with each other. Pairs are found through an
    index from fingerprint to students, never one by one, and a fingerprint more than COMMON students share is
    not counted, on either side.
    """
    starter = fingerprints(normalise(starter_code)[0])
    sol = answer(solution, starter)
    cells = {s: answer(c, starter) for s, c in answers.items()}
    out = []
    if sol.reportable:
        out = [Match(grade_id, s, None, score, a.code, sol.code) for s, a in cells.items()
               if a.reportable and (score := _score(a.fingerprints, sol.fingerprints)) >= REPORT_AT]
    out += _classmates(grade_id, cells, {m.student: m.score for m in out})
    out.sort(key=lambda m: (-m.score, m.other is not None, m.student, m.other or ""))
    notes = [f"{s} ({grade_id}): {a.note}" for s, a in cells.items() if a.note]
    return out, notes
