"""The grading kernel (gate_in/kernel.py): what the grader relies on, each shown on a kernel started in the sandbox.

The attacks these guarantees stop (junk written to the kernel's sockets, a kernel that swallows interrupts)
are graded in test_grader_hostile.py and test_grader_adversarial.py.
"""

import asyncio
import errno
import os
import queue
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import loops
import pytest
import zmq
from jupyter_client.channels import HBChannel

from autograder.grading.gate_in import channels, kernel, sandbox

pytestmark = pytest.mark.sandbox


def _manager(tmp_path, **limits):
    """A kernel's sandbox as the grading worker makes one: no folder of the machine writable, its working folder
    in its own /tmp (the connection file in `runtime` is shown to it read-only, kernel.py)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    box = sandbox.Sandbox(cwd="/tmp/work", uid=sandbox.slot_uid(9),
                          limits=sandbox.Limits(**limits))
    km = kernel.SandboxedKernelManager(kernel_name="python3", sandbox_json=kernel.sandbox_to_json(box, runtime))
    return box, runtime, km


async def _printed(kc, code):
    out = []
    await kc.execute_interactive(code, timeout=60, output_hook=lambda msg: out.append(msg["content"].get("text", "")))
    return "".join(out).strip()


async def _interrupted(km, kc):
    """Interrupt a cell that sleeps: the reply to it."""
    # Short sleeps: ipykernel's interrupt is a SIGINT the kernel sends itself, which may land on its control
    # thread; the main thread then sees it only once its sleep returns (in a CI run, a single 120 s sleep outlived
    # the wait for the reply).
    msg_id = kc.execute("import time\nprint('asleep', flush=True)\nwhile True:\n    time.sleep(0.1)")
    # Until the learner's code runs: `execute_input` comes before it does, and an interrupt that arrives
    # in between would be spent on the kernel's own preparations, leaving the sleep to run out.
    while True:
        msg = await kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream" \
                and "asleep" in msg["content"].get("text", ""):
            break
    await km.interrupt_kernel()
    reply = await kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    return reply["content"]


def test_a_kernel_starts_in_the_sandbox_with_every_guarantee(tmp_path, monkeypatch):
    box, runtime, km = _manager(tmp_path)
    launched = []
    launch = kernel.SandboxProvisioner.launch_kernel

    async def recorded_launch(self, cmd, **kwargs):
        launched.append((cmd, kwargs, os.stat(self.parent.connection_file).st_uid))
        return await launch(self, cmd, **kwargs)

    monkeypatch.setattr(kernel.SandboxProvisioner, "launch_kernel", recorded_launch)

    async def run():
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            uid = await _printed(kc, "import os; print(os.getuid())")
            debugger = await _printed(kc, "import sys; print(sys.modules.get('debugpy'), 'ipykernel' in sys.modules)")
            heartbeat = [t for t in threading.enumerate() if isinstance(t, HBChannel)]
            return uid, debugger, heartbeat, await _interrupted(km, kc)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    uid, debugger, heartbeat, interrupted = loops.run(run())

    (cmd, kwargs, file_owner), = launched
    prefix = box.with_(readonly=(km.connection_file,)).command([])  # the kernel sees its connection file alone
    # prlimit, then bwrap with an empty environment of its own (its pid 1 in the sandbox could be read), then bwrap's
    assert prefix[0] == "prlimit" and cmd[:len(prefix)] == prefix
    assert prefix[prefix.index("--") + 1:][:3] == ["env", "-i", shutil.which("bwrap")]
    # ipykernel_launcher's own steps, without importing the debugger (a tenth of a second of every start)
    assert cmd[len(prefix):][:5] == [sys.executable, "-c", kernel._LAUNCH_WITHOUT_DEBUGGER, "-f",
                                     os.path.realpath(km.connection_file)]
    assert debugger == "None True"
    assert kwargs["stdout"] is subprocess.DEVNULL and kwargs["stderr"] is subprocess.DEVNULL
    assert isinstance(km.provisioner, kernel.SandboxProvisioner)
    assert km.transport == "ipc" and Path(km.ip).parent == runtime and Path(km.connection_file).parent == runtime
    assert not list(runtime.glob("k-*"))  # the links to the kernel's sockets: removed at shutdown
    assert not Path(km.connection_file).exists()  # removed at shutdown
    if box.uid is not None:  # grading as root: the kernel runs as the slot's user and reads its own connection file
        assert (uid, file_owner) == (str(box.uid), box.uid)
    assert km.kernel_spec.interrupt_mode == "message"  # a signal would reach prlimit, not the kernel
    assert (interrupted["status"], interrupted["ename"]) == ("error", "KeyboardInterrupt")
    assert heartbeat == []


def test_a_message_the_kernel_does_not_take_is_given_up_after_the_send_timeout(tmp_path):
    _, _, km = _manager(tmp_path)
    sock = km.context.socket(zmq.DEALER)  # the control channel's kind of socket, from the manager's context
    try:
        assert sock.getsockopt(zmq.SNDTIMEO) == int(km.control_send_timeout * 1000)
        sock.bind(f"ipc://{tmp_path}/nobody")  # no peer: a send waits for one
        started = time.monotonic()
        assert km.session.send(sock, "interrupt_request", content={}) is None  # given up, with a warning
        assert time.monotonic() - started >= km.control_send_timeout * 0.9  # it did wait for the kernel
    finally:
        sock.close(linger=0)
        km.context.destroy(linger=0)


def test_no_kernel_starts_unless_the_sandbox_provisioner_is_registered(tmp_path, monkeypatch):
    _, _, km = _manager(tmp_path)
    monkeypatch.setattr(kernel, "entry_points", lambda **selection: [])
    expected = re.escape(f"registered as '{kernel.__name__}:SandboxProvisioner'")
    with pytest.raises(RuntimeError, match=f"{expected} .*; found nothing\\. Install the course"):
        loops.run(km.start_kernel())
    assert km.provisioner is None
    km.context.destroy(linger=0)


def test_only_ipykernels_launcher_is_replaced():
    """Another kernel spec's command (a wrapper, a launcher of its own) starts as the spec says."""
    assert kernel.without_debugger(["py", "-m", "ipykernel_launcher", "-f", "c.json"]) == [
        "py", "-c", kernel._LAUNCH_WITHOUT_DEBUGGER, "-f", "c.json"]
    for cmd in (["py", "-m", "ipykernel", "-f", "c.json"], ["wrapper", "py", "-m", "ipykernel_launcher"], ["py"]):
        assert kernel.without_debugger(cmd) == cmd


