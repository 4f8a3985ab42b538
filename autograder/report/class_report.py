"""The class report: what the class got wrong, per exercise and per misconception, as one HTML file.

    python -m autograder report ASSIGNMENT [ASSIGNMENT ...] --results RESULTS_DIR --out REPORT.html
        [--csv REPORT.csv] [--anonymise] [--threshold 0.5] [--notebooks NOTEBOOKS_DIR]

It reads the per-student JSON that `python -m autograder grade` wrote (schema 1:
autograder/schema.py, read by results.py) and writes one self-contained HTML page
(templates/class_report.html, which escapes every value): the score distribution, the
share of full, partial and zero credit per exercise (hardest first), the misconceptions
the diagnosis named (with how many of the students who failed the exercise they
explain), the students who need attention, and the answers to look at: answer cells that
match the published solution or a classmate's (similarity.py; the code is read from the
graded notebooks in NOTEBOOKS_DIR). `--csv` writes the per-exercise and
per-misconception table, and those answers in a second file beside it
(REPORT-answers.csv), for the instructor's own tools.

Definitions: a student is *scored* when the grader produced test-cell scores (a
missing or unreadable notebook is not). An exercise's credit is the sum of its test
cells (`test_<f>`, `test_<f>_hidden`); a student *failed* an exercise when that
credit is below its maximum. "missing_b1: 7 of 27" means 7 of the 27 students who
failed the exercise had that misconception in their results' diagnosis (keys the checks attached to
their failures in the clean re-run, never text read from a message).
"""

import argparse
import functools
import hmac
import os
import re
import secrets
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from .. import COURSE_ROOT, private
from ..sanitise import csv_text
from . import similarity
from .results import ReportError, course_answers, read_answers, read_results

EPS = 1e-9
DEFAULT_THRESHOLD = 0.5
DEFAULT_SALT_FILE = COURSE_ROOT / ".report_salt"  # per course; keep it private and out of version control
DEFAULT_NOTEBOOKS = COURSE_ROOT / "autograded"  # where `grade` leaves each student's graded notebook
CSV_COLUMNS = ("assignment", "exercise", "misconception", "max_points", "students_scored", "full", "partial",
               "zero", "failed", "failed_unexplained", "failed_flagged", "mean_credit", "students_named",
               "share_of_failed", "explanation")
ANSWERS_COLUMNS = ("assignment", "exercise", "student", "compared_with", "similarity")  # the -answers.csv beside it
SHOWN_MATCHES = 50  # per answer cell in the HTML (the CSV has them all): a class that copied wholesale stays readable
SHOWN_CHARS = 5_000  # of each answer's code in the HTML: the course's longest solution cell (4,200) fits
SOLUTION = "the published solution"
FIGURE_MISTAKES = 20  # misconceptions in the figure (the tables have them all)


# ---------------------------------------------------------------- statistics


@dataclass(frozen=True)
class MistakeRow:
    key: str
    students: int  # failed students whose failure names it
    failed: int
    explanation: str
    catalogued: bool  # the key is in ffn_helpers.mistakes

    @property
    def share(self):
        return self.students / self.failed if self.failed else 0.0


@dataclass
class ExerciseRow:
    exercise: str
    max_points: float
    scored: int = 0
    full: int = 0
    partial: int = 0
    zero: int = 0
    credit: float = 0.0  # sum of earned / max over scored students
    mistakes: list = field(default_factory=list)  # MistakeRow, most common first
    undiagnosed: int = 0  # failed students whose diagnosis names no misconception (and who were not flagged)
    flagged: int = 0  # failed students who lost the exercise to an integrity flag

    @property
    def failed(self):
        return self.partial + self.zero

    @property
    def mean_credit(self):
        return self.credit / self.scored if self.scored else 0.0


@dataclass(frozen=True)
class Attention:
    student: str
    assignment: str
    status: str  # label
    reason: str
    score: float | None
    max_score: float
    rank: int  # 0 no score, 1 a grading problem, 2 only below the threshold


@dataclass
class AssignmentReport:
    assignment: str
    students: list  # StudentResult
    max_score: float
    scores: list  # totals of the scored students, in student order
    exercises: list  # ExerciseRow, hardest first
    in_course: bool

    @property
    def scored(self):
        return len(self.scores)

    @property
    def mean(self):
        return statistics.fmean(self.scores) if self.scores else None

    @property
    def median(self):
        return statistics.median(self.scores) if self.scores else None

    @property
    def unscored(self):
        return len(self.students) - self.scored

    @property
    def at_full(self):
        return sum(s >= self.max_score - EPS for s in self.scores)

    @property
    def full_share(self):
        return self.at_full / len(self.scores) if self.scores else None

    @property
    def named(self):
        """How many (exercise, misconception) pairs the failures named."""
        return sum(len(e.mistakes) for e in self.exercises)


