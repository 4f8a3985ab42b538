"""The guard of inherited_signals.py fails the test that leaves a signal ignored or blocked, and only that one.

SIGUSR2 stands for SIGINT here: a suite started in the background by a script runs with SIGINT ignored from the
start (test_leftovers starts its runs with it restored), where ignoring it again would change nothing. The last test
shows that a notebook run (nbtools.execute) keeps an ignored SIGINT ignored, as the guard requires of every test."""

import os

pytest_plugins = ["pytester"]

LEAKS = """
import signal

AT_START = signal.getsignal(signal.SIGUSR2), signal.pthread_sigmask(signal.SIG_BLOCK, [])

def test_ignores_a_signal():
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)

def test_blocks_sigterm():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])

def test_after_them():
    assert (signal.getsignal(signal.SIGUSR2), signal.pthread_sigmask(signal.SIG_BLOCK, [])) == AT_START
"""


def test_a_test_that_leaves_a_signal_ignored_or_blocked_fails_and_the_next_one_finds_it_undone(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    pytester.makepyfile(test_leaks=LEAKS)
    result = pytester.runpytest_subprocess("-p", "inherited_signals", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=2)  # each leaking test passes its body and fails its teardown
    errors = {name: part for name, _, part in (p.partition(" ___") for p in result.stdout.str().split(
        "ERROR at teardown of ")[1:])}
    before, _, after = errors["test_ignores_a_signal"].partition(" -> ")
    assert "'SIGUSR2'" in after.partition("'blocked'")[0] and "'SIGUSR2'" not in before, errors
    before, _, after = errors["test_blocks_sigterm"].partition(" -> ")
    assert "'blocked': ['SIGTERM']" in after and "'SIGTERM'" not in before, errors


def test_the_suite_loads_the_guard(request):
    assert request.config.pluginmanager.has_plugin("inherited_signals")


def test_a_notebook_run_leaves_an_ignored_sigint_ignored(tmp_path):
    """nbclient handles SIGINT while a kernel runs, and asyncio puts it back as Python's own handler, not as it was
    (NotebookClient.async_setup_kernel, loop.remove_signal_handler): in a suite started in the background by a
    script, a notebook run took away the SIGINT ignored that every later process was to inherit. nbtools.execute
    puts it back."""
    import signal

    import nbformat
    import nbtools

    path = tmp_path / "one-cell.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), path)
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        run = nbtools.execute(path)
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    assert nbtools.output_text(run.nb.cells[0]).strip() == "2"
    assert after is signal.SIG_IGN, f"SIGINT was ignored before the notebook ran, and is {after!r} after it"