class _FakeChannel:
    def __init__(self, messages):
        self.messages, self.timeouts = list(messages), []

    async def get_msg(self, timeout=None):
        self.timeouts.append(timeout)
        if not self.messages:
            raise queue.Empty
        return self.messages.pop(0)


class _FakeClient:
    """What SandboxedKernelClient.wait_for_ready uses of a client: a kernel that answers at once."""

    def __init__(self, shell, iopub, alive=True):
        self.shell_channel, self.iopub_channel, self.alive = _FakeChannel(shell), _FakeChannel(iopub), alive
        self.requests, self.handled = 0, []

    def kernel_info(self):
        self.requests += 1

    async def is_alive(self):
        return self.alive

    def _handle_kernel_info_reply(self, msg):
        self.handled.append(msg)


def test_ready_once_iopub_speaks_without_waiting_for_it_to_fall_silent():
    """jupyter_client's wait ends with 0.2 s of waiting for IOPub to be silent; the grader's drains what is there."""
    reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": "5.4"}}
    status = {"msg_type": "status", "content": {"execution_state": "busy"}}
    client = _FakeClient([reply], [{"msg_type": "iopub_welcome"}, status])
    loops.run(kernel.SandboxedKernelClient.wait_for_ready(client, timeout=5))
    assert client.requests == 1 and client.handled == [reply]
    assert client.iopub_channel.timeouts == [0.2, 0, 0]  # connected?, then only what has already arrived
    assert client.iopub_channel.messages == []


