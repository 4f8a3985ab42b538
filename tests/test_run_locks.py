"""The run's locks for sandboxed grading (run_locks.py): a batch of several jobs holds every core, and no other process
of the run grades beside it; a batch of one job holds one core, so another one-job batch runs beside it but not a
batch of more; re-entrant within one thread; free again once the batch is over, however it ended."""

import os
import subprocess
import sys

import pytest
import run_locks

TRY = ("import fcntl, sys\nwith open(sys.argv[1], 'a') as f:\n"
       "    try:\n        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
       "    except BlockingIOError:\n        sys.exit(3)\n")


def _free_cores(folder):
    """How many of the run's cores another process of the run could take now."""
    runs = [subprocess.run([sys.executable, "-c", TRY, str(folder / f"core-{i}.lock")], timeout=60)
            for i in range(run_locks.cores())]
    return sum(run.returncode == 0 for run in runs)


def _another_worker_could_take_it(folder):
    """Whether another process could start a batch of several jobs: every core free."""
    return _free_cores(folder) == run_locks.cores()


def test_one_batch_at_a_time_across_the_runs_processes(tmp_path, monkeypatch):
    monkeypatch.setenv(run_locks.LOCKS, str(tmp_path))
    monkeypatch.setattr(run_locks, "cores", lambda: 2)
    with run_locks.one_batch():
        assert not _another_worker_could_take_it(tmp_path)
        with run_locks.one_batch():  # run_batch inside a test that holds it already
            assert not _another_worker_could_take_it(tmp_path)
        assert not _another_worker_could_take_it(tmp_path)
    assert _another_worker_could_take_it(tmp_path)
    with pytest.raises(RuntimeError), run_locks.one_batch():
        raise RuntimeError("a batch that fails")
    assert _another_worker_could_take_it(tmp_path)


def test_one_job_batches_share_the_cores_and_a_batch_of_more_waits_for_all(tmp_path, monkeypatch):
    monkeypatch.setenv(run_locks.LOCKS, str(tmp_path))
    monkeypatch.setattr(run_locks, "cores", lambda: 2)
    with run_locks.one_batch(jobs=1):
        assert _free_cores(tmp_path) == 1  # another worker's one-job batch runs beside this one
        assert not _another_worker_could_take_it(tmp_path)  # a batch of two jobs would oversubscribe: it waits
    with run_locks.one_batch(jobs=2):
        assert _free_cores(tmp_path) == 0
    assert _free_cores(tmp_path) == 2


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


def test_a_wait_for_the_locks_is_recorded_with_the_test_that_waited(tmp_path, monkeypatch):
    """The run's end lists the waits of a second or more (conftest.py): a worker that waits leaves a core idle."""
    monkeypatch.setenv(run_locks.LOCKS, str(tmp_path))
    monkeypatch.setattr(run_locks, "cores", lambda: 2)
    clock = iter([100.0, 103.5, 200.0, 200.4])  # asked, then held: 3.5 s; then 0.4 s, too short to list
    monkeypatch.setattr(run_locks.time, "monotonic", lambda: next(clock))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_waits (call)")
    with run_locks.one_batch():
        pass
    with run_locks.one_batch(jobs=1):
        pass
    assert run_locks.waits(tmp_path) == [(3.5, "tests/test_x.py::test_waits")]
    assert run_locks.waits(tmp_path / "nowhere") == []
