"""`grade --cluster` (issue 27): the class graded on a Dask cluster, checked on one machine.

- a scheduler and 2 workers on 127.0.0.1 grade honest and adversarial submissions of 02_forward_pass, one of
  the workers killed mid-batch: every score, status and flag equals `--jobs 2`, each student recorded once,
  and a run started again skips what is done (the ledger);
- workers in network namespaces of their own (a private bridge to the scheduler) that cannot see the course
  folder (their own mount namespace) grade correctly; a worker without bubblewrap refuses with one line, which
  the instructor's run shows;
- with mutual TLS (the guide's "Securing a real cluster"), the instructor's certificate grades and a client
  without a certificate of the course's CA is refused;
- the instructor's process never unpickles what a worker sends (dask_guard);
- what a task sends back is validated as data (cluster_reply), and a task past its limit is a timeout.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import adversarial
import distributed
import nbtools
import psutil
import pytest
from adversarial import ASSIGNMENT, ATTACKS, Context, grading

from autograder import limits
from autograder.grading import course
from autograder.grading.dispatch import cluster, cluster_reply, cluster_task, dask_guard
from autograder.grading.scoring import ledger

pytestmark = [pytest.mark.xdist_group("grader-cluster")]
ATTACKERS = ("patch-numpy", "infinite-loop", "duplicate-cell", "invalid-json", "missing")


def _digest(result):
    """What must be equal between two gradings of one submission: status, scores, each cell, each flag."""
    cells = sorted((c["grade_id"], c["points"], c["max_points"], c["status"]) for c in result["cells"])
    flags = sorted((f["kind"], f["exercise"] or "") for f in result["flags"])
    return result["status"], result["score"], result["max_score"], cells, flags


@pytest.fixture(scope="module")
def course_root(tmp_path_factory):
    return grading.make_course(tmp_path_factory.mktemp("cluster") / "course", ASSIGNMENT)


def _students(course_root):
    solution = nbtools.cells_by_id(nbtools.solution(ASSIGNMENT))
    ctx = Context(learner=nbtools.learner(ASSIGNMENT), course=str(course_root), results="", port=1,
                  answers={gid: solution[gid].source for gid in adversarial.EXERCISES})
    wrong = __import__(f"submissions.{ASSIGNMENT}", fromlist=["WRONG"]).WRONG
    students = adversarial.honest_students(ctx, wrong[:1])
    attacks = {a.student: a for a in ATTACKS}
    return {**students, **{name: attacks[name].build(ctx) for name in ATTACKERS}}


def _dask_processes():
    """This test's Dask processes (descendants of this one): {pid: psutil.Process}: the scheduler, each worker's
    nanny (`dask worker`) and the worker process it starts (a multiprocessing child)."""
    out = {}
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if any(mark in " ".join(p.cmdline()) for mark in ("distributed.cli", "multiprocessing")):
                out[p.pid] = p
    return out


class _Killer(threading.Thread):
    """Kills one Dask worker while it grades a student (SIGKILL: no goodbye); notes what listens where."""

    def __init__(self):
        super().__init__(daemon=True)
        self.killed, self.listening, self.stop = None, set(), False

    def run(self):
        while not self.stop and self.killed is None:
            time.sleep(0.5)
            for pid, proc in _dask_processes().items():
                with contextlib.suppress(psutil.Error):
                    self.listening |= {(c.laddr.ip, pid) for c in proc.net_connections("inet")
                                       if c.status == psutil.CONN_LISTEN}
                    if "multiprocessing" in " ".join(proc.cmdline()) and self._grading(proc):
                        proc.kill()
                        self.killed = pid
                        return

    @staticmethod
    def _grading(proc):
        """True when a grading worker under this process runs a sandbox (a student's notebook, not start-up)."""
        for child in proc.children():
            if "autograder.grading.worker" in " ".join(child.cmdline()) and child.children(recursive=True):
                return True
        return False


@pytest.mark.grading
@pytest.mark.sandbox
def test_local_cluster_grades_as_jobs_2_even_with_a_worker_killed(course_root, tmp_path, capsys):
    grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, _students(course_root))
    jobs_root = grading.copy_course(course_root, tmp_path / "jobs-course")
    on_one = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "jobs", jobs_root, jobs=2)
    capsys.readouterr()
    killer = _Killer()
    killer.start()
    try:
        on_cluster = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "cluster", course_root,
                                       jobs=None, cluster="local:2")
    finally:
        killer.stop = True
    err = capsys.readouterr().err
    assert killer.killed, "no worker was killed mid-task: the test did not test a fault"
    assert sorted(on_cluster) == sorted(on_one) == sorted(_students(course_root))
    for student in on_one:
        assert _digest(on_cluster[student]) == _digest(on_one[student]), student
    assert on_cluster["infinite-loop"]["status"] == "timeout"
    total = len(on_one)
    assert err.count(f" {total}/{total} students") == 1 and f" {total + 1}/" not in err
    rows = (tmp_path / "cluster" / "grades.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(r.split(",")[0] for r in rows) == sorted(on_one)  # each student once
    assert set(ledger.load(tmp_path / "cluster")) == set(on_one)
    assert killer.listening and {ip for ip, _ in killer.listening} == {"127.0.0.1"}, killer.listening
    again = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "cluster", course_root, jobs=None,
                              cluster="local:1")
    assert again == {}, "a run started again graded again what was done"
    assert not _dask_processes(), "the local cluster's processes outlived the run"


