"""Hostile submissions (issue 10): one batch of every attack of tests/adversarial/hostile.py with honest students.

Two batches of 02_forward_pass through `python -m autograder grade` (in-process, `--jobs 2`, a 10 s cell
timeout): the honest students alone (they include each attack's honest twin), then the same honest students
together with every hostile submission, in a course of its own. Whatever an attacker does:

- the batch completes and every student has a result (JSON and HTML);
- honest students score exactly as in the batch without attackers;
- an attacker earns, exercise by exercise, no more than its honest twin;
- files outside the course (each attack's canaries: a root-only 0600 file in a 0700 folder, a file to be
  overwritten) keep their content and mode, and no attack's code runs outside the sandbox;
- the course gradebook passes `PRAGMA integrity_check`;
- nothing an attacker receives (its feedback page, its JSON, its folder in the course's autograded/: the
  notebook there as generate_feedback hands it out, every other file as it is) holds a hidden-test line,
  another student's data (a private marker in each honest notebook) or a canary's secret, or more than
  RECEIVED_BOUND bytes;
- no feedback page holds script-capable markup (parsed, not grepped);
- the grading processes stay under GRADER_RSS_BOUND of memory;
- grading each attacker takes less than 2 x the cell timeout + 60 s.
"""

import copy
import html
import html.parser
import json
import os
import re
import resource
import sqlite3
import stat
import sys
import threading
import time
import traceback
from pathlib import Path

import adversarial
import nbformat
import nbtools
import page_audit
import pytest
from adversarial import ASSIGNMENT, _cell, grading
from adversarial.hostile import HOSTILE, LATE_VICTIM, TWIN_STUDENTS, TWINS, HostileContext

from autograder.grading import worker
from autograder.grading.gate_in import sandbox
from autograder.grading.gate_out import feedback

pytestmark = [pytest.mark.grading, pytest.mark.sandbox, pytest.mark.xdist_group("grader-hostile")]

MiB, GiB = 1024**2, 1024**3
CELL_TIMEOUT = 10.0
WALL_BOUND = 2 * CELL_TIMEOUT + 60  # seconds per attacker (issue 10)
# The grader's own per-student limit (--timeout): above WALL_BOUND, so that the bound is what is tested, and low
# enough that a grader which never ends a cell costs this module minutes, not the default 900 s per attacker.
STUDENT_TIMEOUT = WALL_BOUND + 40
# Peak resident memory of each grading process (the parent, which is this test process, and each worker).
# Measured with honest students: a worker peaks at about 0.25 GB (nbgrader, numpy, one notebook), this process
# at about 0.15 GB. A student may make a trusted process hold its capped outputs (1 MB per cell) and at most
# one RPC message (256 MiB) at a time; 1 GiB leaves room for that, and none for a payload the grader
# multiplies (the attacks of class 6 aim at 1.5 GB and more).
GRADER_RSS_BOUND = 1 * GiB
# What an attacker may receive (feedback page, JSON, autograded folder), in total. An honest student gets about
# 1.4 MB; outputs are capped at 1 MB per cell, and the notebook has about 30 code cells.
RECEIVED_BOUND = 32 * MiB
SPARSE_SIZE = 1 * GiB  # the sparse file a link points to: a bounded stand-in for /dev/zero
ATTACKERS = [h.student for h in HOSTILE]
OFFERING_SEED = grading.OFFERING_SEED  # the batch's course is a private offering: its seed lives in a file outside it
RELEASE_DATA = "release-data.txt"  # a file the assignment hands out: the one file a sandbox's folder must hold
# A secret in the environment `grade` runs with (an instructor's token): no sandbox may see it in any environ.
GRADERS_SECRET = ("FFN_TEST_INSTRUCTOR_TOKEN", f"instructor-token-{os.urandom(8).hex()}")