def test_ready_asks_again_until_iopub_is_connected_and_fails_clearly():
    reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": "5.4"}}
    client = _FakeClient([reply, reply], [])  # IOPub silent: not connected yet, ask again
    with pytest.raises(RuntimeError, match="Kernel didn't respond in 0 seconds"):
        loops.run(kernel.SandboxedKernelClient.wait_for_ready(client, timeout=0))
    assert client.handled == []
    dead = _FakeClient([], [], alive=False)
    with pytest.raises(RuntimeError, match="Kernel died before replying to kernel_info"):
        loops.run(kernel.SandboxedKernelClient.wait_for_ready(dead, timeout=5))


def test_a_kernel_that_keeps_publishing_does_not_hold_the_grader_at_its_start():
    reply = {"msg_type": "kernel_info_reply", "content": {"protocol_version": "5.4"}}
    status = {"msg_type": "status", "content": {"execution_state": "busy"}}
    client = _FakeClient([reply], [status] * 1000)
    loops.run(kernel.SandboxedKernelClient.wait_for_ready(client, timeout=5))
    assert len(client.iopub_channel.timeouts) == 101 and len(client.iopub_channel.messages) == 899


async def _started(km):
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    return kc


def test_the_grader_connects_to_the_sockets_the_kernel_bound_by_descriptor_only(tmp_path):
    """Each channel goes through the relay's socket in the runtime folder to /proc/self/fd/N: the socket as the
    kernel bound it, opened through the sandbox's root before any student code ran (no name is looked up again).
    Every socket the grader opens to the kernel, the manager's and the client's, refuses a frame over the
    channels' budget and queues few messages."""
    _, runtime, km = _manager(tmp_path)

    async def run():
        kc = await _started(km)
        try:
            relayed = {p.name: stat.S_ISSOCK(p.lstat().st_mode) for p in runtime.glob("k-*")}
            routes = {Path(path).name: route for path, route in km.provisioner.relay.routes.items()}
            bound = await _printed(kc, "from ipykernel.kernelapp import IPKernelApp; print(IPKernelApp.instance().ip)")
            options = [(s.getsockopt(zmq.MAXMSGSIZE), s.getsockopt(zmq.RCVHWM))
                       for s in (kc.shell_channel.socket, kc.iopub_channel.socket, kc.stdin_channel.socket,
                                 kc.control_channel.socket, km._control_socket)]
            return relayed, routes, bound, options
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    relayed, routes, bound, options = loops.run(run())
    ports = [km.shell_port, km.iopub_port, km.stdin_port, km.control_port, km.hb_port]
    names = [f"{Path(km.ip).name}-{port}" for port in ports]
    assert sorted(relayed) == sorted(names) and all(relayed.values())
    assert [routes[name][0] for name in names] == ["shell", "iopub", "stdin", "control", "hb"]
    assert all(re.fullmatch(r"/proc/self/fd/\d+", target) for _, target in routes.values())
    assert bound.startswith("/tmp/k-")  # in the sandbox's own /tmp
    assert options == [(channels.BUDGET, channels.QUEUE)] * 5