@pytest.mark.grading
@pytest.mark.sandbox
def test_a_clean_re_run_that_failed_on_the_cluster_is_graded_again_alone_there(course_root, tmp_path, monkeypatch,
                                                                             capsys):
    """As on one machine (test_grader_timeouts): the first verdict is made unfinished here, the regrade is real."""
    grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, {"unlucky": nbtools.solution(ASSIGNMENT)})
    real, replies = cluster_reply.reply, []

    def double(data, student, *args):
        reply = real(data, student, *args)
        replies.append(student)
        return grading.clean_run_failed(reply, "test_ffn_forward") if len(replies) == 1 else reply

    monkeypatch.setattr(cluster_reply, "reply", double)
    results = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "results", course_root, jobs=None,
                                cluster="local:1")
    err = capsys.readouterr().err
    assert replies == ["unlucky", "unlucky"], replies
    unlucky = results["unlucky"]
    assert unlucky["score"] == unlucky["max_score"] > 0 and unlucky["status"] == "graded", unlucky["cells"]
    assert "grading 1 submission(s) again, alone" in err, err[-2000:]
    rows = (tmp_path / "results" / "grades.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [r.split(",")[0] for r in rows].count("unlucky") == 1  # recorded once (the course holds other students)


def _hide(folders, also=""):
    """A command that runs the rest in a mount namespace of its own with `folders` covered by empty tmpfs."""
    mounts = " && ".join([*(f'mount -t tmpfs -o size=1m tmpfs "{f}"' for f in folders), *([also] if also else [])])
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"', "sh"]


def _write_solution_and_learner(folder):
    """The small batch of the namespace and TLS tests: the worked solution and the untouched learner notebook."""
    grading.write_submissions(folder, ASSIGNMENT, {"solution": nbtools.solution(ASSIGNMENT),
                                                   "learner": nbtools.learner(ASSIGNMENT)})


def _solution_and_learner_graded(results, out, drawn=False):
    """Full marks for the solution, 0 for the learner notebook, both graded (not refused, not an error); the
    solution's feedback holds its figures as images when `drawn` (--draw-figures), else their descriptions."""
    assert results["solution"]["score"] == results["solution"]["max_score"] > 0
    assert results["learner"]["score"] == 0 and results["learner"]["status"] == "graded"
    page = (out / "solution.html").read_text(encoding="utf-8")
    images, described = page.count('<img alt="'), page.count("[Figure (not drawn while grading): ")
    assert (images, described) == ((images, 0) if drawn else (0, described)) and images + described > 0, \
        (drawn, images, described)


@contextlib.contextmanager
def _network(names):
    """A bridge of its own and a network namespace per name, each on the bridge by a veth pair: yields the bridge's
    address (for the scheduler) and {name: (namespace, its address)}. Nothing else reaches the bridge's subnet,
    and the namespaces see nothing of this machine's network but it."""
    tag = f"{os.getpid() % 100000}"
    subnet = f"10.231.{os.getpid() % 250}"
    bridge, spaces, commands = f"ffnb{tag}", {}, []
    commands += [f"link add {bridge} type bridge", f"addr add {subnet}.1/24 dev {bridge}", f"link set {bridge} up"]
    for k, name in enumerate(names):
        space, outer, inner = f"ffn-{tag}-{k}", f"ffnh{tag}{k}", f"ffnn{tag}{k}"
        spaces[name] = (space, f"{subnet}.{k + 2}")
        commands += [f"netns add {space}", f"link add {outer} type veth peer name {inner} netns {space}",
                     f"link set {outer} master {bridge}", f"link set {outer} up",
                     f"-n {space} addr add {subnet}.{k + 2}/24 dev {inner}", f"-n {space} link set {inner} up",
                     f"-n {space} link set lo up"]
    try:
        for command in commands:
            subprocess.run(["ip", *command.split()], check=True, capture_output=True, text=True)
        yield f"{subnet}.1", spaces
    finally:
        for space, _ in spaces.values():
            subprocess.run(["ip", "netns", "del", space], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.namespaces
def test_workers_in_namespaces_of_their_own_grade_without_the_course_and_one_without_bubblewrap_refuses(
        course_root, tmp_path, capsys):
    """Three workers, each in a network namespace of its own (on a private bridge with the scheduler) and a mount
    namespace where the course is empty: nothing crosses but Dask's messages. Two grade; the third has no bwrap."""
    _write_solution_and_learner(tmp_path / "submitted")
    base = Path(course_root).parent  # the course, and beside it nothing a worker needs
    hidden = _hide((base, tmp_path))
    no_bwrap = _hide((base, tmp_path), also=f"mount --bind /dev/null {shutil.which('bwrap')}")
    with _network(("w0", "w1", "no-bwrap")) as (bridge, spaces):
        local = cluster.LocalProcesses(0, host=bridge)
        try:
            for name, (space, address) in spaces.items():
                wrap = no_bwrap if name == "no-bwrap" else hidden
                local.workers.append(local._start(["ip", "netns", "exec", space, *wrap,
                                                   *local.worker_command(name, host=address)]))
            client, _ = cluster.connect(local.address, workers=3)
            try:  # what each worker sees: its own network, and nothing of the course
                seen = client.run(os.path.exists, str(Path(course_root) / "gradebook.db"))
                networks = client.run(os.readlink, "/proc/self/ns/net")
            finally:
                client.close()
            assert len(seen) == 3 and not any(seen.values()), seen
            assert len(set(networks.values()) | {os.readlink("/proc/self/ns/net")}) == 4, networks
            assert sorted(w.split(":")[1][2:] for w in networks) == sorted(a for _, a in spaces.values()), networks
            results = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "results", course_root,
                                        jobs=None, cluster=local.address)
        finally:
            local.close()
    err = capsys.readouterr().err
    _solution_and_learner_graded(results, tmp_path / "results")
    refusals = [line for line in err.splitlines() if "refuses to grade" in line]
    assert len(refusals) == 1 and "bwrap" in refusals[0], err[-3000:]


def _certificates(folder):
    """A CA of the course's, a certificate it signed for the cluster's processes and one for the instructor's,
    and a stranger's CA with a certificate of its own: {name: path} of PEM files (openssl, EC keys)."""
    shutil.which("openssl") or pytest.fail("openssl is needed to make the test cluster's certificates")
    out = {}

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)

    for ca in ("ca", "stranger-ca"):
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-subj", f"/CN=ffn-test-{ca}")
        out[ca] = folder / f"{ca}.pem"
    for name, ca in (("cluster", "ca"), ("instructor", "ca"), ("stranger", "stranger-ca")):
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=ffn-test-{name}")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-days", "1", "-out", f"{name}.pem")
        out[name], out[f"{name}-key"] = folder / f"{name}.pem", folder / f"{name}.key"
    return out


