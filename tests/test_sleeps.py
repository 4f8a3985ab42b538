"""No test sleeps to wait for something it could observe (issue 50): each sleep left in tests/ is listed here with the
reason it is a real duration; and no test starts an event loop in an xdist worker's main thread.

A test waits for the state it needs (a FIFO, a line of a log, a process's state, a socket's) with a deadline that
only catches a hang. What may sleep: the polling interval of such a deadline loop, a timeout or a stuck call under
test, or a window in which something must not happen. A student's sleeping code is a string, not a call of tests/,
and is not listed. The scan reads every module of tests/ with ast and finds each call of a function named `sleep`
(time.sleep, asyncio.sleep, a bare imported sleep) or `wait_for_timeout` (Playwright's); a new one fails here until
it is listed with its reason, and a listed one that is gone fails too, so that the table stays the list of what
sleeps.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

POLL = "polling interval of a loop that waits for a state, with a deadline"

# (module under tests/, enclosing function, the call as written): why it is a real duration
ALLOWED = {
    ("browser/conftest.py", "LabServer._wait_ready", "time.sleep(0.3)"):
        POLL + ": JupyterLab answering api/status",
    ("hub/test_hub.py", "_remove_users", "time.sleep(0.05)"):
        POLL + ": the test accounts' processes ended after a signal",
    ("hub/test_hub.py", "Hub.start", "time.sleep(0.5)"):
        POLL + ": the hub's API answering",
    ("hub/test_hub.py", "_student_submits", "time.sleep(0.5)"):
        POLL + ": the student's answers saved to the notebook file",
    ("hub/test_hub.py", "_student_fetches_feedback", "time.sleep(0.5)"):
        POLL + ": the feedback page written to the student's home",
    ("hub/test_hub.py", "test_a_class_on_jupyterhub", "time.sleep(1)"):
        POLL + ": the instructor's server listing the course",
    ("test_channel_budget.py", "_wait_until", "time.sleep(0.01)"):
        POLL,
    ("test_channel_budget.py", "test_past_the_budget_the_relay_forwards_nothing_more_and_names_the_channel",
     "time.sleep(0.01)"):
        POLL + ": the relay's call that stops the kernel",
    ("test_channel_budget.py", "test_what_the_grader_does_not_read_waits_in_the_kernel", "time.sleep(0.01)"):
        "a timeout under test: the kernel's non-blocking sends are retried for 2 s, and what the relay took in "
        "within them is bounded",
    ("test_channel_budget.py", "test_once_zeromq_closes_its_end_what_the_kernel_sends_still_counts",
     "time.sleep(0.01)"):
        POLL + ": the relay's call that stops the kernel",
    ("test_channel_budget.py", "test_once_zeromq_closes_its_end_with_bytes_waiting_for_it_the_kernel_still_counts",
     "time.sleep(0.01)"):
        POLL + ": the relay's call that stops the kernel",
    ("test_feedback_safety.py", "test_a_stuck_cell_is_ended_at_its_hard_deadline.blocking", "time.sleep(0.05)"):
        "a stuck call under test: nbclient's event loop blocked until the watchdog kills the kernel",
    ("test_feedback_safety.py", "test_a_stuck_cell_is_ended_at_its_hard_deadline.forever", "asyncio.sleep(3600)"):
        "a stuck call under test: an await that never returns, which the hard deadline must cancel",
    ("test_grader_units.py", "test_a_watchdog_kills_at_the_deadline_without_a_kernel.run", "asyncio.sleep(3600)"):
        "a stuck call under test: an await that never returns, which the watchdog's deadline must cancel",
    ("test_formgrader.py", "_wait", "time.sleep(0.5)"):
        POLL + ": the instructor's JupyterLab answering",
    ("browser/test_formgrader_safety.py", "ran", "page.wait_for_timeout(1500)"):
        "a window in which something must not happen: a payload's script, a toggle's or a timer's handler, may "
        "run after the load event (a control page shows the check sees one that does)",
    ("test_feedback_safety.py", "test_no_script_runs_when_the_pages_are_opened_in_chromium",
     "page.wait_for_timeout(1500)"):
        "a window in which something must not happen: a payload's script, a toggle's or a timer's handler, may "
        "run after the load event (the control page shows the check sees one that does)",
    ("test_grader_adversarial.py", "test_gradebook_intact_and_matches_results", "time.sleep(0.05)"):
        POLL + ": each sleeper seen during the batch gone",
    ("test_grader_cluster.py", "_Killer.run", "time.sleep(0.5)"):
        POLL + " (the test's): a Dask worker grading a student, to kill it",
    ("test_grader_cluster.py", "test_running_names_the_tasks_a_worker_runs_not_those_queued_behind_them",
     "time.sleep(0.01)"):
        POLL + ": the tasks sent, one seen running, then running a second",
    ("test_grader_progress.py", "_wait_for", "time.sleep(0.01)"):
        POLL,
    ("test_grader_units.py", "test_leftover_sandbox_processes_are_cleared", "time.sleep(0.01)"):
        POLL + ": the sandbox's process running as its uid",
    ("test_kernel.py", "test_a_kernel_that_relinks_its_sockets_reaches_no_other_socket_of_the_machine.run",
     "asyncio.sleep(3)"):
        "a window in which something must not happen: ZeroMQ reconnects every 0.1 s, about 30 tries, none of "
        "which may reach the machine's socket (channels it never reconnects leave no state to wait for)",
    ("test_message_floods.py", "test_a_connection_greeting_as_zmtp_2_is_not_forwarded_but_counted",
     "time.sleep(0.01)"):
        POLL + ": the relay counting the bytes sent",
    ("test_sandbox_attacks.py", "test_the_grader_opens_only_the_sockets_the_sandbox_bound_and_keeps_to_them",
     "time.sleep(0.01)"):
        POLL + ": the sandbox's socket bound",
    ("test_sandbox_attacks.py", "test_the_sandbox_root_found_is_the_sandboxs_not_the_machines", "time.sleep(0.01)"):
        POLL + ": the sandbox's marker file in its /tmp",
    ("test_zygote.py", "_ended", "time.sleep(0.01)"):
        POLL + ": a process ended",
    ("test_zygote.py", "_settled", "time.sleep(0.01)"):
        POLL + ": processes ended or zombies",
    ("test_zygote.py", "_failures.killed_keeper", "time.sleep(0.005)"):
        POLL + " (no deadline of its own: the test's timeout is it): a killed keeper a zombie or gone",
}


def calls(named, root=TESTS):
    """{(module, enclosing function, call): line} of every call of a function named `named` under `root`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()

        def visit(node, scope, module=module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope = (*scope, node.name)
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                if name == named:
                    found[(module, ".".join(scope), ast.unparse(node))] = node.lineno
            for child in ast.iter_child_nodes(node):
                visit(child, scope)

        visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), ())
    return found


