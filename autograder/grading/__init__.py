"""Grading: every submission of an assignment, each in a sandbox, scored as plain nbgrader scores it.

The subpackages name the gate they hold or the step they take; each layer imports only the layers below it
(pyproject.toml's import-linter contracts).

    grade.py          `grade`: the trusted parent; finds submissions, skips the graded, publishes results, gradebook
    check.py          `check`: one notebook graded as `grade` grades it, in a throw-away copy of the course
    check_cache.py    what `check` keeps between runs (the course built from its source, keyed by a digest) and
                      matplotlib's font list, which `grade` uses too
    worker.py         one student at a time: the notebook run, the clean re-run, the result (a process of its own)
    student/          one student's grading in a worker, a class per step: folders, sandboxes, the two runs, timing
    worker_setup.py   what a grading worker is told when it starts: made by `grade`, `check` or a Dask task
    execute.py        nbgrader's Execute with the kernel in the sandbox, every way a run can end recorded
    course.py         the nbgrader course on disk: its configuration, its gradebook, the assignment's model
    submissions.py    the submissions: nbgrader's submitted/ folders or a zip; zip_collect's plugins, over intake.py
    intake.py         the one reading of an assignment's LMS downloads: each by its LMS's names, the newest kept
    lms_names.py      the names each LMS gives the files of its download, read by that LMS's own rules
    tempfolders.py    the grader's temporary folders; each one made removes those a killed process left
    walk.py           which files of a submission count: the one walker the copies and the ledger's digest share
    dispatch/         where students are graded: the local pool or a Dask cluster; what a worker may tell the parent
    gate_in/          Gate In: what student code runs in (sandbox, kernel, limits) and what of its output is kept
    gate_beside/      Gate Beside: the clean re-run, each test against the learner's answers alone
    gate_out/         Gate Out: what reaches a person: the feedback page, formgrader, the LMS exports
    scoring/          from the two runs to points: results, findings, the gradebook, the ledger, the class's sheet
"""
