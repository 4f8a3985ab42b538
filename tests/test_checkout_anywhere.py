"""`grade` from a checkout inside a folder only its owner can enter (a private home, 0700).

Grading as root, each worker runs as a user of its own, which cannot enter such a folder. The worker must still
run the grader's own code, the checkout's, not whatever checkout the environment's editable install names.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbtools
import pytest
from adversarial import grading
from run_locks import one_batch

ASSIGNMENT = "02_forward_pass"
REPO_ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.grading, pytest.mark.sandbox, pytest.mark.xdist_group("anywhere")]
MARK = "worker module from: "


def _private_checkout(folder):
    """A copy of the grader's two packages in `folder`, closed to every other user; its worker says where it runs."""
    folder.mkdir(mode=0o700)
    checkout = folder / "checkout"
    for package in ("autograder", "ffn_helpers"):
        shutil.copytree(REPO_ROOT / package, checkout / package, ignore=shutil.ignore_patterns("__pycache__"))
    worker = checkout / "autograder/grading/worker.py"
    worker.write_text(f"import sys\nsys.stderr.write({MARK!r} + __file__ + '\\n')\n"
                      + worker.read_text(encoding="utf-8"), encoding="utf-8")
    return checkout


@pytest.mark.skipif(os.geteuid() != 0, reason="only grading as root runs workers as users of their own")
def test_grade_from_a_checkout_only_its_owner_can_enter(tmp_path):
    checkout = _private_checkout(tmp_path / "private")
    assert not (tmp_path / "private").stat().st_mode & 0o005  # others may neither read nor enter it
    course_root = grading.make_course(tmp_path / "course", ASSIGNMENT)
    submitted = grading.write_submissions(tmp_path / "submitted", ASSIGNMENT,
                                          {"ada": nbtools.completed_learner(ASSIGNMENT)})
    env = {k: v for k, v in nbtools.nbgrader_env().items() if k != "PYTHONPATH"}
    with one_batch(jobs=1):  # one student, --jobs 1: one sandbox
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, submitted, "--out",
                               tmp_path / "results", "--course", course_root, "--jobs", "1"],
                              cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "results/ada.json").read_text())
    assert result["status"] == "graded" and result["score"] == result["max_score"] > 0, result
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "results/logs").glob("worker-*.log"))
    assert f"{MARK}{checkout}/autograder/grading/worker.py" in logs, logs[-2000:]
