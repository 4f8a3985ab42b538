"""Every test leaves the test process's signal handling, as a child process inherits it, as it found it.

A process started with a signal ignored (SIG_IGN) or blocked keeps it so through fork and exec, and Python installs
no KeyboardInterrupt handler for a SIGINT it starts with ignored: a `grade` that a later test starts as from a
terminal would then never take its Ctrl-C. (A suite started in the background by a script starts with SIGINT
ignored already, which is why test_leftovers starts its runs as an interactive shell would.) A Python handler is
not inherited (it becomes the default), so only the ignored and the blocked signals are compared. A change fails
the test that made it (or, made by a fixture, the next test) and is undone once reported, so that one test fails,
not every test after it.
"""

import signal

import pytest

STARTED = pytest.StashKey[tuple]()  # this test process's signal handling as it started (_handling)
SIGNALS = [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP)]


def pytest_configure(config):
    config.stash[STARTED] = _handling()


def _handling():
    """This process's handler of each signal, and the signals its main thread (the tests') blocks."""
    return {s: signal.getsignal(s) for s in SIGNALS}, signal.pthread_sigmask(signal.SIG_BLOCK, [])


def inherited(handling):
    """What a process started under `handling` inherits of it: the signals ignored, and those blocked."""
    handlers, blocked = handling
    return {"ignored": sorted(s.name for s, h in handlers.items() if h is signal.SIG_IGN),
            "blocked": sorted(s.name for s in blocked)}


def _restore(handling):
    handlers, blocked = handling
    for s, handler in handlers.items():
        if handler is not None and signal.getsignal(s) is not handler:  # None: set outside Python
            signal.signal(s, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@pytest.fixture(autouse=True)
def _signal_handling_left_as_found(request):
    started, before = request.config.stash[STARTED], _handling()
    if inherited(before) != inherited(started):
        _restore(started)
        pytest.fail(f"since this test process started, what its children inherit of its signal handling changed: "
                    f"{inherited(started)} -> {inherited(before)} (a fixture set up for this test, or one torn "
                    f"down after an earlier test)", pytrace=False)
    yield
    after = _handling()
    if inherited(after) != inherited(before):
        _restore(before)
        pytest.fail(f"this test changed what the test process's children inherit of its signal handling: "
                    f"{inherited(before)} -> {inherited(after)}", pytrace=False)