def test_honest_output_crosses_the_relay_whole(tmp_path):
    """Prints of every size up to the per-cell output limit, non-ASCII text included, arrive as printed."""
    _, _, km = _manager(tmp_path)
    sizes = [1, 1000, 100_000, 999_000]

    async def run():
        kc = await _started(km)
        try:
            return [await _printed(kc, f"print(('é' + 'x' * 9) * {n // 10} + 'z')") for n in sizes], \
                km.provisioner.relay
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    printed, relay = loops.run(run())
    assert printed == [("é" + "x" * 9) * (n // 10) + "z" for n in sizes]
    assert relay.exceeded is None and 1_100_000 < relay.by_channel["iopub"] < channels.BUDGET


def test_a_kernel_that_relinks_its_sockets_reaches_no_other_socket_of_the_machine(tmp_path):
    """Student code replaces each socket's name by a link to a socket of the machine and ends its kernel, so that
    the grader's channels reconnect: they reconnect to the kernel's old sockets, or to nothing."""
    _, _, km = _manager(tmp_path)
    target = tmp_path / "machine.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(target))
    listener.listen()
    os.chmod(target, 0o777)
    attack = f"""import os
from ipykernel.kernelapp import IPKernelApp
prefix = IPKernelApp.instance().ip  # where the kernel bound its sockets
for name in os.listdir(os.path.dirname(prefix)):
    path = os.path.join(os.path.dirname(prefix), name)
    if path.startswith(prefix + "-"):
        os.unlink(path)
        os.symlink({str(target)!r}, path)
        print("relinked", path, flush=True)
os._exit(0)
"""

    async def run():
        kc = await _started(km)
        try:
            kc.execute(attack)
            await asyncio.sleep(3)  # ZeroMQ tries to reconnect every 0.1 s
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    try:
        loops.run(run())
        listener.settimeout(0.5)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_what_a_kernel_writes_stays_in_its_sandboxs_memory_within_its_size(tmp_path):
    """Many files, each under the file-size limit, in the working folder: the sandbox's /tmp fills, the disk never."""
    _, runtime, km = _manager(tmp_path, tmp_size=64 * sandbox.MiB, fsize=16 * sandbox.MiB)
    fill = """import os, sys
written, error = 0, None
try:
    for i in range(64):
        with open(f"junk-{i}", "wb") as f:
            for _ in range(8):
                f.write(bytes(1024 * 1024))
                f.flush()
                written += 1024 * 1024
except OSError as exc:
    error = exc.errno
sys.stdout.write(f"FILLED {os.getcwd()} {written // 2**20} {error}\\n")  # one write: nothing comes between
"""

    async def run():
        kc = await _started(km)
        try:
            tried = (f"import sys\ntry:\n    open({str(runtime / 'x')!r}, 'w')\n"
                     "except OSError as e:\n    sys.stdout.write(f'ERRNO {e.errno}\\n')")
            return await _printed(kc, fill), await _printed(kc, tried)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    filled, runtime_write = loops.run(run())
    # IPython's history thread may report the full /tmp on stderr, among these lines: each is matched alone
    cwd, written, error = re.search(r"^FILLED (\S+) (\d+) (\S+)$", filled, re.M).groups()
    assert cwd == "/tmp/work" and int(written) <= 64 and error == str(errno.ENOSPC)
    assert int(re.search(r"^ERRNO (\d+)$", runtime_write, re.M).group(1)) in (errno.EROFS, errno.ENOENT, errno.EACCES)
    assert not any(p.name == "x" or p.name.startswith("junk-") for p in tmp_path.rglob("*"))


def test_a_kernel_that_never_binds_its_sockets_is_ended_with_a_clear_error(tmp_path):
    """The wait for the sockets has a deadline: past it, the kernel's process is killed and the start fails, saying
    where the sockets were awaited (here the launcher is made to sleep instead of starting ipykernel)."""
    _, _, km = _manager(tmp_path)

    async def run():
        await km.start_kernel()

    original = kernel.SandboxProvisioner._link_sockets

    async def short_wait(self, timeout=60.0):
        return await original(self, timeout=1.0)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "_LAUNCH_WITHOUT_DEBUGGER", "import time\ntime.sleep(600)\n")
        patch.setattr(kernel.SandboxProvisioner, "_link_sockets", short_wait)
        with pytest.raises(RuntimeError, match=r"Kernel didn't bind its sockets in /tmp of its sandbox in 1\.0 s"):
            loops.run(run())
    assert km.provisioner.process.wait(timeout=10) is not None
    km.context.destroy(linger=0)
