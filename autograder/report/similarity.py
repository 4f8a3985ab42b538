"""Answers that look copied: each student's answer cell against the published solution and every classmate's.

The technique MOSS is built on (Schleimer, Wilkerson and Aiken, "Winnowing", 2003): normalise the code,
fingerprint it by winnowing hashed k-grams, and score the fingerprints two answers share.
Own code, not copydetect: that compares every pair one by one (45,000 per cell here); this indexes fingerprints.

The code compared is what the clean re-run runs for an answer: its cell, then the notebook's other code
cells that bind the names it reads, whole, chosen by the re-run's own resolver; every cell the re-run runs
when the answer may look a name up by a string (code_it_runs). Normalising
never runs it: where Python's syntax tree reads it, normal_form.canonical writes it back without layout,
comments, redundant parentheses, dead code and single-use temporaries; `tokenize` then reads the result.
Imports, docstrings and every `def`/`class` line are dropped; names become one token `N` and literals `0`
(numbers) or `"` (text), so renaming changes nothing, except names after a dot (`np.einsum`) and builtins
(`sum`, `range`): they are what makes two correct answers different algorithms. The learner notebook's
starter code is fingerprinted the same way and taken out of every answer. Code the tree cannot read is
tokenized as written; code `tokenize` rejects is read as plain words, with a note; a cell counts up to
MAX_CHARS characters and MAX_TOKENS tokens.
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

from .. import cells
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
# Answer cells whose code the notebook dictates line by line: honest answers are alike by nature, as short formulas
# are, so they are not compared at all (a note says so). 13's `train` is four calls in the order its text numbers
# them; an independent answer written from the hints scores REPORT_AT against the solution (tests/test_similarity.py).
DICTATED = {"train": "the notebook dictates its loop call by call, so honest answers look alike"}
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


def code_it_runs(code, notebook):
    """An answer cell's code, then the notebook's other code cells the clean re-run runs for it, whole, in notebook
    order.

    The cells are those the re-run's resolver, cells.needed, chooses for the names the answer reads: a cell that
    binds one (a `def`, an assignment, an import, in any statement of it), then whatever binds a name such a cell
    reads, however far. Each is the whole cell, as the re-run runs it: the decoy beside a copy (`_ready = True`
    read, the copy looked up as `globals()['_v']`) brings the copy. An answer, or a cell chosen for it, that may
    read a global by a string (cells.reads_by_string: `globals()[...]`, `getattr(sys.modules[__name__], ...)`,
    `eval`) brings every cell the re-run runs for the notebook's answers: the lookup can reach any of them.
    The course's own cells (other_cells' `course_cells`) take part but are not added: every notebook and the
    solution have them alike.
    `notebook` is other_cells' result, or the sources of the learner's other cells (other_cells is then called
    here, with this answer as the notebook's only one); the code added stops once it passes MAX_CHARS.
    """
    if not isinstance(notebook, OtherCells):
        notebook = other_cells(notebook, answers=[code])
    python, tree = _parsed(code[:MAX_CHARS])
    chosen = cells.needed(notebook.cells, cells.global_reads(python), notebook.cells)
    own = [c for c in chosen if not c.course]
    if cells.reads_by_string(tree, notebook.names) or any(c.by_string(notebook.names) for c in own):
        runs = {c.index for c in chosen} | {c.index for c in notebook.runs}
        own = [c for c in notebook.cells if c.index in runs and not c.course]
    out, size = [code], len(code)
    for cell in own:
        if size >= MAX_CHARS:
            break
        out.append(cell.text)
        size += len(cell.text)
    return code if len(out) == 1 else "\n\n".join(c.rstrip("\n") for c in out) + "\n"


class _Cell:
    """One of the notebook's other code cells, as cells.needed reads a cell: `index`, `stores` and `loads`; its
    `text` is the Python it runs (cells.analysable where the source is not Python as written)."""

    def __init__(self, index, text, tree, course):
        self.index, self.text, self._tree, self.course = index, text, tree, course
        self.stores = cells.bound_names(tree)[0]

    @functools.cached_property
    def loads(self):  # worked out only when needed chooses the cell: most are never read
        return cells.global_reads(self.text)

    def by_string(self, names):
        return cells.reads_by_string(self._tree, names)


@dataclass
class OtherCells:
    """A notebook's code cells other than its answers, read once for all its answer cells (other_cells)."""

    cells: list  # _Cell, the learner's in notebook order, then the course's
    reads: frozenset  # the names the notebook's answer cells read

    @functools.cached_property
    def runs(self):
        """The cells the clean re-run runs for the notebook's answers (course cells among them)."""
        return cells.needed(self.cells, self.reads, self.cells)

    @functools.cached_property
    def names(self):
        """The names the learner's cells among `runs` bind: a string that spells one is a lookup."""
        return frozenset().union(*(c.stores for c in self.runs if not c.course))


def other_cells(free_cells, course_cells=(), answers=()):
    """A notebook's other code cells, for code_it_runs. `free_cells`: the sources of the cells the learner could
    write, in notebook order; `course_cells`: the course's own (locked) cells, which resolve names but are not
    shown; `answers`: the sources of the answer cells the clean re-run runs (those of the course's
    exercises), whose reads choose what it runs beside them.

    A cell counts up to MAX_CHARS characters; one that does not parse is skipped, and cells past 4 * MAX_CHARS
    characters in all are not read, so a notebook of endless free cells costs bounded time too.
    """
    out, budget = [], 4 * MAX_CHARS
    for source, course in [*((s, False) for s in free_cells), *((s, True) for s in course_cells)]:
        budget -= len(source)
        if budget < 0:
            break
        python, tree = _parsed(source[:MAX_CHARS])
        if tree is not None:
            out.append(_Cell(len(out), python, tree, course))
    reads = frozenset().union(*(cells.global_reads(_parsed(a[:MAX_CHARS])[0]) for a in answers))
    return OtherCells(out, reads)


def _parsed(source):
    """(python, its syntax tree or None): the code as written or, when that is not Python, as IPython runs it
    (magics, `!commands`; cells.analysable, as the clean re-run reads a cell). IPython's reader is asked only
    then: it keeps what it read, and most cells need none of it."""
    try:
        return source, ast.parse(source)
    except SyntaxError:
        python = cells.analysable(source)
    except (ValueError, RecursionError, MemoryError):
        return source, None
    try:
        return python, ast.parse(python)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return python, None


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
    not counted, on either side. A cell of DICTATED is not compared: no matches, and a note that says why.
    """
    if grade_id in DICTATED:
        return [], [f"{grade_id}: not compared: {DICTATED[grade_id]}"]
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
