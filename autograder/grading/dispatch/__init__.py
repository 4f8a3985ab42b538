"""Where students are graded: the local pool of workers or a Dask cluster, and what a worker may tell the parent.

    driver.py         the batch through a backend, then each student whose clean re-run could not finish, alone
    pool.py           the local backend: worker processes on this machine, one student at a time each
    cluster.py        `grade --cluster`: the Dask backend, with one writer, the instructor's process
    cluster_task.py   what runs on a Dask worker: one submission through the grading worker, plain data back
    cluster_reply.py  what a Dask task sent back, checked as data and laid out as a local worker's reply
    dask_guard.py     nothing from the cluster is ever unpickled in the instructor's process: msgpack's data only
    replies.py        the one reader of every worker's reply, whichever backend it came from
    progress.py       the progress line on stderr: who is being graded, where in it, for how long
    position.py       where a worker is in a student's grading, as the four small integers it may tell
"""
