"""The run's lock for sandboxed grading (run_locks.py): held, no other process of the run takes it; re-entrant
within one thread; free again once the batch is over, however it ended."""

import os
import subprocess
import sys

import pytest
import run_locks

TRY = ("import fcntl, sys\nwith open(sys.argv[1], 'a') as f:\n"
       "    try:\n        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
       "    except BlockingIOError:\n        sys.exit(3)\n")


def _another_worker_could_take_it(folder):
    run = subprocess.run([sys.executable, "-c", TRY, str(folder / "sandboxed-grading.lock")], timeout=60)
    return run.returncode == 0


def test_one_batch_at_a_time_across_the_runs_processes(tmp_path, monkeypatch):
    monkeypatch.setenv(run_locks.LOCKS, str(tmp_path))
    with run_locks.one_batch():
        assert not _another_worker_could_take_it(tmp_path)
        with run_locks.one_batch():  # run_batch inside a test that holds it already
            assert not _another_worker_could_take_it(tmp_path)
        assert not _another_worker_could_take_it(tmp_path)
    assert _another_worker_could_take_it(tmp_path)
    with pytest.raises(RuntimeError), run_locks.one_batch():
        raise RuntimeError("a batch that fails")
    assert _another_worker_could_take_it(tmp_path)


def test_the_controller_makes_the_folder_its_workers_inherit(monkeypatch):
    monkeypatch.delenv(run_locks.LOCKS, raising=False)
    folder = run_locks.make_folder()
    try:
        assert folder is not None and run_locks.make_folder() is None  # a worker finds the controller's
        child = subprocess.run([sys.executable, "-c", f"import os; print(os.environ[{run_locks.LOCKS!r}])"],
                               capture_output=True, text=True, timeout=60)
        assert child.stdout.strip() == folder
    finally:
        run_locks.remove_folder(folder)
    assert not os.path.exists(folder)