def sleeps(root=TESTS):
    """{(module, enclosing function, call): line} of every call of a function named `sleep` under `root`, and of
    Playwright's `wait_for_timeout`, the browser's sleep."""
    return {**calls("sleep", root), **calls("wait_for_timeout", root)}


def test_every_sleep_in_the_tests_is_listed_with_its_reason():
    unlisted = {f"{m}:{line} in {f or '<module>'}: {call}" for (m, f, call), line in sleeps().items()
                if (m, f, call) not in ALLOWED}
    assert not unlisted, ("a test sleeps where it could wait for the state it needs (with a deadline); if the "
                          "duration is real, list it in ALLOWED with why: " + "; ".join(sorted(unlisted)))


def test_every_listed_sleep_is_still_there():
    assert not set(ALLOWED) - set(sleeps()), sorted(set(ALLOWED) - set(sleeps()))


def test_each_reason_says_something():
    assert all(len(why) > 20 for why in ALLOWED.values())


def test_the_scan_finds_each_way_of_sleeping(tmp_path):
    (tmp_path / "t.py").write_text(
        "import asyncio, time\nfrom time import sleep\n\n"
        "def f():\n    time.sleep(1)\n\n"
        "class C:\n    async def g(self):\n        await asyncio.sleep(2)\n\n"
        "sleep(3)\nSTUDENT = 'time.sleep(4)'\npage.wait_for_timeout(5)\n", encoding="utf-8")
    assert sleeps(tmp_path) == {("t.py", "f", "time.sleep(1)"): 5, ("t.py", "C.g", "asyncio.sleep(2)"): 9,
                                ("t.py", "", "sleep(3)"): 11, ("t.py", "", "page.wait_for_timeout(5)"): 13}


def test_a_coroutine_runs_only_in_a_thread_of_its_own():
    """asyncio.run in a worker's main thread fails once xdist has placed a browser test before it on that worker
    (Playwright's loop stays marked running there: tests/loops.py); it passed or failed by the tests' order, and
    failed CI. Every test runs its coroutines through loops.run."""
    direct = {f"{m}:{line} in {f}: {call}" for (m, f, call), line in calls("run").items()
              if call.startswith("asyncio.run(") and m != "loops.py"}
    assert not direct, "run it with tests/loops.py's run(coroutine), not asyncio.run: " + "; ".join(sorted(direct))
