"""One student's grading inside a grading worker (worker.py): a class for each step, each with one job.

    folders.py        the student's folders in the worker's scratch course: the submission read in, what is kept
    sandboxes.py      the worker's sandboxes: its job slot's uid, the run's hidden folders, a cgroup each
    notebook_run.py   the notebook run: nbgrader's Autograde, the kernel in a sandbox, a second start if it fails
    clean_rerun.py    the clean re-run of one notebook in a confined judge, a second try, and its result
    timing.py         where one student's time went: each stage's seconds, the worker's CPU and peak memory
"""
