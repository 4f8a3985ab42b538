"""A class on JupyterHub, end to end, as deploy/jupyterhub/ sets it up (the guide's hub section).

Root runs deploy/jupyterhub/setup.sh for system users made for the test (an instructor, two
students, the grading account), into a scratch prefix and exchange, then starts JupyterHub on
127.0.0.1 with LocalProcessSpawner and a shared-password authenticator. The instructor releases
02_forward_pass through the formgrader service; each student logs in with Chromium, fetches
it from the Assignments panel, types answers (one right, one missing b1) and submits there. The
instructor collects through the formgrader, grades with `python -m autograder grade` as the
grading account (sandbox on), and releases feedback; each student fetches it in the panel and
sees their own score only. Users, homes, the exchange, the hub's files and every process they
ran are removed afterwards, pass or fail.
"""

import contextlib
import importlib
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from run_locks import one_batch

from autograder.grading.scoring.gradebook import CellScore

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("FFN_ARTIFACTS", ROOT / "artifacts")) / "hub"  # screenshots of a failure
COURSE_ID = "ffn-course"
AID = "02_forward_pass"
PREFIX = "ffnt-"  # every account the test makes starts with it
INSTRUCTOR, STUDENTS, GRADER = f"{PREFIX}instr", (f"{PREFIX}s1", f"{PREFIX}s2"), f"{PREFIX}grader"
USERS = (GRADER, INSTRUCTOR, *STUDENTS)
LATE = f"{PREFIX}s3"  # a student added once the hub runs (deploy/jupyterhub/add-user.sh)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _uid(user):
    return pwd.getpwnam(user).pw_uid


def _pids_of(uids):
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}").st_uid in uids:
                found.append(int(entry))
    return found


def _running(pids):
    """Those of `pids` that still run (neither gone nor a zombie)."""
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                if f.read().rpartition(")")[2].split()[0] != "Z":
                    out.append(pid)
    return out


def _remove_users():
    """Kill every process of the test's accounts (by pid), then delete the accounts and their homes."""
    uids = set()
    for user in (*USERS, LATE):
        with contextlib.suppress(KeyError):
            uids.add(_uid(user))
    for sig, within in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        for pid in _pids_of(uids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + within  # until each has ended (a zombie holds nothing); SIGKILL the rest
        while _running(_pids_of(uids)) and time.monotonic() < deadline:
            time.sleep(0.05)  # polling
    for user in (*USERS, LATE):
        if user in {p.pw_name for p in pwd.getpwall()}:
            subprocess.run(["userdel", "--remove", user], capture_output=True)
            subprocess.run(["groupdel", user], capture_output=True)


def _as(user, *cmd, cwd=None, env=None, check=True):
    """Run `cmd` as `user` with a login-like environment (HOME, USER, PATH of the course's environment)."""
    home = pwd.getpwnam(user).pw_dir
    full_env = {"HOME": home, "USER": user, "LANG": "C.UTF-8", "PATH": os.environ["FFN_TEST_PATH"], **(env or {})}
    run = subprocess.run(list(cmd), user=user, group=user, extra_groups=[], cwd=cwd or home, env=full_env,
                         capture_output=True, text=True, timeout=600)
    if check and run.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} as {user} failed ({run.returncode}):\n"
                             f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return run


def _can(user, code):
    """Run Python `code` as `user`; "ok", or the name of the exception it raised."""
    probe = (f"try:\n{textwrap.indent(code, '    ')}\n    print('ok')\n"
             "except Exception as e:\n    print(type(e).__name__)\n")
    return _as(user, "python", "-c", probe, check=False).stdout.strip()