class _PeakMemory:
    """Samples the peak resident set (VmHWM) of this process's grading workers while a batch runs."""

    def __init__(self, interval=0.2):
        self.interval, self.peaks, self.uids, self._stop = interval, {}, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.thread.join()

    def _workers(self):
        """Each worker, a child of this process, and each judge, a forked child of a worker (judge.py)."""
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                status = Path(f"/proc/{entry}/status").read_text()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            parent = re.search(r"^PPid:\s*(\d+)$", status, re.M)
            if parent and b"autograder.grading.worker" in cmdline:
                found[entry] = (parent.group(1), status)
        me = str(os.getpid())
        for pid, (parent, status) in found.items():
            if parent == me or parent in found and found[parent][0] == me:
                yield int(pid), status

    def _run(self):
        while not self._stop.wait(self.interval):
            for pid, status in self._workers():
                m = re.search(r"^VmHWM:\s*(\d+) kB", status, re.M)
                if m:
                    self.peaks[pid] = max(self.peaks.get(pid, 0), int(m.group(1)) * 1024)
                uid = re.search(r"^Uid:\s*(\d+)\s+(\d+)", status, re.M)
                if uid:
                    self.uids.setdefault(pid, set()).update(map(int, uid.groups()))


def _hidden_lines():
    lines = nbtools.secret_lines(ASSIGNMENT)
    assert lines, "the assignment has hidden tests"
    return lines