def _explanation(key, texts):
    """The teacher-readable one-liner for `key`: the catalogue's (one per key), else what the failures said."""
    from ffn_helpers import mistakes

    entries = mistakes.by_key(key)
    if entries:
        return entries[0].explanation, True
    if texts:
        return Counter(texts).most_common(1)[0][0], False
    return "", False


def _exercise_credit(student, layout):
    """{exercise: (earned, max)} for one scored student; test cells the results lack count as 0."""
    credit = {}
    cells = {c.grade_id: c for c in student.cells}
    if layout is not None:
        for grade_id, exercise, points in layout.cells:
            cell = cells.pop(grade_id, None)
            earned, top = credit.get(exercise, (0.0, 0.0))
            credit[exercise] = (earned + (cell.points if cell else 0.0), top + points)
    for cell in cells.values():  # cells the course does not have (another version): taken as they come
        earned, top = credit.get(cell.exercise, (0.0, 0.0))
        credit[cell.exercise] = (earned + cell.points, top + cell.max_points)
    return credit


def _exercise_rows(layout, credits):
    """exercise -> its ExerciseRow with its points: the course's cells first, then any the results add."""
    exercises = {}
    if layout is not None:
        for _, exercise, points in layout.cells:
            row = exercises.setdefault(exercise, ExerciseRow(exercise, 0.0))
            row.max_points += points
    for credit in credits.values():
        for exercise, (_, top) in credit.items():
            if exercise not in exercises:
                exercises[exercise] = ExerciseRow(exercise, top)
            exercises[exercise].max_points = max(exercises[exercise].max_points, top)
    return exercises


def _count(row, student, earned, top, named, texts):
    """Add one student's credit on `row`'s exercise; note the mistakes named (key -> students, explanations)."""
    row.scored += 1
    row.credit += min(max(earned / top, 0.0), 1.0)
    if earned >= top - EPS:
        row.full += 1
        return
    if earned <= EPS:
        row.zero += 1
    else:
        row.partial += 1
    keys, flagged = set(), False
    for cell in student.cells:
        if cell.exercise == row.exercise:
            keys.update(cell.mistakes)
            flagged |= cell.status == "flagged"
            for key, text in cell.explanations:
                texts.setdefault(key, []).append(text)
    for key in keys:
        named.setdefault(key, set()).add(student.student)
    if flagged:
        row.flagged += 1
    elif not keys:
        row.undiagnosed += 1


def assignment_report(assignment, students, layout):
    """The statistics of one assignment."""
    scored = [s for s in students if s.scored]
    credits = {s.student: _exercise_credit(s, layout) for s in scored}
    exercises = _exercise_rows(layout, credits)
    if layout is not None:
        max_score = layout.max_score
    else:
        max_score = max((sum(top for _, top in c.values()) for c in credits.values()), default=0.0)
    named = {e: {} for e in exercises}  # exercise -> key -> students
    texts = {e: {} for e in exercises}  # exercise -> key -> explanations seen
    for s in scored:
        for exercise, row in exercises.items():
            earned, top = credits[s.student].get(exercise, (0.0, row.max_points))
            top = top or row.max_points
            if top > EPS:
                _count(row, s, earned, top, named[exercise], texts[exercise])
    for exercise, row in exercises.items():
        for key, who in named[exercise].items():
            text, catalogued = _explanation(key, texts[exercise].get(key, []))
            row.mistakes.append(MistakeRow(key, len(who), row.failed, text, catalogued))
        row.mistakes.sort(key=lambda m: (-m.students, m.key))
    order = list(exercises)
    rows = sorted((r for r in exercises.values() if r.max_points > EPS),
                  key=lambda r: (r.mean_credit if r.scored else 2.0, -r.zero, order.index(r.exercise)))
    # A student's total is the grade grades.csv gives (hand points in, the late penalty out), as the exports give it;
    # the exercises' credit stays the tests' own
    scores = [s.grade if s.grade is not None else sum(earned for earned, _ in credits[s.student].values())
              for s in scored]
    return AssignmentReport(assignment, students, max_score, scores, rows, layout is not None)