class Hub:
    """A deployed course: the prefix setup.sh filled, and the hub running from it."""

    def __init__(self, prefix, exchange, password):
        self.prefix, self.exchange, self.password = prefix, exchange, password
        self.venv, self.hub_dir = prefix / "venv", prefix / "hub"
        self.course = Path(pwd.getpwnam(GRADER).pw_dir) / "ffn-course"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self):
        env = {**os.environ, "FFN_HUB_AUTH": "shared-password", "FFN_HUB_TEST_PASSWORD": self.password,
               "FFN_HUB_IP": "127.0.0.1", "FFN_HUB_PORT": str(self.port), "FFN_HUB_API_PORT": str(_free_port()),
               "FFN_PROXY_API_PORT": str(_free_port()), "FFN_SERVICE_PORT": str(_free_port())}
        self.log = open(self.prefix / "jupyterhub.log", "w")
        self.process = subprocess.Popen([str(self.venv / "bin" / "jupyterhub"), "-f", "jupyterhub_config.py"],
                                        cwd=self.hub_dir, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.time() + 90
        import requests

        while time.time() < deadline:
            assert self.process.poll() is None, f"JupyterHub exited:\n{self.log_text()}"
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{self.url}/hub/api/", timeout=2).status_code == 200:
                    return
            time.sleep(0.5)
        raise AssertionError(f"JupyterHub did not answer within 90 s:\n{self.log_text()}")

    def log_text(self):
        return (self.prefix / "jupyterhub.log").read_text(errors="replace")[-6000:]

    def stop(self):
        if getattr(self, "process", None) is None:
            return
        self.process.terminate()  # the hub stops the users' servers, its services and the proxy
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(60)  # reaped: no zombie hub left for the rest of the run
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # the proxy, if the hub left it
        self.log.close()

    def session(self, user):
        """A requests session logged in to the hub as `user`."""
        import requests

        session = requests.Session()
        session.get(f"{self.url}/hub/login", timeout=30)
        r = session.post(f"{self.url}/hub/login?next=", timeout=30,
                         data={"username": user, "password": self.password, "_xsrf": session.cookies.get("_xsrf")})
        assert r.status_code == 200 and "jupyterhub-session-id" in session.cookies, f"{user} could not log in"
        return session


def _xsrf(session, path):
    return next(c.value for c in session.cookies if c.name == "_xsrf" and c.path.startswith(path))


def _formgrader(hub, session, action):
    """POST one of the formgrader API's actions (assign, release, collect, generate_feedback, release_feedback)."""
    base = f"/services/{COURSE_ID}/"
    r = session.get(f"{hub.url}{base}formgrader/api/status", timeout=60)
    assert r.status_code == 200, f"the formgrader service answered {r.status_code}:\n{hub.log_text()}"
    r = session.post(f"{hub.url}{base}formgrader/api/assignment/{AID}/{action}", timeout=300,
                     headers={"X-XSRFToken": _xsrf(session, base)})
    assert r.status_code == 200, f"formgrader {action}: {r.status_code} {r.text[:2000]}"
    answer = r.json()
    assert answer.get("success"), f"formgrader {action} failed: {answer.get('error') or answer.get('log')}"
    return answer


@pytest.fixture(scope="module")
def hub():
    """Deploy with setup.sh for the test's accounts, start the hub; remove everything afterwards."""
    _remove_users()  # a run killed half-way may have left them
    scratch = Path(tempfile.mkdtemp(prefix="ffnt-hub-"))
    os.chmod(scratch, 0o755)
    prefix, exchange = scratch / "opt", scratch / "exchange"
    deployed = None
    try:
        for user in USERS[1:]:  # setup.sh makes the grading account
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", user], check=True)
        env = {**os.environ, "FFN_PREFIX": str(prefix), "FFN_GRADER": GRADER, "FFN_EXCHANGE": str(exchange),
               "FFN_INSTRUCTORS": INSTRUCTOR, "FFN_STUDENTS": " ".join(STUDENTS)}
        started = time.perf_counter()
        setup = subprocess.run([str(ROOT / "deploy" / "jupyterhub" / "setup.sh")], env=env,
                               capture_output=True, text=True, timeout=900)
        assert setup.returncode == 0, f"setup.sh failed:\n{setup.stdout[-4000:]}\n{setup.stderr[-4000:]}"
        print(f"\nsetup.sh took {time.perf_counter() - started:.0f} s")
        os.environ["FFN_TEST_PATH"] = f"{prefix}/venv/bin:/usr/local/bin:/usr/bin:/bin"
        deployed = Hub(prefix, exchange, secrets.token_hex(16))
        deployed.start()
        yield deployed
    finally:
        if deployed is not None:
            deployed.stop()
        _remove_users()
        shutil.rmtree(scratch, ignore_errors=True)
        os.environ.pop("FFN_TEST_PATH", None)


@pytest.fixture(scope="module")
def chromium(browser):
    return browser  # the process's one Chromium (tests/conftest.py)


class UserServer:
    """What tests/browser/jlab.py needs of a server: `url(path)`, here through the hub's proxy."""

    def __init__(self, hub, user):
        self.hub, self.user = hub, user

    def url(self, path="lab"):
        return f"{self.hub.url}/user/{self.user}/{path}"


def _answers():
    """grade_id -> answer cell source: the worked solution, and 02's `ffn-missing-b1` mistake."""
    module = importlib.import_module(f"submissions.{AID}")
    solution = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                for c in nbformat.read(ROOT / "solutions" / f"{AID}.ipynb", as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("solution")}
    wrong = next(w for w in module.WRONG if w.name == "ffn-missing-b1")
    return solution, wrong


def _log_in(page, hub, user):
    page.goto(f"{hub.url}/hub/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", hub.password)
    page.click("input[type=submit], button[type=submit]")
    page.locator("#jp-main-dock-panel").wait_for(timeout=120_000)  # the hub spawned the server; JupyterLab is up


def _assignments_panel(page):
    from browser import jlab

    jlab.menu(page, "Nbgrader", "Assignment List")
    page.locator("#released_assignments_list, #fetched_assignments_list").first.wait_for()
    return page


def _row(page, listing, text=AID):
    row = page.locator(f"#{listing} .list_item", has_text=text).first
    row.wait_for(timeout=60_000)
    return row


def _student_submits(chromium, hub, student, answers):
    """Log in, fetch from the Assignments panel, type the answers, save, submit from the panel."""
    from browser import jlab

    # JupyterLab 4 renders only the cells in view; the test finds answer cells by their text.
    _as(student, "python", "-c", "import json, pathlib; p = pathlib.Path.home() / '.jupyter/lab/user-settings/"
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings'; p.parent.mkdir(parents=True, exist_ok=True); "
        "p.write_text(json.dumps({'windowingMode': 'none'}))")
    with _student_page(chromium, hub, student) as page:
        _assignments_panel(page)
        _row(page, "released_assignments_list").get_by_role("button", name="Fetch").click()
        _row(page, "fetched_assignments_list")
        path = Path(pwd.getpwnam(student).pw_dir) / AID / f"{AID}.ipynb"
        assert path.is_file(), f"Fetch did not put {AID} in {student}'s home"

        jlab.open_notebook(page, UserServer(hub, student), f"{AID}/{AID}.ipynb")
        for grade_id, source in answers.items():
            jlab.replace_cell_source(page, jlab.cell_by_text(page, f"def {grade_id}("), source)
        page.keyboard.press("Control+s")
        deadline = time.time() + 30
        while time.time() < deadline:
            saved = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
                     for c in nbformat.read(path, as_version=4).cells}
            if all(saved.get(g, "").strip() == s.strip() for g, s in answers.items()):
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"{student}'s answers were not saved to {path}")

        _assignments_panel(page)
        _row(page, "fetched_assignments_list").get_by_role("button", name="Submit").click()
        _row(page, "submitted_assignments_list")
        return jlab.menu_items(page, "Nbgrader")