def _results(folder):
    out = {}
    for path in Path(folder).glob("*.json"):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and "student" in data:
            out[data["student"]] = data
    return out


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    course_root = grading.make_course(base / "course", ASSIGNMENT)
    grading.as_released_with_data(course_root, ASSIGNMENT, RELEASE_DATA, "handed out with the assignment\n")
    seed_file = grading.private_offering(course_root, base / "private", OFFERING_SEED)
    baseline_root = grading.copy_course(course_root, base / "baseline-course")
    solution = nbtools.cells_by_id(nbtools.solution(ASSIGNMENT))
    ctx = HostileContext(learner=nbtools.learner(ASSIGNMENT), course=str(course_root), results=str(base / "results"),
                         answers={gid: solution[gid].source for gid in adversarial.EXERCISES}, port=0,
                         submitted=str(base / "submitted"), canary_root=str(base / "canaries"),
                         evidence=str(base / "evidence"), sparse=str(base / "big" / "sparse.bin"), seed_file=seed_file)
    Path(ctx.evidence).mkdir()
    Path(ctx.sparse).parent.mkdir()
    with open(ctx.sparse, "wb") as f:
        f.truncate(SPARSE_SIZE)
    wrong = __import__(f"submissions.{ASSIGNMENT}", fromlist=["WRONG"]).WRONG
    honest = adversarial.honest_students(ctx, wrong)
    for kind, student in TWIN_STUDENTS.items():
        honest.setdefault(student, ctx.honest(**TWINS[kind]))
    honest[LATE_VICTIM] = copy.deepcopy(honest["honest-unfinished"])
    markers = {}
    for student, nb in honest.items():
        markers[student] = f"PRIVATE-NOTE-of-{student}-{os.urandom(8).hex()}"
        answer = _cell(nb, "ffn_forward")
        answer.source = f"# {markers[student]}\n" + answer.source
    attacks = {h.student: h.build(ctx, h.student) for h in HOSTILE}
    canaries = {student: (canary, canary.state()) for student, canary in ctx.canaries.items()}
    grading.write_submissions(base / "honest", ASSIGNMENT, honest)
    grading.write_submissions(base / "submitted", ASSIGNMENT, {**honest, **attacks})

    baseline = grading.run_batch(ASSIGNMENT, base / "honest", base / "baseline-results", baseline_root, jobs=2,
                                 cell_timeout=CELL_TIMEOUT, timeout=STUDENT_TIMEOUT)
    error, started = None, time.monotonic()
    os.environ[GRADERS_SECRET[0]] = GRADERS_SECRET[1]
    with _PeakMemory() as memory:
        try:
            grading.run_batch(ASSIGNMENT, base / "submitted", base / "results", course_root, jobs=2,  # side by side
                              cell_timeout=CELL_TIMEOUT, timeout=STUDENT_TIMEOUT)
        except BaseException as exc:  # noqa: B036 (a batch that dies is a finding, SystemExit included)
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = "".join(traceback.format_exception(exc))[-4000:]
        finally:
            del os.environ[GRADERS_SECRET[0]]
    seconds = time.monotonic() - started
    print(f"\nhostile batch: {seconds:.0f} s; worker peaks (MiB): "
          f"{sorted(round(v / MiB) for v in memory.peaks.values())}; this process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB", file=sys.stderr)
    yield {"base": base, "course": course_root, "ctx": ctx, "honest": honest, "markers": markers,
           "canaries": canaries, "baseline": baseline, "graded": _results(base / "results"), "error": error,
           "worker_peaks": dict(memory.peaks), "worker_uids": dict(memory.uids), "seconds": seconds,
           "self_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "children_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
    for top, _, files in os.walk(base):  # the copies of the 1 GiB file and the like: do not keep them around
        for name in files:
            path = os.path.join(top, name)
            if not os.path.islink(path) and os.path.isfile(path) and os.path.getsize(path) > RECEIVED_BOUND:
                os.remove(path)


def _summary(result):
    keys = ("status", "score", "seconds", "flags")
    return json.dumps({k: result.get(k) for k in keys}, indent=1, default=str)[:2000]


# --- the batch and the honest students -------------------------------------------------------------------
def test_batch_completes_and_every_student_has_a_result(batch):
    assert batch["error"] is None, f"the batch did not complete:\n{batch['error']}"
    students = set(batch["honest"]) | set(ATTACKERS)
    missing = sorted(students - set(batch["graded"]))
    assert not missing, f"no result for {missing}"
    for student in students:
        assert (batch["base"] / "results" / f"{student}.html").stat().st_size > 0, student


def test_honest_students_score_as_without_attackers(batch):
    changed = {}
    for student in batch["honest"]:
        alone, together = batch["baseline"][student], batch["graded"].get(student)
        if together is None:
            changed[student] = "not graded"
            continue
        before = [(c["grade_id"], c["points"]) for c in alone["cells"]]
        after = [(c["grade_id"], c["points"]) for c in together["cells"]]
        if before != after or alone["status"] != together["status"] or alone["flags"] != together["flags"]:
            changed[student] = {"alone": (alone["status"], alone["score"]),
                                "with attackers": (together["status"], together["score"])}
    assert not changed, f"honest students graded differently beside the attackers: {changed}"


# --- each attacker ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("attack", HOSTILE, ids=ATTACKERS)
def test_attacker_earns_no_more_than_its_twin(batch, attack):
    result = batch["graded"].get(attack.student)
    assert result is not None, f"{attack.student} was not graded"
    twin = batch["baseline"][TWIN_STUDENTS[attack.twin]]
    mine, theirs = grading.points_by_exercise(result), grading.points_by_exercise(twin)
    over = {e: (mine[e][0], theirs[e][0]) for e in theirs if mine.get(e, (0.0,))[0] > theirs[e][0]}
    assert not over, (f"{attack.student} ({attack.what}) earned more than its honest twin {attack.twin} "
                      f"(exercise: (attacker, twin)): {over}\n{_summary(result)}")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _readable(raw, name):
    """Every form a reader of this file could see: its text, unescaped, and the strings inside its JSON."""
    text = raw.decode("utf-8", errors="replace")
    texts = [text, html.unescape(text)]
    if name.endswith((".json", ".ipynb")):
        try:
            texts.append("\n".join(_strings(json.loads(text))))
        except ValueError:
            pass
    return "\n".join(texts)


def _as_fed_back(raw):
    """The autograded notebook as the student gets it back from nbgrader's generate_feedback, which the course
    configures with HideHiddenTests (test cells lose their hidden region): learner outputs stay as they are."""
    try:
        nb = nbformat.reads(raw.decode("utf-8", errors="replace"), as_version=4)
    except Exception:  # not a notebook any more: whatever it holds is what the student gets
        return _readable(raw, "notebook.ipynb")
    for cell in nb.cells:
        feedback.hide_hidden_tests(cell)
    return "\n".join(_strings(json.loads(nbformat.writes(nb))))


def _received(batch, student):
    """(text of everything the student gets back, total bytes, oddities): its page, its JSON, its folder."""
    files = [batch["base"] / "results" / f"{student}.html", batch["base"] / "results" / f"{student}.json"]
    folder = batch["course"] / "autograded" / student / ASSIGNMENT
    oddities = []
    for top, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(top) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                files.append(path)
            elif not stat.S_ISDIR(mode):
                oddities.append(f"{path.relative_to(folder)} is not a regular file")
    texts, total = [], 0
    for path in files:
        if not path.is_file():
            continue
        size = path.stat().st_size
        total += size
        if size > RECEIVED_BOUND:
            oddities.append(f"{path.name} is {size:,} bytes")
            continue
        raw = path.read_bytes()
        texts.append(_as_fed_back(raw) if path == folder / f"{ASSIGNMENT}.ipynb" else _readable(raw, path.name))
    return "\n".join(texts), total, oddities


@pytest.mark.parametrize("attack", HOSTILE, ids=ATTACKERS)
def test_nothing_secret_reaches_the_attacker(batch, attack):
    assert attack.student in batch["graded"], f"{attack.student} was not graded"
    text, total, oddities = _received(batch, attack.student)
    leaked = [line for line in _hidden_lines() if line in text]
    others = [s for s, marker in batch["markers"].items() if marker in text]
    secrets = [s for s, (canary, _) in batch["canaries"].items() if canary.secret_text in text]
    assert not leaked, f"{attack.student} ({attack.what}) receives hidden test lines: {leaked[:3]}"
    assert not others, f"{attack.student} ({attack.what}) receives the private data of {others}"
    assert not secrets, f"{attack.student} ({attack.what}) receives the root-only secret of canaries {secrets}"
    assert total <= RECEIVED_BOUND and not oddities, \
        f"{attack.student} ({attack.what}) receives {total:,} bytes: {oddities}"


_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "background", "poster", "srcset",
                   "content", "ping", "cite", "lowsrc", "dynsrc", "codebase"}