def _tls(ca, cert, key, *roles):
    """Dask's configuration for mutual TLS, as environment variables, for the given roles' certificate."""
    env = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True", "DASK_DISTRIBUTED__COMM__DEFAULT_SCHEME": "tls",
           "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(ca)}
    for role in roles:
        env |= {f"DASK_DISTRIBUTED__COMM__TLS__{role}__CERT": str(cert),
                f"DASK_DISTRIBUTED__COMM__TLS__{role}__KEY": str(key)}
    return env


def _refused(address, env):
    """Does a client with Dask's configuration `env` fail to connect to `address`? (in a process of its own)"""
    probe = ("import sys, distributed\ntry:\n    distributed.Client(sys.argv[1], timeout=10).close()\n"
             "except Exception:\n    sys.exit(3)\n")
    run = subprocess.run([sys.executable, "-c", probe, address], env={**os.environ, **env}, capture_output=True,
                         timeout=120)
    return run.returncode == 3


@pytest.mark.grading
@pytest.mark.sandbox
def test_a_cluster_with_mutual_tls_grades_and_lets_no_stranger_in(course_root, tmp_path, monkeypatch):
    """The guide's "Securing a real cluster", run: scheduler and workers with the course CA's certificate, the
    instructor's `grade --cluster tls://...` with its own; no client without one, or with a stranger's, gets in."""
    import dask

    certs = _certificates(tmp_path)
    _write_solution_and_learner(tmp_path / "submitted")
    local = cluster.LocalProcesses(2, env={**os.environ, **_tls(certs["ca"], certs["cluster"],
                                                                 certs["cluster-key"], "SCHEDULER", "WORKER")})
    try:
        assert local.address.startswith("tls://127.0.0.1:"), local.address
        instructor = _tls(certs["ca"], certs["instructor"], certs["instructor-key"], "CLIENT")
        assert not _refused(local.address, instructor), "the instructor's certificate did not get in"
        assert _refused(local.address, _tls(certs["ca"], None, None)), "a client with no certificate connected"
        assert _refused(local.address, _tls(certs["ca"], certs["stranger"], certs["stranger-key"], "CLIENT")), \
            "a client with a certificate of another CA connected"
        for name, value in instructor.items():
            monkeypatch.setenv(name, value)
        dask.config.refresh()
        results = grading.run_batch(ASSIGNMENT, tmp_path / "submitted", tmp_path / "results", course_root,
                                    jobs=None, cluster=local.address, draw_figures=True)
    finally:
        local.close()
        monkeypatch.undo()
        dask.config.refresh()
    _solution_and_learner_graded(results, tmp_path / "results", drawn=True)


