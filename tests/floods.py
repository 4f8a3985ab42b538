"""A kernel that floods one of its channels, graded by `python -m autograder check`, with the worker's peak memory.

`check` grades exactly as `grade` does, and in its own process: that process is the grading worker. It runs here
under a wrapper that may lower the channels' budget (gate_in/channels.py) and writes the process's peak resident
memory (VmHWM) when it exits. Used by tests/test_channel_budget.py and benchmarks/bench_channels.py.
"""

import json
import subprocess
import sys

import nbformat
import nbtools

MiB = 1024 * 1024
ASSIGNMENT = "02_forward_pass"

# Each writes `count` messages of `size` bytes on one channel, as student code can from inside its kernel.
FLOODS = {
    # Straight to the grader's stdin socket, which nothing reads (nbgrader allows no input).
    "stdin": """k = get_ipython().kernel
ident = k._parent_ident["shell"]
ident = list(ident) if isinstance(ident, (list, tuple)) else [ident]
frame = b"x" * {size}
for _ in range({count}):
    k.stdin_socket.send_multipart(ident + [frame], copy=False)
import time
time.sleep({wait})  # the sends go out from ZeroMQ's own thread: the budget stops the kernel here
""",
    # Outputs the grader reads and then drops (each far over the per-cell output limit).
    "iopub": """from IPython.display import display
text = "x" * {size}
for _ in range({count}):
    display({{"text/plain": text}}, raw=True)
""",
    # The cell's execute_reply, carrying a payload (as a pager's text would).
    "shell": """for _ in range({count}):
    get_ipython().payload_manager.write_payload({{"source": "page", "data": {{"text/plain": "x" * {size}}},
                                                   "start": 0}})
""",
}

# Messages that cost the grader more than they weigh (issue 51), sent through the kernel's own session: validly
# signed, as student code can. {body} is the loop's body; it runs for {seconds} s and {at_least} times at least
# (once when both are 0): the time keeps a fast machine's flood long, the count a busy machine's flood big.
_SIGNED = """import time
k = get_ipython().kernel
parent = k.get_parent("shell")
send = k.session.send
end, sent = time.monotonic() + {seconds}, 0
while True:
{body}
    sent += 1
    if sent >= {at_least} and time.monotonic() >= end:
        break
"""
# Where each channel's messages go from inside the kernel (stdin and shell: to the grader's socket by its identity).
_TO = {"iopub": "k.iopub_socket, {type!r}, {content}, parent=parent",
       "shell": "k.shell_stream, {type!r}, {content}, parent=parent, ident=k._parent_ident['shell']",
       "stdin": "k.stdin_socket, {type!r}, {content}, parent=parent, ident=k._parent_ident['shell']"}


def signed(msg_type, content, seconds=0, channel="iopub", metadata=None, at_least=0):
    """The source of a cell that sends validly signed `msg_type` messages holding `content` (a Python expression:
    a dict, or bytes taken as the JSON of the content) on `channel`, for `seconds` s and `at_least` messages
    (both 0: one message)."""
    call = _TO[channel].format(type=msg_type, content=content)
    if metadata is not None:
        call += f", metadata={metadata}"
    return _SIGNED.format(seconds=seconds, at_least=at_least, body=f"    send({call})")


def empty_outputs(seconds, at_least=0):
    """The issue's first flood: display_data with no data at all, as fast as the kernel sends them, for `seconds` s
    and `at_least` messages."""
    return signed("display_data", '{"data": {}, "metadata": {}}', seconds, at_least=at_least)


def published_empty_outputs(seconds):
    """The same flood through IPython's public API: publish_display_data({})."""
    return ("import time\nfrom IPython.display import publish_display_data\n"
            f"end = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    publish_display_data({{}})\n")


def objects(count, channel="iopub"):
    """The issue's second flood: one message whose JSON is `count` empty objects ([{},{},...], 3 bytes each)."""
    return signed("display_data", f"b'{{\"data\": {{\"application/json\": [' + b'{{}},' * {count} + b'{{}}]}}}}'",
                  channel=channel) + "time.sleep(20)  # the kernel is stopped here\n"


# What a flood may add to a grading worker's peak memory, in budgets: the budget's bytes in ZeroMQ's queues, and
# at most one message of up to the budget decoded (pyzmq's copy, then Python's str of its JSON, up to 4 bytes a
# character), with room to spare.
GROWTH_IN_BUDGETS = 8


def worker_bound(unflooded, budget):
    """The peak a grading worker may reach under a flood: its peak on the same notebook unflooded, and the growth
    the budget allows."""
    return unflooded + GROWTH_IN_BUDGETS * budget


# Runs `python -m autograder ARGS` with the budget lowered to BUDGET bytes (0: as configured) and writes its
# peak memory to OUT. Without channels.py (a grader from before the budget) it runs as it is.
_WORKER = r"""
import atexit, json, runpy, sys
budget, out = int(sys.argv[1]), sys.argv[2]
try:
    from autograder.grading.gate_in import channels
except ImportError:
    channels = None
if channels is not None and budget:
    channels.BUDGET = budget

def _peak():
    with open("/proc/self/status", encoding="ascii") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    with open(out, "w", encoding="ascii") as f:
        json.dump({"peak": kib * 1024}, f)

atexit.register(_peak)
sys.argv = ["autograder", *sys.argv[3:]]
runpy.run_module("autograder", run_name="__main__", alter_sys=True)
"""


def flood(channel, size, count, wait=20):
    """The source of a cell that sends `count` messages of `size` bytes on `channel` (stdin: then waits `wait` s,
    20 by default, time enough for the budget to stop the kernel whatever the load)."""
    return FLOODS[channel].format(size=size, count=count, wait=wait)


def graded(folder, edit=None, budget=0, cell_timeout=30, timing=None):
    """(check's JSON result, the grading worker's peak resident bytes) of 02's completed learner notebook,
    its x_try cell replaced by `edit`, with the channels' budget lowered to `budget` bytes (0: as configured);
    check's record of its stages written to the file `timing` if given (check.TIMING_ENV)."""
    from autograder.grading.check import TIMING_ENV

    nb = nbtools.completed_learner(ASSIGNMENT)
    if edit is not None:
        edited = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.startswith("x_try"))
        nb.cells[edited].source = edit
    path, peak = folder / f"{ASSIGNMENT}.ipynb", folder / "peak.json"
    nbformat.write(nb, path)
    run = subprocess.run([sys.executable, "-c", _WORKER, str(budget), str(peak), "check", str(path), "--json",
                          "--cell-timeout", str(cell_timeout), "--feedback", str(folder / "feedback.html")],
                         capture_output=True, text=True, timeout=900,
                         env=dict(nbtools.nbgrader_env(), **({TIMING_ENV: str(timing)} if timing else {})))
    if run.returncode not in (0, 1):
        raise RuntimeError(f"check could not grade ({run.returncode}):\n{run.stdout[-2000:]}{run.stderr[-3000:]}")
    return json.loads(run.stdout), json.loads(peak.read_text(encoding="ascii"))["peak"]


def messages(result):
    """Every message of every test cell of a check's JSON result."""
    return [cell.get("message", "") for nb in result["notebooks"] for cell in nb["cells"]]