def needing_attention(report, threshold):
    """The students of one assignment who need a look, with the reason.

    rank 0: no score at all; 1: graded with a problem (a flag, a timeout, ...); 2: only below the threshold.
    """
    out = []
    totals = dict(zip((s.student for s in report.students if s.scored), report.scores, strict=True))
    for s in report.students:
        score = totals.get(s.student)
        reasons = [s.reason] if s.reason else []
        reasons += [f.describe() if f.costs_points else f"for review (no points lost): {f.describe()}"
                    for f in s.flags]
        below = score is not None and report.max_score > EPS and score / report.max_score < threshold - EPS
        if below:
            reasons.append(f"score below {threshold:.0%} of the points")
        if s.status == "graded" and not s.flags and not below:
            continue
        rank = 0 if not s.scored else 1 if (s.status != "graded" or s.flags) else 2
        out.append(Attention(s.student, report.assignment, s.status_label, "; ".join(reasons) or s.status_label,
                             score, report.max_score, rank))
    return out


@dataclass
class LookAt:
    """An assignment's answers to look at: matches above similarity.REPORT_AT, for a person to read."""

    assignment: str
    matches: list  # similarity.Match, in course order of the answer cells, highest score first
    notes: list  # answers not compared, or compared as plain words, and why
    compared: int  # students whose notebook was read
    where: str  # the folder the code was read from

    @property
    def by_cell(self):
        """{grade_id: its matches}, in the order of `matches`."""
        cells = {}
        for m in self.matches:
            cells.setdefault(m.grade_id, []).append(m)
        return cells


def answers_to_look_at(rep, notebooks_dir):
    """Each scored student's answer cells against the published solution and each other (see similarity.py)."""
    solutions, starters = course_answers(rep.assignment)
    folder = Path(notebooks_dir)
    scored = [s.student for s in rep.students if s.scored]
    if not folder.is_dir():
        return LookAt(rep.assignment, [], [f"no folder {folder}: give --notebooks, the folder of graded notebooks "
                                           "(<student>/<assignment>/<notebook>.ipynb)"], 0, str(folder))
    answers, notes = read_answers(folder, rep.assignment, scored, set(solutions))
    matches = []
    for grade_id, solution in solutions.items():
        found, cell_notes = similarity.compare_cell(grade_id, {s: a[grade_id] for s, a in answers.items()
                                                               if grade_id in a}, solution, starters.get(grade_id, ""))
        matches += found
        notes += cell_notes
    return LookAt(rep.assignment, matches, notes, len(answers), str(folder))


# ---------------------------------------------------------------- pseudonyms


def load_salt(salt=None, salt_file=None):
    """The secret that keys the pseudonyms: given, or read from (and on first use written to) a salt file."""
    if salt is not None:
        if not salt:
            raise ReportError("--salt should be a non-empty secret text, got an empty one")
        return salt
    path = Path(salt_file or DEFAULT_SALT_FILE)
    if path.is_file():
        text = path.read_text(encoding="utf-8").strip()
        if not text:
            raise ReportError(f"the salt file {path} is empty: delete it to make a new one, or pass --salt")
        return text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ReportError(f"could not create the salt file {path} ({exc.strerror}); "
                          "pass --salt or --salt-file") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32) + "\n")
    return path.read_text(encoding="utf-8").strip()


def pseudonym(student, salt):
    """A stable pseudonym: the same id and salt always give the same one; without the salt it cannot be reversed."""
    digest = hmac.new(salt.encode("utf-8"), str(student).encode("utf-8"), "sha256").hexdigest()
    return f"S-{digest[:10]}"


def pseudonyms(students, salt):
    names = {s: pseudonym(s, salt) for s in students}
    clashes = [p for p, n in Counter(names.values()).items() if n > 1]
    if clashes:  # 40 bits: not expected below millions of students
        raise ReportError(f"two student ids got the same pseudonym {clashes[0]}; run again with another --salt")
    return names


def _scrubber(names):
    """A function that replaces every student id in a text with its pseudonym."""
    if not names:
        return lambda text: text
    ids = sorted(names, key=len, reverse=True)
    pattern = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, ids)) + r")(?![A-Za-z0-9])")
    return lambda text: pattern.sub(lambda m: names[m.group(1)], text)


# ---------------------------------------------------------------- CSV


