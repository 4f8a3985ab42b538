"""Helpers for the grader's tests: a scratch course, submissions on disk, a server on localhost, a batch run."""

import atexit
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import nbformat
import nbtools
from run_locks import one_batch

from autograder.grading import course, grade
from autograder.grading.gate_in import sandbox

_generated = {}  # assignment id -> a scratch course generated in this process (this xdist worker)


def make_course(root, assignment_id):
    """A scratch copy of the course holding `assignment_id`, generated into its own gradebook.

    nbgrader's generate_assignment runs once per process and assignment (seconds, nbgrader's start-up and the
    notebook's checksums); each caller gets a copy of that course (milliseconds), its gradebook its own. The course
    holds no path of its own (nbgrader_config.py puts the root next to itself), so a copy is what a build would be."""
    built = _generated.get(assignment_id)
    if built is None or not built.is_dir():
        folder = Path(tempfile.mkdtemp(prefix="ffn-courses-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        built = nbtools.scratch_course(folder / "course", assignment_id)
        course.generate_assignment(course.load_config(built), assignment_id)
        _generated[assignment_id] = built
    shutil.copytree(built, root, symlinks=True, dirs_exist_ok=True)
    return Path(root)


def as_released_with_data(root, assignment_id, data_name, data_text):
    """Lay the scratch course out as the real one: source/<id>/ also holds the authored <id>.py (solutions and
    hidden tests, which the course's CourseDirectory.ignore keeps out of release/) and a data file it hands out."""
    folder = Path(root) / "source" / assignment_id
    shutil.copy(nbtools.COURSE_ROOT / "source" / assignment_id / f"{assignment_id}.py", folder)
    (folder / data_name).write_text(data_text, encoding="utf-8")


# A private offering's seed, as the tests' instructor would draw one (any integer does; the tests share this one).
OFFERING_SEED = 918_273_645


def private_offering(root, folder, seed=OFFERING_SEED):
    """Give the scratch course an offering seed: a 0600 file in `folder`, named in its nbgrader_config.py."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    seed_file = folder / "offering-seed"
    seed_file.write_text(f"{seed}\n", encoding="utf-8")
    os.chmod(seed_file, 0o600)
    with open(Path(root) / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(f"\nc.Offering.seed_file = {str(seed_file)!r}\n")
    return str(seed_file)


def copy_course(source, target):
    shutil.copytree(source, target)
    return Path(target)


def write_submissions(folder, assignment_id, submissions):
    """student -> notebook | bytes | None (a student folder with nothing in it), in nbgrader's layout."""
    folder = Path(folder)
    for student, content in submissions.items():
        target = folder / student / assignment_id
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{assignment_id}.ipynb"
        if content is None:
            continue
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(nbformat.writes(content) + "\n", encoding="utf-8")
    return folder


def run_batch(assignment_id, submitted, out, course_root, jobs=1, memory="2G", cell_timeout=10.0, timeout=600.0,
              cluster=None, draw_figures=False):
    """`python -m autograder grade` in this process: {student: result}. One job unless the test asks for more
    (parallel grading under test), never more sandboxes than cores across the run's workers (one_batch)."""
    with one_batch(jobs):
        results = grade.grade(assignment_id, submitted, out, jobs=jobs, course_root=course_root,
                              cell_timeout=cell_timeout, limits=sandbox.Limits(memory=sandbox.parse_size(memory)),
                              timeout=timeout, cluster=cluster, draw_figures=draw_figures)
    return {r["student"]: r for r in results}


def points_by_exercise(result):
    """exercise -> (points, max points) summed over its test cells."""
    out = {}
    for cell in result["cells"]:
        got, top = out.get(cell["exercise"], (0.0, 0.0))
        out[cell["exercise"]] = (got + cell["points"], top + cell["max_points"])
    return out


class LocalServer:
    """A TCP server on 127.0.0.1 that records everything sent to it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = []
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    while data := conn.recv(4096):
                        self.received.append(data)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def clean_run_failed(reply, grade_id):
    """`reply` (as a worker sends it) changed to say the clean re-run gave no verdict on test cell `grade_id`: what a
    loaded machine does on no cue, made to order for the regrade's tests."""
    result = reply["result"]
    for cell in result["cells"] + [c for nb in result["notebooks"] for c in nb["cells"]]:
        if cell["grade_id"] == grade_id:
            cell.update(points=0.0, status="rerun incomplete", message="the clean re-run could not finish: forced",
                        clean_run={"points": 0.0, "message": "the clean re-run could not finish: forced"})
    return reply