@contextlib.contextmanager
def _student_page(chromium, hub, student):
    """A browser page with `student` logged in; if what runs in it fails, a screenshot in artifacts/hub/."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        _log_in(page, hub, student)
        yield page
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)  # the scratch folder goes at teardown; this stays
        page.screenshot(path=str(ARTIFACTS / f"FAILED-{student}.png"), full_page=True)
        raise
    finally:
        context.close()


def _student_fetches_feedback(chromium, hub, student):
    """Fetch Feedback from the panel; the text of the feedback page the student then has."""
    with _student_page(chromium, hub, student) as page:
        _assignments_panel(page)
        _row(page, "submitted_assignments_list").get_by_role("button", name="Fetch Feedback").click()
        home = Path(pwd.getpwnam(student).pw_dir)
        deadline = time.time() + 60
        while not (pages := sorted(home.glob(f"{AID}/feedback/*/{AID}.html"))) and time.time() < deadline:
            time.sleep(0.5)
        assert pages, f"Fetch Feedback put no feedback page in {student}'s {AID}/feedback/"
        page.goto(UserServer(hub, student).url(f"files/{pages[-1].relative_to(home)}"))
        return page.locator("body").inner_text()


def _scores(hub):
    """student -> {test cell: (score, max)} from the course's gradebook, read as the grading account."""
    code = ("import json; from autograder.grading.scoring.gradebook import cell_scores\n"
            "print(json.dumps(cell_scores('autograder/course/gradebook.db')))")
    rows = json.loads(_as(GRADER, "python", "-c", code, cwd=hub.course).stdout)
    scores = {}
    for row in (CellScore(*fields) for fields in rows):
        scores.setdefault(row.student, {})[row.cell] = (
            row.manual_score if row.manual_score is not None else row.auto_score, row.max_score)
    return scores


