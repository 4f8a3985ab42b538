"""The guard of inherited_signals.py fails the test that leaves a signal ignored, and only that one."""

import os

pytest_plugins = ["pytester"]

LEAKS = """
import signal

def test_ignores_ctrl_c():
    signal.signal(signal.SIGINT, signal.SIG_IGN)

def test_blocks_sigterm():
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])

def test_after_them():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
"""


def test_a_test_that_leaves_a_signal_ignored_or_blocked_fails_and_the_next_one_finds_it_undone(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    pytester.makepyfile(test_leaks=LEAKS)
    result = pytester.runpytest_subprocess("-p", "inherited_signals", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=2)  # each leaking test passes its body and fails its teardown
    errors = {name: part for name, _, part in (p.partition(" ___") for p in result.stdout.str().split(
        "ERROR at teardown of ")[1:])}
    before, _, after = errors["test_ignores_ctrl_c"].partition(" -> ")
    assert "'SIGINT'" in after.partition("'blocked'")[0] and "'SIGINT'" not in before, errors
    before, _, after = errors["test_blocks_sigterm"].partition(" -> ")
    assert "'blocked': ['SIGTERM']" in after and "'SIGTERM'" not in before, errors


def test_the_suite_loads_the_guard(request):
    assert request.config.pluginmanager.has_plugin("inherited_signals")
