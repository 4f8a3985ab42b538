"""Grading: every submission of an assignment, each in a sandbox, scored as plain nbgrader scores it.

    grade.py       the command: finds submissions, runs a pool of workers, writes results and the gradebook
    check.py       the command for one notebook, in a throw-away copy of the course
    worker.py      one student: copy in, run the notebook, the clean re-run, combine (a process of its own)
    execute.py, kernel.py, sandbox.py, confine.py   the notebook run: a kernel inside bubblewrap, limits
    rerun.py, clean_runner.py, rpc.py, judge.py     the clean re-run: each test against only the answers
    public.py      the clean re-run's ffn_helpers: stubs the grader computes, no answer-computing code
    integrity.py   static findings on the submitted cells; results.py: the two runs into one result
                   (the records of autograder/schema.py)
    feedback.py, templates/feedback.html, gradebook.py   what the student sees, what formgrader shows
    course.py, submissions.py, progress.py          the course on disk, the submissions, a progress bar
    intake.py, lms_names.py   LMS downloads: each read by its own LMS's names, the newest file kept
    ledger.py      what is already graded (a submission's files and the course version), skipped next time
    classbook.py, exports.py   the whole class from the gradebook: grades.csv, and `export` for Canvas, Moodle,
                   Blackboard
    cluster.py     `grade --cluster`: the class on a Dask cluster (cluster_task.py runs on its workers,
                   cluster_reply.py checks what they send, dask_guard.py: no pickle from them is ever loaded)
"""