def test_a_class_on_jupyterhub(hub, chromium):
    solution, wrong = _answers()
    answers = {STUDENTS[0]: dict(solution), STUDENTS[1]: {**solution, wrong.cell: wrong.source}}
    exchange = hub.exchange / COURSE_ID
    timings = {}

    # The formgrader is the grading account's server, and no one else's.
    course_dir = f"--ServerApp.root_dir={hub.course / 'autograder' / 'course'}".encode()
    owners = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if b"jupyterhub-singleuser" in cmdline and course_dir in cmdline:
                owners.add(os.stat(f"/proc/{entry}").st_uid)
    assert owners == {_uid(GRADER)}, f"the formgrader runs as uids {owners}, expected {GRADER}'s only"

    # The instructor releases through the formgrader service.
    started = time.perf_counter()
    instructor = hub.session(INSTRUCTOR)
    _formgrader(hub, instructor, "assign")
    _formgrader(hub, instructor, "release")
    assert (exchange / "outbound" / AID / f"{AID}.ipynb").is_file()
    # A student may not use the formgrader service.
    student_session = hub.session(STUDENTS[0])
    r = student_session.get(f"{hub.url}/services/{COURSE_ID}/formgrader/api/status", timeout=60)
    assert r.status_code == 403, f"a student asked for the formgrader service: {r.status_code} at {r.url}"
    # nbgrader's course list, from the instructor's own server, finds the course's formgrader on the hub.
    instructor.post(f"{hub.url}/hub/api/users/{INSTRUCTOR}/server", timeout=60,
                    headers={"X-XSRFToken": _xsrf(instructor, "/hub/")})
    deadline = time.time() + 90
    while True:
        r = instructor.get(f"{hub.url}/user/{INSTRUCTOR}/formgraders", timeout=60)
        if r.status_code == 200 and r.text.startswith("{"):  # nbgrader answers JSON as text/html
            break
        assert time.time() < deadline, f"the instructor's server did not start: {r.status_code}\n{hub.log_text()}"
        time.sleep(1)
    courses = r.json()
    assert courses["success"] and [c["course_id"] for c in courses["value"]] == [COURSE_ID], \
        f"nbgrader's course list on the instructor's server: {courses}"
    timings["release"] = time.perf_counter() - started

    # Each student, in Chromium: fetch, answer, submit from the Assignments panel.
    started = time.perf_counter()
    for student in STUDENTS:
        menu = _student_submits(chromium, hub, student, answers[student])
        assert "Assignment List" in menu and not any("Formgrader" in item for item in menu), \
            f"{student}'s Nbgrader menu: {menu}"
    timings["students submit (browser)"] = time.perf_counter() - started

    # A student's server has no formgrader and no course list.
    for path in ("formgrader", "formgrader/api/status", "formgraders"):
        r = student_session.get(f"{hub.url}/user/{STUDENTS[0]}/{path}", timeout=60)
        assert r.status_code == 404, f"{STUDENTS[0]}'s server answered {r.status_code} at {path}"
    # ...and it serves the course's stylesheet (how JupyterLab shows the formulas): the hub's single-user server
    # keeps the tornado_settings the course's jupyter_server_config.py gives it.
    r = student_session.get(f"{hub.url}/user/{STUDENTS[0]}/custom/custom.css", timeout=60)
    assert (r.status_code, r.text) == (200, (ROOT / "jupyter" / "learner" / "custom" / "custom.css").read_text()), \
        f"{STUDENTS[0]}'s server answered {r.status_code} for the course's custom.css"

    # What one student can reach of the other's work, and of the course.
    submitted = {s: [p for p in (exchange / "inbound").iterdir() if p.name.startswith(f"{s}+{AID}+")]
                 for s in STUDENTS}
    assert all(len(found) == 1 for found in submitted.values()), f"exchange inbound: {submitted}"
    s1, s2 = STUDENTS
    other = submitted[s2][0]
    assert re.fullmatch(rf"{s2}\+{AID}\+[^+]+\+[\w-]{{8,}}", other.name), \
        f"a submission's folder name must end in a random string (nbgrader's add_random_string): {other.name}"
    own = submitted[s1][0] / f"{AID}.ipynb"
    assert _can(s1, f"open({str(own)!r}).read()") == "ok"  # their own, by its name: the probe itself works
    assert _can(s1, f"import os; os.listdir({str(exchange / 'inbound')!r})") == "PermissionError"
    assert _can(s1, f"open({str(hub.course / 'autograder' / 'course' / 'gradebook.db')!r}, 'rb')") == "PermissionError"
    assert _can(s1, f"import os; os.listdir({str(hub.course)!r})") == "PermissionError"
    assert _can(s1, f"import os; os.rename({str(exchange)!r}, {str(exchange) + '-moved'!r})") == "PermissionError"

    # The instructor collects through the formgrader, grades as the grading account (sandbox on), releases feedback.
    started = time.perf_counter()
    _formgrader(hub, instructor, "collect")
    with one_batch():  # two sandboxes: the run's every core (tests/run_locks.py)
        grade = _as(GRADER, "python", "-m", "autograder", "grade", AID, "autograder/course/submitted",
                    "--out", f"grading/{AID}", "--jobs", "2", cwd=hub.course)
    assert "--unsafe" not in grade.stdout + grade.stderr
    timings["collect and grade"] = time.perf_counter() - started
    _formgrader(hub, instructor, "generate_feedback")
    # The formgrader's Generate Feedback read the course's nbgrader_config.py: its page is the course's template
    # (a Content-Security-Policy, no script), not nbgrader's, which loads MathJax from a CDN.
    made = sorted((hub.course / "autograder" / "course" / "feedback").glob(f"*/{AID}/{AID}.html"))
    assert len(made) == len(STUDENTS), made
    for page in made:
        text = page.read_text(encoding="utf-8")
        assert 'http-equiv="Content-Security-Policy"' in text and "<script" not in text.lower(), page
    _formgrader(hub, instructor, "release_feedback")
    assert _can(s1, f"import os; os.listdir({str(exchange / 'feedback')!r})") == "PermissionError"

    # Each score: the right answers earn every point; the mistake loses its own exercise's test cells only.
    scores = _scores(hub)
    assert set(scores) == set(STUDENTS), f"graded students: {sorted(scores)}"
    right = scores[s1]
    assert right and all(score == maximum for score, maximum in right.values()), f"{s1}: {right}"
    for cell, (score, maximum) in scores[s2].items():
        if cell in wrong.loses:
            assert score == 0, f"{s2}'s {cell}: {score} of {maximum}, but the answer misses b1"
        else:
            assert score == maximum, f"{s2}'s {cell}: {score} of {maximum}"
    total = {s: (sum(v[0] for v in scores[s].values()), sum(v[1] for v in scores[s].values())) for s in STUDENTS}
    assert total[s1][0] > total[s2][0]

    # Each student fetches the feedback in the panel and sees their own score, nothing of the other's.
    started = time.perf_counter()
    for student in STUDENTS:
        text = _student_fetches_feedback(chromium, hub, student)
        score, maximum = total[student]
        other_student = s2 if student == s1 else s1
        assert re.search(rf"Score:\s*{score:g}(\.0)?\s*/\s*{maximum:g}(\.0)?", text), \
            f"{student}'s feedback does not show {score:g} / {maximum:g}:\n{text[:1500]}"
        assert other_student not in text
    timings["students fetch feedback (browser)"] = time.perf_counter() - started
    print("\n" + ", ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))


def test_the_hub_service_and_a_student_added_later(hub):
    """setup.sh filled in the systemd unit; add-user.sh refuses a name with no account, then adds one it makes."""
    unit = (hub.hub_dir / "ffn-course-hub.service").read_text(encoding="utf-8")
    assert f"ExecStart={hub.venv}/bin/jupyterhub -f {hub.hub_dir}/jupyterhub_config.py" in unit
    assert f"WorkingDirectory={hub.hub_dir}" in unit and "@" not in unit.split("[Unit]")[1]
    add = [str(ROOT / "deploy" / "jupyterhub" / "add-user.sh")]
    env = {**os.environ, "FFN_PREFIX": str(hub.prefix)}
    refused = subprocess.run([*add, LATE], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and f"no Unix account on this server for: {LATE}." in refused.stderr
    assert not _logs_in(hub, LATE)  # not allowed in
    added = subprocess.run([*add, "--create", LATE], env=env, capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    assert f"FFN_STUDENTS={' '.join(STUDENTS)} {LATE}" in (hub.hub_dir / "course.env").read_text(encoding="utf-8")
    hub.stop()  # no systemd here: restarted by hand, as add-user.sh says
    hub.start()
    assert _logs_in(hub, LATE)  # the shared test password stands for PAM's


def _logs_in(hub, user):
    """Whether `user` gets a hub session: the hub's API, asked with its cookie, names them."""
    import requests

    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=30)
    session.post(f"{hub.url}/hub/login?next=", timeout=30,
                 data={"username": user, "password": hub.password, "_xsrf": session.cookies.get("_xsrf")})
    r = session.get(f"{hub.url}/hub/api/user", timeout=30)
    return r.status_code == 200 and r.json().get("name") == user