_SCRIPT_TAGS = {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "form", "svg",
                "portal", "link", "noscript", "template"}
_IMAGE = re.compile(r"data:image/(png|svg\+xml);base64,[A-Za-z0-9+/=\s]*\Z")


class _ScriptFinder(html.parser.HTMLParser):
    """What in a page could run script: tags, on* attributes, javascript: URLs, meta refresh, odd data: URLs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self.math = page_audit.MathDepth()  # the course's formulas, as inert MathML

    def handle_starttag(self, tag, attrs):
        self.found += self.math.start(tag, attrs)
        if tag in _SCRIPT_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            squeezed = re.sub(r"[\x00-\x20]", "", value).lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if tag == "meta" and name == "http-equiv" and squeezed == "refresh":
                self.found.append("<meta http-equiv=refresh>")
            if name == "style" and ("expression(" in squeezed or "javascript:" in squeezed or "url(" in squeezed):
                self.found.append(f"<{tag} style={value[:60]!r}>")
            if name in _URL_ATTRIBUTES:
                if re.search(r"(java|vb)script:", squeezed):
                    self.found.append(f"<{tag} {name}={value[:60]!r}>")
                elif squeezed.startswith("data:") and not _IMAGE.match(value):
                    self.found.append(f"<{tag} {name}={value[:60]!r}>")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.math.end(tag)

    def handle_endtag(self, tag):
        self.math.end(tag)


@pytest.mark.parametrize("student", ATTACKERS + ["honest-correct"])
def test_feedback_page_holds_no_script(batch, student):
    page = batch["base"] / "results" / f"{student}.html"
    assert page.is_file(), f"{student} has no feedback page"
    finder = _ScriptFinder()
    finder.feed(page.read_text(encoding="utf-8", errors="replace"))
    finder.close()
    assert not finder.found, f"{student}'s feedback page can run script: {sorted(set(finder.found))[:10]}"


def _walk_reports(batch):
    """The walking attacker's report, from each run's verdict on its ffn_forward test: {run: message}."""
    result = batch["graded"].get("hostile-4-walk-files")
    assert result is not None, "hostile-4-walk-files was not graded"
    cell = next(c for c in result["cells"] if c["grade_id"] == "test_ffn_forward")
    reports = {run: cell[run]["message"] for run in ("notebook_run", "clean_run")}
    for run, message in reports.items():
        assert "WALK-REPORT" in message and "\nDRAW " in message, f"no walk report from the {run}: {message[:2000]}"
    return reports


def _outside_the_release(report):
    """The files a sandbox could read that are neither public (the walk leaves out the system's and Python's
    folders) nor the assignment's release, nor the sandbox's own (its /tmp, the kernel's runtime folder)."""
    lines = report.splitlines()
    cwd = next(line[4:] for line in lines if line.startswith("CWD "))
    env = dict(line[4:].split("=", 1) for line in lines if line.startswith("ENV ") and "=" in line)
    own = ["/tmp/"]
    ipython = env.get("IPYTHONDIR", "")
    if ipython.startswith("/") and not ipython.startswith("/tmp/"):
        own.append(os.path.dirname(ipython) + "/")  # the kernel's runtime folder: its profile, sockets, font cache
    files = [line[5:] for line in lines if line.startswith("FILE ")]
    in_cwd = sorted(os.path.relpath(f, cwd) for f in files if f.startswith(cwd.rstrip("/") + "/"))
    others = [f for f in files if not f.startswith(cwd.rstrip("/") + "/") and not f.startswith(tuple(own))]
    return in_cwd, others


def test_a_sandbox_receives_only_what_the_learner_received(batch):
    """In the notebook run and in the clean re-run, a free cell that walks the file system finds the release's
    files in its folder, and nothing else outside Python's packages and the system's folders."""
    for run, report in _walk_reports(batch).items():
        in_cwd, others = _outside_the_release(report)
        assert in_cwd == [RELEASE_DATA], f"the {run}'s working folder holds {in_cwd}, expected [{RELEASE_DATA!r}]"
        assert not others, f"the {run} can read files outside the learner's release: {others[:20]}"


def test_a_sandbox_writes_only_to_memory_of_a_bounded_size(batch):
    """Every folder the notebook run or the clean re-run may write in is on a file system no larger than the
    sandbox's tmpfs size: its /tmp, its /dev/shm. None is a folder of the machine, whose disk many files each
    under the file-size limit could fill."""
    bound = sandbox.Limits().tmp_size
    for run, report in _walk_reports(batch).items():
        writable = [line.split()[1:] for line in report.splitlines() if line.startswith("WRITABLE ")]
        assert any(folder == "/tmp" for folder, _ in writable), f"the walk of the {run} found no writable /tmp"
        unbounded = [(folder, size) for folder, size in writable if int(size) > bound]
        assert not unbounded, f"the {run} can write to file systems larger than {bound} bytes: {unbounded[:10]}"


def test_no_sandbox_sees_the_environment_grade_runs_with(batch):
    """Neither the learner's process nor any other it can see (bwrap's own, pid 1) holds what `grade` had in its
    environment: the walk read pid 1's environ, and the instructor's token is in no report."""
    for run, report in _walk_reports(batch).items():
        assert re.search(r"^PROC 1 environ ", report, re.MULTILINE), f"the {run} could not read pid 1's environ"
        assert GRADERS_SECRET[1] not in report, f"the {run} saw the environment `grade` runs with"
        assert "FFN_TEST_INSTRUCTOR_TOKEN" not in report, f"the {run} saw the name of grade's secret"


def test_no_sandbox_can_read_the_offerings_seed(batch):
    from ffn_helpers import checks

    published = checks.hidden_seed("02_forward_pass", "test_ffn_forward_hidden")  # no seed set in this process
    for run, report in _walk_reports(batch).items():
        assert str(OFFERING_SEED) not in report, f"the {run} read the offering's seed"
        assert "SEED-FILE unreadable" in report, f"the {run} could open the seed file {batch['ctx'].seed_file}"
        assert f"\nDRAW False {published}" in report, \
            f"the {run} holds an offering's seed, or draws other than the published hidden inputs: the seed is in reach"
    # the honest students' hidden tests did run with the offering's seed: they still pass them
    assert batch["graded"]["honest-correct"]["score"] == batch["graded"]["honest-correct"]["max_score"] > 0


@pytest.mark.parametrize("attack", HOSTILE, ids=ATTACKERS)
def test_attacker_is_graded_in_bounded_time(batch, attack):
    result = batch["graded"].get(attack.student)
    assert result is not None, f"{attack.student} was not graded"
    seconds = result.get("seconds")
    assert seconds is not None and seconds < WALL_BOUND, \
        f"{attack.student} ({attack.what}) took {seconds} s (bound {WALL_BOUND:g} s): {_summary(result)}"


# --- the machine around the batch -------------------------------------------------------------------------
def test_files_outside_the_course_are_untouched(batch):
    changed = {student: canary.state() for student, (canary, before) in batch["canaries"].items()
               if canary.state() != before}
    assert not changed, f"canary files changed (content, mode, type) by the attacks of {sorted(changed)}"
    escaped = sorted(p.name for p in Path(batch["ctx"].evidence).iterdir())
    assert not escaped, f"code ran outside the sandbox and wrote {escaped}"


def test_the_grading_log_stays_bounded(batch):
    """The flood of IOPub messages of an unknown type is dropped at the Out gate, never logged (nbclient would log a
    line for each); and each worker's log holds at most LOG_BUDGET characters per student it graded, and its start."""
    logs = sorted((batch["base"] / "results" / "logs").glob("worker-*.log"))
    assert logs, "the batch left no worker log"
    students = len(batch["graded"])
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace")
        assert "flood-xxxx" not in text, f"{log.name} logs what the flood sent"
        assert len(text) <= (students + 1) * (worker.LOG_BUDGET + 200), f"{log.name}: {len(text)} characters"


def test_gradebook_intact(batch):
    path = batch["course"] / "gradebook.db"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = db.execute("PRAGMA integrity_check").fetchall()
            students = {row[0] for row in db.execute("SELECT id FROM student")}
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        pytest.fail(f"the course gradebook is no longer a database: {exc}")
    assert verdict == [("ok",)], verdict
    missing = sorted((set(batch["honest"]) | set(ATTACKERS)) - students)
    assert not missing, f"students missing from the gradebook: {missing}"


def test_grading_processes_stay_under_the_memory_bound(batch):
    peaks = {"this process (the grading parent)": batch["self_peak"],
             **{f"worker {pid}": peak for pid, peak in batch["worker_peaks"].items()}}
    assert batch["worker_peaks"], "no grading worker was seen"
    over = {k: f"{v / MiB:.0f} MiB" for k, v in peaks.items() if v > GRADER_RSS_BOUND}
    assert not over, (f"peak memory above {GRADER_RSS_BOUND / MiB:.0f} MiB: {over} "
                      f"(largest child, sandboxes included: {batch['children_peak'] / MiB:.0f} MiB)")


@pytest.mark.skipif(os.geteuid() != 0, reason="graded as a normal user, the grader has no root to give up")
def test_workers_and_judges_never_run_as_root(batch):
    """Graded as root, every process that handles what a student's code made runs as a user of its own."""
    assert batch["worker_uids"], "no grading worker was seen"
    as_root = {pid: sorted(uids) for pid, uids in batch["worker_uids"].items() if 0 in uids}
    assert not as_root, f"grading processes running as root (pid: real and effective uid): {as_root}"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v", "-p", "no:xdist"]))