class _Evil:
    """Unpickling this runs a command: what a worker taken over by student code would send."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _send_pickled(marker):
    from distributed.protocol.serialize import ToPickle

    return ToPickle(_Evil(marker))


def _send_object(marker):
    return _Evil(marker)


class _EvilError(Exception):
    def __reduce__(self):
        return os.system, (f"touch {self.args[0]}",)


def _raise(marker):
    raise _EvilError(marker)


def test_the_instructors_process_never_unpickles_what_a_worker_sends(tmp_path):
    marker = tmp_path / "unpickled"
    client, local = cluster.connect("local:1")
    try:
        before = len(dask_guard.REFUSED)
        for attack in (_send_pickled, _send_object):
            try:
                answer = client.submit(attack, str(marker), pure=False).result(timeout=120)
            except dask_guard.Refused as refused:  # what Dask makes of a result it could not take
                answer = refused
            assert isinstance(answer, dask_guard.Refused), answer
        failed = client.submit(_raise, str(marker), pure=False)
        distributed.wait(failed, timeout=120)
        assert failed.status == "error" and isinstance(failed.exception(), dask_guard.Refused)
        assert not marker.exists(), "a pickle from a worker was unpickled: code ran"
        assert len(dask_guard.REFUSED) > before
        assert client.submit(dict, a=1, b=b"x", pure=False).result(timeout=60) == {"a": 1, "b": b"x"}
    finally:
        client.close()
        local.close()


# --- without a cluster ---------------------------------------------------------------------------------------
def test_cluster_spec():
    assert cluster.parse("local:2") == ("local", 2)
    assert cluster.parse("tcp://10.0.0.5:8786") == ("address", "tcp://10.0.0.5:8786")
    assert cluster.parse("tls://sched.example.org:8786") == ("address", "tls://sched.example.org:8786")
    for bad in ("local:0", "local:65", "local", "10.0.0.5", "http://x:1", "tcp://x:1; rm -rf /"):
        with pytest.raises(ValueError, match="--cluster .*expects"):
            cluster.parse(bad)


def test_a_task_past_its_limit_is_a_timeout():
    class Silent:  # a grading worker that started and then never answers
        ready = True

        def __init__(self):
            self.r, self.w = os.pipe()

        def fileno(self):
            return self.r

        def send(self, message):
            self.sent = message

        def take_in(self, job):
            return None

    started = time.monotonic()
    answer = cluster_task._ask(Silent(), cluster_task._Job("ann", None), 1.0, False)
    assert answer["lost"] == "timeout" and "longer than 1 s" in answer["why"]
    assert time.monotonic() - started < 10


def _model(course_root):
    return course.prepare_assignment(course.load_config(course_root), ASSIGNMENT)


def _good(model, student="ann"):
    from autograder.grading.scoring import results

    notebooks = [results.empty_notebook(n, "missing notebook", "no file") for n in model.notebooks]
    return {"student": student, "result": results.student_result(student, model.name, notebooks).to_dict(),
            "files": {}}


@pytest.mark.parametrize("change, why", [
    (lambda d: d.update(student="bob"), "not the plain data"),
    (lambda d: d.update(files={"../../gradebook.db": b"x"}), "unexpected file"),
    (lambda d: d.update(files={"page.html": b"<script>"}), "unexpected file"),
    (lambda d: d.update(files={f"{ASSIGNMENT}.ipynb": b"x" * (limits.MAX_FILE_BYTES + 1)}), "over"),
    (lambda d: d["result"].update(score=1e9), "not within the gradebook"),
    (lambda d: d["result"]["notebooks"][0]["cells"][0].update(points=99.0), "not within the gradebook"),
    (lambda d: d["result"].update(student="bob"), "refused"),
    (lambda d: d.update(result=dask_guard.Refused("a pickled object")), "not the plain data"),
])
def test_what_a_task_sends_back_is_checked_as_data(course_root, tmp_path, change, why):
    model = _model(course_root)
    data = _good(model)
    reply = cluster_reply.reply(data, "ann", model, {}, tmp_path)
    assert reply["result"]["status"] == "missing notebook" and Path(reply["html"]).is_file()
    change(data)
    reply = cluster_reply.reply(data, "ann", model, {}, tmp_path)
    assert reply["result"]["status"] == "grader error" and why in reply["result"]["error"], reply["result"]["error"]
    assert "autograded_dir" not in reply


def test_submission_files_follow_no_link(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "a.ipynb").write_text("{}")
    (folder / "secret").symlink_to("/etc/passwd")
    os.mkfifo(folder / "pipe")
    assert cluster.submission_files(folder) == {"a.ipynb": b"{}"}
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="relative file name"):
        cluster_task.write_files(out, {"../escape": b"x"})
    assert not (tmp_path / "escape").exists()


def test_running_names_the_tasks_a_worker_runs_not_those_queued_behind_them():
    """One worker with one thread holds three tasks (top_up gives each worker more than it runs): one runs. The
    scheduler runs in a process of its own, as `grade`'s does: this process may hold the Dask guard (dask_guard),
    under which a scheduler here could not read a task graph."""
    from types import SimpleNamespace

    local = cluster.LocalProcesses(1)
    with contextlib.closing(local), distributed.Client(local.address) as client:
        client.wait_for_workers(1, timeout=60)
        run = cluster._Run(client, None, 60.0)
        for student in ("ann", "bob", "cy"):
            future = client.submit(time.sleep, 4, pure=False, key=f"grade-{student}")
            run.tasks[future.key] = (future, SimpleNamespace(student=student), False)
        deadline = time.monotonic() + 30
        while len(client.processing()[next(iter(client.processing()))]) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # polling: all three sent to the worker
        sent = time.monotonic()
        running = run.running()
        while not running and time.monotonic() < deadline:  # until the worker says it runs one
            time.sleep(0.01)  # polling
            running = run.running()
        assert len(next(iter(client.processing().values()))) == 3
        assert len(running) == 1 and running[0][1] == 0.0, running  # timed from the tick that saw it run
        while run.running()[0][1] < 1.0 and time.monotonic() < deadline:  # the same task, a second on
            time.sleep(0.01)  # polling
        (student, seconds, where), = run.running()
        assert student == running[0][0] and 1.0 <= seconds <= time.monotonic() - sent and where == ""


def test_jobs_and_cluster_together_is_an_error():
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "nowhere", "--jobs", "2",
                           "--cluster", "local:2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--jobs is for one machine" in proc.stderr



# --- the cluster examples of the guide (plain YAML: dask-jobqueue and dask-kubernetes are not installed) ------------
ROOT = Path(__file__).resolve().parents[1]


def test_the_slurm_example_runs_one_student_per_worker_with_tls():
    import yaml

    config = yaml.safe_load((ROOT / "deploy" / "cluster" / "slurm-jobqueue.yaml").read_text(encoding="utf-8"))
    slurm = config["jobqueue"]["slurm"]
    assert slurm["processes"] == slurm["cores"] >= 1  # one thread per worker: one student at a time
    assert "--memory-limit=0" in slurm["worker-extra-args"]
    assert any("bwrap" in line for line in slurm["job-script-prologue"])
    assert slurm["scheduler-options"]["protocol"] == "tls"
    dist = config["distributed"]
    assert dist["scheduler"]["allowed-failures"] == 1 and dist["worker"]["daemon"] is False
    assert dist["comm"]["require-encryption"] is True
    assert {"ca-file", "scheduler", "worker", "client"} <= set(dist["comm"]["tls"])


def test_the_kubernetes_example_mounts_nothing_of_the_course_and_needs_tls():
    import yaml

    spec = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "dask-grader.yaml").read_text(encoding="utf-8"))
    values = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "values.yaml").read_text(encoding="utf-8"))
    assert spec["apiVersion"] == "kubernetes.dask.org/v1" and spec["kind"] == "DaskCluster"
    image = f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    worker = spec["spec"]["worker"]["spec"]
    scheduler = spec["spec"]["scheduler"]["spec"]
    (w,), (s,) = worker["containers"], scheduler["containers"]
    assert w["image"] == s["image"] == image  # the students' image: the same course and grader version
    assert w["args"][w["args"].index("--nthreads") + 1] == "1"
    assert w["securityContext"]["seccompProfile"]["type"] == "Unconfined"  # bubblewrap's user namespaces
    assert [v["secret"]["secretName"] for v in worker["volumes"]] == ["ffn-grader-worker-tls"]  # no course volume
    env = {e["name"]: e["value"] for e in s["env"]}
    assert env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] == "1"
    assert env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] == "True" and "--protocol" in s["args"]
    assert s["args"][s["args"].index("--protocol") + 1] == "tls"
    assert {e["name"]: e["value"] for e in w["env"]}["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] == "True"


_OVERCLAIMS = {
    "a total beyond the gradebook's": lambda d: d["result"].update(score=1e9),
    "a cell beyond its maximum": lambda d: d["result"]["notebooks"][0]["cells"][0].update(points=99.0),
    "a cell whose maximum is raised": lambda d: d["result"]["notebooks"][0]["cells"][0].update(max_points=99.0),
    "a cell the gradebook does not know": lambda d: d["result"]["notebooks"][0]["cells"][0].update(grade_id="extra"),
    "another student's result": lambda d: d["result"].update(student="bob"),
}


@pytest.mark.parametrize("overclaim", _OVERCLAIMS.values(), ids=_OVERCLAIMS.keys())
def test_a_local_reply_is_bounded_by_the_gradebook_exactly_as_a_cluster_reply_is(course_root, tmp_path, overclaim):
    """The driver reads every backend's reply with replies.checked: one machine's worker claims no more than a
    Dask task may, and both refusals say the same."""
    from autograder.grading.dispatch import replies

    model = _model(course_root)
    data = _good(model)
    overclaim(data)
    local = replies.checked({"result": data["result"]}, "ann", model, tmp_path)
    remote = cluster_reply.reply(data, "ann", model, {}, tmp_path)
    assert local["result"]["status"] == remote["result"]["status"] == "grader error"
    assert local["result"]["score"] == remote["result"]["score"] == 0
    why = local["result"]["error"].partition("refused: ")[2]
    assert why and remote["result"]["error"].endswith(why), (local["result"]["error"], remote["result"]["error"])


def test_the_driver_publishes_no_reply_it_has_not_checked(course_root, tmp_path):
    """A backend's inflated reply, and one naming a file outside the run's scratch folder, reach `record` only as a
    grader error; an honest reply passes as it came."""
    import types

    from autograder.grading.dispatch import driver

    model = _model(course_root)
    honest, inflated, outside = _good(model, "ann"), _good(model, "bob"), _good(model, "cy")
    inflated["result"]["notebooks"][0]["cells"][0]["points"] = 99.0
    outside["html"] = "/etc/passwd"
    sent = {"ann": honest, "bob": inflated, "cy": outside}

    class Backend:
        scratch = tmp_path

        def run(self, queue, again, tick):
            for s in queue:
                yield s, {k: v for k, v in sent[s.student].items() if k != "files"}

    recorded = {}

    def record(submission, reply):
        recorded[submission.student] = reply["result"]
        return types.SimpleNamespace(student=submission.student, status=reply["result"]["status"], score=0,
                                     max_score=0)

    found = [types.SimpleNamespace(student=name) for name in sent]
    driver.grade_class(Backend(), found, model, record, tmp_path, say=lambda text: None)
    assert recorded["ann"] == honest["result"]
    assert recorded["bob"]["status"] == "grader error" and "not within the gradebook" in recorded["bob"]["error"]
    assert recorded["cy"]["status"] == "grader error" and "scratch folder" in recorded["cy"]["error"]
