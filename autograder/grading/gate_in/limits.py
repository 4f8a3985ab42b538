"""What one message of a sandboxed kernel, and one output it makes, may cost the grader: every such bound, here.

The channels' byte budget (channels.BUDGET) bounds the bytes a kernel sends in a run. Bytes are not what a message
costs: an empty output costs the grader as much to read, keep and write out as a kilobyte of text, and a message's
JSON can grow 25 times as it is decoded. Each bound below is counted where it can first be counted: in the relay,
before ZeroMQ keeps anything (channels.py); in the grader's kernel client, before a message is decoded
(messages.py); in the notebook run, before an output is kept (outputs.py). The grader's limits that modules
outside gate_in read too (a file's size, a message's length, a student's time) are autograder/limits.py's.
"""

from ...limits import MiB

# ---- one message (the relay counts it; the client checks it again before decoding: messages.py) --------------------
# Bytes of one message, all its frames. One print is one message (ipykernel sends a write whole), and a print of
# 100 MB by mistake is graded as plain nbgrader grades it (the adversarial suite's `flood`): the bound lies above
# that, at half the run's budget.
MESSAGE_BYTES = 128 * MiB
# Frames of one message. A Jupyter message is its routing frames, a delimiter, a signature, four JSON parts and
# the binary buffers of a widget's arrays: a dozen or so. ZeroMQ keeps 64 bytes per frame whatever its size, and
# pyzmq a bytes object: a million empty frames would be 100 MiB from 2 MB on the wire.
MESSAGE_FRAMES = 256

# ---- what a message may become when it is decoded (the client, messages.py) --------------------------------------
# JSON values (objects, arrays, strings, numbers, keys) in one message's four JSON parts together. A decoded value
# costs Python 24 to 200 bytes: this many stay under 200 MiB. Honest messages hold a few dozen; a widget's state
# or a plot's spec, thousands.
DECODE_VALUES = 1_000_000
# Nesting of JSON arrays and objects in one part. Jupyter's own parts nest three deep and a Vega-Lite spec about
# ten; what the grader reads of a message is walked recursively afterwards (nbformat's validation, among others).
DECODE_DEPTH = 64
# Bytes a message's text may take once decoded: its JSON as text, then its strings as values, two copies at up to
# 4 bytes a character (one character outside the BMP makes Python store the whole string at 4 bytes each). An
# ASCII message of MESSAGE_BYTES fits; reading one message grows the worker by about this much at most (its
# bytes are freed as each part is decoded: messages.read_json).
DECODE_BYTES = 256 * MiB

# ---- outputs a notebook run keeps (outputs.py; SandboxExecute's settings of the same names default to these) -------
# Characters of output kept per cell and per notebook, errors included (SandboxExecute's max_output_bytes and
# max_notebook_output_bytes): a page of text many times over, and the whole notebook a person can still open.
CELL_OUTPUT_CHARS = 1_000_000
NOTEBOOK_OUTPUT_CHARS = 5_000_000
# Characters an output counts for at least, however little it holds: an empty display_data still takes about this
# much of the notebook's JSON (86 characters, as nbformat writes it), and costs nbgrader, the feedback page and
# formgrader a step each.
OUTPUT_FLOOR = 100
# Outputs kept per cell and per notebook. After the notebook run each kept output costs the grader about 0.3 ms
# (nbgrader's preprocessors, the autograded notebook, the feedback page): 5,000 cost under 2 s. An honest cell
# displays a few; a training loop that displays each epoch, a few hundred.
CELL_OUTPUTS = 1_000
NOTEBOOK_OUTPUTS = 5_000

# ---- what is kept of one error (outputs.ErrorCut; SandboxExecute's max_error_* and max_traceback_* default to these)
# Characters of its name and of its message, lines and characters of its traceback: the end of the traceback and the
# message decide what a learner reads; a recursion's thousand identical frames do not.
ERROR_NAME_CHARS = 200
ERROR_VALUE_CHARS = 4_000
TRACEBACK_LINES = 100
TRACEBACK_CHARS = 20_000

# ---- time ----------------------------------------------------------------------------------------------------------
# Seconds past a cell's timeout after which the watchdog kills the kernel's sandbox, whatever state its channels are
# in (SandboxExecute.hard_grace): nbclient's own interrupt and iopub wait come first, and take a few seconds.
HARD_GRACE_SECONDS = 10
