"""Gate Beside: what runs next to the learner's code, the clean re-run.

    rerun.py          the clean re-run, driven from the worker: each test judged by the grader's own objects
    clean_runner.py   the learner's side: their answers alone in a sandboxed interpreter (sent in as source)
    public.py         the build of ffn_helpers the learner's side imports: stubs, no code that computes an answer
    rpc.py            the channel between the two sides: bounded plain data only, nothing unpickled or evaluated
    judge.py          where the tests run: a confined child of the worker, computing only the course functions allowed
    course_namespace.py  the course's own cells the tests read, run once per notebook in the worker for its judges
    disclosure.py     what a test's failure tells the student: the mistakes named, a private offering's hidden data
"""