def csv_rows(reports):
    """The per-exercise rows (misconception empty), each followed by its per-misconception rows."""
    rows = []
    for rep in reports:
        for ex in rep.exercises:
            base = dict(assignment=rep.assignment, exercise=ex.exercise, max_points=_num(ex.max_points),
                        students_scored=ex.scored, full=ex.full, partial=ex.partial, zero=ex.zero, failed=ex.failed,
                        failed_unexplained=ex.undiagnosed, failed_flagged=ex.flagged,
                        mean_credit=f"{ex.mean_credit:.4f}")
            rows.append(base | dict(misconception="", students_named="", share_of_failed="", explanation=""))
            for m in ex.mistakes:
                rows.append(base | dict(misconception=m.key, students_named=m.students,
                                        share_of_failed=f"{m.share:.4f}", explanation=m.explanation))
    return rows


def answers_rows(looks):
    """One row per answer to look at: the student, whom or what it matches, and how closely."""
    return [dict(assignment=look.assignment, exercise=m.grade_id, student=m.student,
                 compared_with=m.other or SOLUTION, similarity=f"{m.score:.4f}")
            for look in looks for m in look.matches]


def answers_path(path):
    """Where the answers to look at go, beside the table: report.csv -> report-answers.csv."""
    path = Path(path)
    return path.with_name(f"{path.stem}-answers{path.suffix or '.csv'}")


def write_csv(reports, path, looks=()):
    """Two tables, two files: the per-exercise and per-misconception table at `path`, the answers beside it."""
    private.write_text(path, csv_text(csv_rows(reports), CSV_COLUMNS))  # student data: the instructor's only
    private.write_text(answers_path(path), csv_text(answers_rows(looks), ANSWERS_COLUMNS))


# ---------------------------------------------------------------- HTML


def _num(v):
    return str(int(v)) if abs(v - round(v)) < EPS else f"{v:.2f}".rstrip("0").rstrip(".")


def _pct(v):
    return "–" if v is None else f"{v:.0%}"


def _figures(rep):
    """The assignment's figures (figures.Image) by name, None where it has nothing to draw."""
    from . import figures

    aid, out = rep.assignment, dict.fromkeys(("scores", "exercises", "mistakes"))
    if not rep.scores:
        return out
    if rep.max_score > EPS:
        out["scores"] = figures.score_histogram(aid, rep.scores, rep.max_score, rep.mean, rep.median, rep.full_share)
    if rep.exercises:
        out["exercises"] = figures.exercise_bars(aid, [(e.exercise, e.full, e.partial, e.zero) for e in rep.exercises])
    ranked = sorted(((e.exercise, m) for e in rep.exercises for m in e.mistakes), key=lambda em: -em[1].students)
    if ranked:
        out["mistakes"] = figures.mistake_bars(aid, [(f"{ex}: {m.key}", m.students)
                                                     for ex, m in ranked[:FIGURE_MISTAKES]])
    return out


@functools.cache
def _template():
    from ..pages import environment

    pages = environment(Path(__file__).parent / "templates")
    pages.filters.update(num=_num, pct=_pct)
    pages.globals.update(SHOWN_CHARS=SHOWN_CHARS, SHOWN_MATCHES=SHOWN_MATCHES, SOLUTION=SOLUTION,
                         FIGURE_MISTAKES=FIGURE_MISTAKES, REPORT_AT=similarity.REPORT_AT,
                         MIN_TOKENS=similarity.MIN_TOKENS)
    return pages.get_template("class_report.html")


def render_html(reports, attention, notes, *, threshold, source, anonymised, looks=()):
    """The whole report as one HTML page (figures embedded)."""
    return _template().render(
        names=", ".join(r.assignment for r in reports), made=f"{datetime.now():%Y-%m-%d %H:%M}", source=source,
        anonymised=anonymised, reports=reports, figures=[_figures(r) for r in reports], attention=attention,
        threshold=threshold, looks=looks, notes=notes)


# ---------------------------------------------------------------- command line


@dataclass
class Built:
    html: str
    reports: list
    attention: list
    notes: list
    looks: list = field(default_factory=list)  # LookAt per course assignment


def build(assignments, results, *, threshold=DEFAULT_THRESHOLD, anonymise=False, salt=None, salt_file=None,
          notebooks=DEFAULT_NOTEBOOKS):
    """Read the results and build the report (nothing written)."""
    if not 0.0 <= threshold <= 1.0:
        raise ReportError(f"--threshold should be a share of the points between 0 and 1, got {threshold}")
    if not assignments:
        raise ReportError("name at least one assignment, e.g. 02_forward_pass")
    data = read_results(results, assignments)
    reports = [assignment_report(aid, data.students[aid], data.layouts[aid]) for aid in data.students]
    notes = list(data.notes)
    for rep in reports:
        if not rep.students:
            notes.append(f"no results for {rep.assignment}")
    attention = [a for rep in reports for a in needing_attention(rep, threshold)]
    attention.sort(key=lambda a: (a.rank, a.assignment, -1 if a.score is None else a.score / max(a.max_score, EPS),
                                  a.student))
    looks = [answers_to_look_at(rep, notebooks) for rep in reports if rep.in_course and rep.scored]
    if anonymise:
        ids = {s.student for rep in reports for s in rep.students}
        names = pseudonyms(ids, load_salt(salt, salt_file))
        scrub = _scrubber(names)
        attention = [Attention(names[a.student], a.assignment, a.status, scrub(a.reason), a.score, a.max_score,
                               a.rank) for a in attention]
        notes = [scrub(n) for n in notes]
        looks = [LookAt(k.assignment, [similarity.Match(m.grade_id, names[m.student], m.other and names[m.other],
                                                        m.score, scrub(m.code), scrub(m.other_code))
                                       for m in k.matches], [scrub(n) for n in k.notes], k.compared, k.where)
                 for k in looks]
    else:
        names = {s.student: s.name for rep in reports for s in rep.students if s.name}
        attention = [replace(a, student=f"{a.student} ({names[a.student]})") if a.student in names else a
                     for a in attention]
    source = ", ".join(map(str, results if isinstance(results, list | tuple) else [results]))
    page = render_html(reports, attention, notes, threshold=threshold, source=source, anonymised=anonymise,
                       looks=looks)
    return Built(page, reports, attention, notes, looks)


def _threshold(text):
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share of the points such as 0.5 or 50%, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share of the points between 0 and 1 (or 0% to 100%), "
                                         f"got {text!r}")
    return value


def add_arguments(parser):
    parser.add_argument("assignments", nargs="+", metavar="ASSIGNMENT", help="assignment ids, e.g. 02_forward_pass")
    parser.add_argument("--results", required=True, action="append", metavar="RESULTS_DIR",
                        help="the folder `grade --out` wrote (<student>.json, or <assignment>/<student>.json); "
                             "may be given once per assignment")
    parser.add_argument("--out", required=True, metavar="REPORT.html", help="the HTML report to write")
    parser.add_argument("--csv", metavar="REPORT.csv", help="also write the per-exercise and per-misconception table, "
                                                            "and the answers to look at beside it (REPORT-answers.csv)")
    parser.add_argument("--notebooks", type=Path, default=DEFAULT_NOTEBOOKS, metavar="NOTEBOOKS_DIR",
                        help="the graded notebooks, <student>/<assignment>/<notebook>.ipynb, whose answer cells "
                             "'answers to look at' compares (default: the course's autograded/ folder)")
    parser.add_argument("--threshold", type=_threshold, default=DEFAULT_THRESHOLD, metavar="SHARE",
                        help="list scored students below this share of the points (default 0.5)")
    parser.add_argument("--anonymise", "--anonymize", action="store_true",
                        help="show stable pseudonyms instead of student ids (keyed by the course's salt)")
    salt = parser.add_mutually_exclusive_group()
    salt.add_argument("--salt", help="the secret that keys the pseudonyms (default: read from --salt-file)")
    salt.add_argument("--salt-file", type=Path,
                      help="file holding the secret; made on first use (default: autograder/course/.report_salt)")


def add_parser(subparsers):
    """Register `report` on the `python -m autograder` command line."""
    parser = subparsers.add_parser("report", help="the class report: what the class got wrong, as one HTML file",
                                   description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return parser


def run(args):
    """Build and write the report for parsed arguments; 0 on success, 2 (with a message on stderr) on bad input."""
    try:
        built = build(args.assignments, args.results, threshold=args.threshold, anonymise=args.anonymise,
                      salt=args.salt, salt_file=args.salt_file, notebooks=args.notebooks)
        private.write_text(args.out, built.html)  # student data: the instructor's only
        if args.csv:
            write_csv(built.reports, args.csv, built.looks)
    except ReportError as exc:
        print(f"report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"report: error: could not write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    students = sum(len(r.students) for r in built.reports)
    looks = sum(len(k.matches) for k in built.looks)
    print(f"wrote {args.out}: {students} students, {len(built.attention)} needing attention, "
          f"{looks} answers to look at"
          + (f"; tables in {args.csv} and {answers_path(args.csv)}" if args.csv else ""))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder report", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
