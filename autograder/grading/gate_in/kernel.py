"""A Jupyter kernel manager that starts each kernel inside the grading sandbox.

jupyter_client's public ways in, nothing private: the kernel is launched by a
kernel provisioner (`SandboxProvisioner`, registered in pyproject.toml under the
entry point `autograder-sandbox` and named in the kernel spec of each kernel the
manager starts); the manager only adds its zmq context's send timeout, its session
and a client without a heartbeat.

The kernel talks to the grader over Unix sockets (ZeroMQ's `ipc` transport): the
sandbox has its own network namespace, so the grader's loopback is out of its
reach. The kernel binds them in its own /tmp, where no folder of the machine is
writable; once they are bound, before any student code runs, the grader opens each
socket itself through the sandbox's root (no link followed) and connects by that
descriptor only (`/proc/self/fd/N`). Student code may then replace a socket's name
with a link to any socket of the machine: the grader never looks a name up again,
so a reconnection reaches the kernel's socket or nothing. ZeroMQ connects to the
kernel through a relay of the grader's (channels.py), which listens in the grader's
own runtime folder and counts every byte the kernel sends on any channel against
the run's budget before ZeroMQ keeps it: past it, the kernel is killed
(`over_budget` says why). Without the sandbox (a learner's `check` on macOS or
Windows), ports of 127.0.0.1 instead, as any local kernel uses, and no relay.
Either way, the client measures each message before it is decoded (messages.py):
one that would become too much is never decoded, and its kernel is killed the same.

Student code can write junk to those sockets. A message to the kernel then
never leaves, and a plain zmq send would wait for it forever, in the event loop,
where no timeout can end it: the interrupt (and the shutdown, which interrupts
first) gives up after `control_send_timeout` seconds instead. The client starts
no heartbeat channel: its thread can hang the same way, and `stop_channels` would
wait for it forever; whether the kernel lives is asked of its process instead.
"""

import asyncio
import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from importlib.metadata import entry_points
from queue import Empty

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import KernelProvisionerFactory, LocalProvisioner
from jupyter_client.session import Session
from traitlets import DottedObjectName, Type, Unicode, default
from traitlets.log import get_logger

from ... import upstream
from . import channels, confine, messages, unsandboxed, zygote
from .sandbox import Sandbox

# BoundedChannel overrides an internal of jupyter_client's (upstream.check_jupyter_client names it and checks the
# installed jupyter_client on import: a grading run stops before its first student).
upstream.check_jupyter_client()

PROVISIONER = "autograder-sandbox"  # the entry point's name in pyproject.toml

# ipykernel_launcher, without the debugger (upstream.without_debugpy: why, and the check of ipykernel).
_LAUNCH_WITHOUT_DEBUGGER = f"""import sys
if sys.path[0] == "":  # as ipykernel_launcher: the kernel's own imports are not looked for in the working folder
    del sys.path[0]
{upstream.without_debugpy()}
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


def without_debugger(cmd):
    """The kernel spec's `python -m ipykernel_launcher ARGS` as `python -c <the same, without debugpy> ARGS`."""
    if list(cmd[1:3]) == ["-m", "ipykernel_launcher"]:
        return [cmd[0], "-c", _LAUNCH_WITHOUT_DEBUGGER, *cmd[3:]]
    return list(cmd)


def sandbox_to_json(sandbox, runtime_dir):
    """The kernel manager's configuration value: the sandbox and where its sockets go."""
    return json.dumps({"sandbox": sandbox.to_dict(), "runtime_dir": str(runtime_dir)})


def sandbox_from_json(text):
    data = json.loads(text)
    return Sandbox.from_dict(data["sandbox"]), data["runtime_dir"]


class SandboxProvisioner(LocalProvisioner):
    """Launch the kernel as `prlimit ... bwrap ... -- python -c <the launcher, no debugpy> -f CONNECTION_FILE`."""

    sandbox_json = Unicode("", help="The sandbox (see sandbox_to_json).")

    async def pre_launch(self, **kwargs):
        if not self.sandbox_json:
            raise RuntimeError("SandboxProvisioner.sandbox_json is not set: start it with SandboxedKernelManager")
        sandbox, runtime_dir = sandbox_from_json(self.sandbox_json)
        sandbox.prepare()  # its folders exist and belong to the sandbox user
        km, name = self.parent, uuid.uuid4().hex[:12]
        km.connection_file = os.path.join(runtime_dir, f"kernel-{name}.json")
        # Without the sandbox (a learner's `check`): ports of 127.0.0.1, as the learner's own JupyterLab uses. Windows
        # has no Unix sockets, and macOS's (104 bytes of path at most) would not fit under its long temporary folders.
        if sandbox.isolate:  # bound in the sandbox's /tmp; the grader connects through links (_link_sockets)
            km.transport, km.ip = "ipc", f"/tmp/k-{name}"
            self._links = os.path.join(runtime_dir, f"k-{name}")
        else:
            km.transport, km.ip = "tcp", "127.0.0.1"
        # An interrupt goes as a message on the control channel: a signal would reach bwrap, not the kernel. Without
        # the sandbox on Windows, where ipykernel ignores that message: jupyter_client's "signal", an event the kernel
        # waits on.
        self.kernel_spec.interrupt_mode = "signal" if os.name == "nt" and not sandbox.isolate else "message"
        kwargs = await super().pre_launch(**kwargs)  # writes the connection file and formats the command
        if self.connection_info.get("transport") != km.transport or self.connection_info.get("ip") != km.ip:
            raise RuntimeError(f"the kernel's sockets would not be in the sandbox's folder: {self.connection_info}")
        if sandbox.uid is not None and sandbox.isolate and os.path.exists(km.connection_file):
            os.chown(km.connection_file, sandbox.uid, sandbox.uid)  # the kernel reads it as the sandbox user
        if sandbox.isolate:  # of the runtime folder, the kernel sees its connection file alone, read-only
            sandbox = sandbox.with_(readonly=(*sandbox.readonly, km.connection_file))
        # The sandbox's own working folder, never the one nbgrader asks for (the autograded folder, which
        # nbgrader writes and chmods afterwards: student code must not be able to leave links there).
        cmd = kwargs["cmd"]
        # Started warm (zygote.py) where the worker has a zygote and the kernel is this interpreter's ipykernel.
        warm = (zygote.current("kernel") is not None and zygote.usable(sandbox, "kernel")
                and list(cmd[1:3]) == ["-m", "ipykernel_launcher"]
                and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable))
        self._warm = (sandbox, list(cmd[3:])) if warm else None
        kwargs["cmd"] = sandbox.command(without_debugger(cmd))
        # The notebook's output travels over the sockets; what the process itself writes (os.write(1, ...),
        # crashes, the kernel's banner) would only fill the grader's log.
        kwargs["stdout"] = kwargs["stderr"] = subprocess.DEVNULL
        if sandbox.isolate:  # a session keyring of its own (bubblewrap gives the sandbox none), as a warm kernel's
            kwargs["preexec_fn"] = confine.fresh_keyring
        return kwargs

    async def launch_kernel(self, cmd, **kwargs):
        if getattr(self, "_warm", None) is None:
            info = await super().launch_kernel(cmd, **kwargs)
        else:
            sandbox, argv = self._warm
            try:
                self.process = zygote.current("kernel").start(sandbox, argv)
            except zygote.ZygoteError as exc:
                get_logger().warning("kernel started the plain way: %s", exc)
                info = await super().launch_kernel(cmd, **kwargs)
            else:
                # No process group to signal: every signal goes to the kernel's pidfd, and SIGKILL ends its sandbox.
                self.pid, self.pgid, self.cwd = self.process.pid, None, sandbox.cwd
                info = self.connection_info
        if self.connection_info.get("transport") == "ipc":
            await self._link_sockets()
            info = self.connection_info  # the manager takes the links' names (and writes them in its file)
        return info

    async def _link_sockets(self, timeout=60.0):
        """Wait until the kernel has bound its sockets, open each through the sandbox's root without following a
        link, and relay each descriptor (channels.Relay, which counts what the kernel sends) from a socket in the
        runtime folder: `self._links`-PORT, where ZeroMQ connects, to /proc/self/fd/N."""
        info, self._socket_fds = self.connection_info, []
        names = ("shell", "iopub", "stdin", "control", "hb")
        ports = [info[f"{channel}_port"] for channel in names]
        folder, prefix = os.path.split(info["ip"])
        deadline, why = time.monotonic() + timeout, "they are not all there"
        while True:
            if self.process.poll() is not None:
                raise RuntimeError("Kernel died before it bound its sockets")
            try:
                fds = _open_sockets(self.process.pid, folder, [f"{prefix}-{port}" for port in ports])
            except OSError as exc:  # the sandbox's folders are not what bubblewrap makes (yet): wait, then say so
                fds, why = None, str(exc)
            if fds is not None:
                break
            if time.monotonic() > deadline:
                self.process.kill()  # no one would stop it: the manager keeps no kernel whose start failed
                raise RuntimeError(f"Kernel didn't bind its sockets in {folder} of its sandbox in {timeout} s: {why}")
            await asyncio.sleep(0.005)
        self._socket_fds = fds
        routes = {f"{self._links}-{port}": (channel, f"/proc/self/fd/{fd}")
                  for channel, port, fd in zip(names, ports, fds, strict=True)}
        self.relay = channels.Relay(routes, self._kill_now).start()
        self.connection_info = dict(info, ip=self._links)

    def _kill_now(self):
        """The relay's: the kernel sent more than its budget. Its whole sandbox ends (called from the relay's
        thread: the event loop may be waiting for a message that will never come)."""
        get_logger().warning("%s", self.relay.exceeded)
        kill_sandbox(self.process)

    def refuse(self, why):
        """The client's: the kernel sent a message the grader will not decode (`why`, the student's message). Its
        whole sandbox ends, as for the budget."""
        if getattr(self, "refused", None) is None:
            self.refused = why
            get_logger().warning("%s", why)
        kill_sandbox(getattr(self, "process", None))

    async def cleanup(self, restart=False):
        await super().cleanup(restart=restart)
        relay = getattr(self, "relay", None)
        if relay is not None:
            relay.close()
        for fd in getattr(self, "_socket_fds", ()):
            os.close(fd)
        self._socket_fds = []


def kill_sandbox(process):
    """Kill a kernel's `process` and its whole sandbox: the process group it leads (prlimit, bwrap, or a zygote's
    child, and every process in the sandbox), or its tree on Windows (a learner's `check`: `taskkill /T`)."""
    if process is None:
        return
    if not hasattr(os, "getpgid"):
        unsandboxed.kill_tree(process)
        return
    with contextlib.suppress(OSError):
        pgid = os.getpgid(process.pid)
        if pgid != os.getpgrp():  # the kernel has a session of its own (jupyter_client and the zygote start it so)
            os.killpg(pgid, signal.SIGKILL)  # bwrap's namespace dies with it
    with contextlib.suppress(OSError):
        process.kill()


def over_budget(km):
    """Why a kernel was stopped for sending more than its channels' budget (channels.py), or a message the grader
    would not decode (messages.py), or None."""
    provisioner = getattr(km, "provisioner", None)
    relay = getattr(provisioner, "relay", None)
    return (relay.exceeded if relay is not None else None) or getattr(provisioner, "refused", None)


def _open_sockets(pid, folder, names):
    """O_PATH descriptors of the sockets `names` in `folder` of `pid`'s sandbox, or None until all are bound.

    Every step is taken with O_NOFOLLOW from the sandbox's root, as the kernel's process sees it (the process
    itself when it started warm, bubblewrap's child in the sandbox when it started the plain way)."""
    root = _sandbox_root(pid)
    if root is None:
        return None
    held, fds = [root], []
    try:
        for part in folder.strip("/").split("/"):
            held.append(os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=held[-1]))
        for name in names:
            try:
                fds.append(os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=held[-1]))
            except FileNotFoundError:
                return None
            if not stat.S_ISSOCK(os.fstat(fds[-1]).st_mode):
                return None
        found, fds = fds, []
        return found
    finally:
        for fd in held + fds:
            os.close(fd)


def _sandbox_root(pid):
    """An O_PATH descriptor of the root folder `pid`'s sandbox shows, or None while it shows the machine's."""
    host = os.stat("/")
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            children = [int(c) for c in f.read().split()]
    except OSError:
        children = []
    for candidate in (pid, *children):
        try:
            fd = os.open(f"/proc/{candidate}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (host.st_dev, host.st_ino):
            return fd
        os.close(fd)
    return None


def _check_registered():
    """Fail unless the kernel spec's provisioner name loads SandboxProvisioner (a kernel outside the sandbox
    must never start because the course was not installed, or was installed from an older tree)."""
    expected = f"{__name__}:{SandboxProvisioner.__name__}"
    found = sorted(ep.value for ep in entry_points(group=KernelProvisionerFactory.GROUP_NAME, name=PROVISIONER))
    if found != [expected]:
        raise RuntimeError(
            f"the grading sandbox's kernel provisioner {PROVISIONER!r} should be registered as {expected!r} "
            f"(pyproject.toml, [project.entry-points.\"{KernelProvisionerFactory.GROUP_NAME}\"]); found "
            f"{found or 'nothing'}. Install the course into this environment: pip install -e .")


class SandboxedSession(Session):
    """A session that gives a message up, with a warning, when its socket's send timeout passes, and reads each
    JSON part with messages.read_json (which empties the part as it decodes it: see BoundedChannel).

    Every socket the grader opens to a kernel has one: the manager's control channel (SandboxedKernelManager) and
    the client's channels (SandboxedKernelClient).
    """

    @default("unpack")
    def _bounded_unpack(self):
        return messages.read_json

    def send(self, stream, msg_or_type, *args, **kwargs):
        try:
            return super().send(stream, msg_or_type, *args, **kwargs)
        except zmq.Again:  # the channel is stuck or the kernel gone: the caller's timeout (or the kill) ends it
            kind = msg_or_type if isinstance(msg_or_type, str) else msg_or_type.get("msg_type", "a message")
            get_logger().warning("could not send %s: the kernel's channel is stuck", kind)
            return None


class BoundedChannel(AsyncZMQSocketChannel):
    """One of a kernel client's channels, which measures each message before it is decoded (messages.refusal).

    A message over a bound is never decoded: `on_refused` (the client's) is told why, and getting it raises
    messages.Refused. One within them is copied out of ZeroMQ's frames as the session reads it, the frames freed
    before the session decodes (messages.for_session). jupyter_client's own _recv, otherwise: an internal, which
    upstream.check_jupyter_client checks when this module is imported."""

    channel = ""  # its name, in the student's message
    on_refused = None

    async def _recv(self, **kwargs):  # jupyter_client internal: upstream.check_jupyter_client
        frames = await self.socket.recv_multipart(copy=False)
        parts = messages.after_delimiter([frame.buffer for frame in frames])
        why = messages.refusal(parts)
        parts = messages.for_session(parts) if why is None else None
        del frames  # ZeroMQ's copy of the message is freed here, before anything of it is decoded
        if why is not None:
            self._refuse(channels.refused_why(self.channel, why))
        return self.session.deserialize(parts)

    def _refuse(self, why):
        if self.on_refused is not None:
            self.on_refused(why)
        raise messages.Refused(why)


def _bounded(channel):
    return type(f"Bounded{channel.title()}Channel", (BoundedChannel,), {"channel": channel})


class SandboxedKernelClient(AsyncKernelClient):
    """A kernel client without the heartbeat thread (its manager, the parent, says whether the kernel lives),
    whose sockets refuse oversized frames and queue few messages (channels.bound_context), and whose channels
    decode no message that would become too much (BoundedChannel)."""

    shell_channel_class = Type(_bounded("shell"))
    iopub_channel_class = Type(_bounded("iopub"))
    stdin_channel_class = Type(_bounded("stdin"))
    control_channel_class = Type(_bounded("control"))

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        channels.bound_context(self.context)  # its own context: the sockets start_channels opens
        # A request to a kernel that is gone could wait forever for a connection, in the event loop: it is given
        # up (SandboxedSession.send) and the kernel's death is noticed instead.
        self.context.setsockopt(zmq.SNDTIMEO, int(SandboxedKernelManager.control_send_timeout * 1000))

    def start_channels(self, shell=True, iopub=True, stdin=True, hb=True, control=True):
        started = super().start_channels(shell=shell, iopub=iopub, stdin=stdin, hb=False, control=control)
        for wanted, channel in ((shell, "shell"), (iopub, "iopub"), (stdin, "stdin"), (control, "control")):
            if wanted:
                getattr(self, f"{channel}_channel").on_refused = self._refused
        return started

    def _refused(self, why):
        """A channel's: the kernel sent a message the grader will not decode. Its manager's provisioner stops it."""
        provisioner = getattr(self.parent, "provisioner", None)
        if isinstance(provisioner, SandboxProvisioner):
            provisioner.refuse(why)

    async def wait_for_ready(self, timeout=None):
        """jupyter_client's wait for a kernel_info reply with IOPub connected, without its last step: waiting
        until IOPub has been silent for 0.2 s, a fifth of a second of every graded kernel's start. What that
        step drops (the status messages of the kernel_info request) has a parent that no cell's request has,
        and nbclient reads a cell's own messages only; what has already arrived is dropped here as well."""
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                try:  # IOPub is connected once any message comes on it (its welcome, or a status)
                    await self.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass
                else:
                    self._handle_kernel_info_reply(reply)
                    break
            if not await self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
        for _ in range(100):  # a kernel that keeps publishing cannot hold the grader here
            try:
                await self.iopub_channel.get_msg(timeout=0)
            except Empty:
                return


class SandboxedKernelManager(AsyncKernelManager):
    """Start each kernel with SandboxProvisioner, in the sandbox `sandbox_json` describes."""

    client_class = DottedObjectName(f"{__name__}.SandboxedKernelClient")

    @default("client_factory")
    def _client_factory_default(self):
        return SandboxedKernelClient

    @default("session")
    def _sandboxed_session(self):
        return SandboxedSession(parent=self)

    sandbox_json = Unicode("", help="The sandbox (see sandbox_to_json).").tag(config=True)

    control_send_timeout = 2.0  # seconds an interrupt_request may wait to leave

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # The default of every socket this manager's context opens: the manager opens one, the control
        # channel (its clients have contexts of their own, and nbclient gives the manager none).
        self.context.setsockopt(zmq.SNDTIMEO, int(self.control_send_timeout * 1000))
        channels.bound_context(self.context)

    async def start_kernel(self, **kw):
        if not self.sandbox_json:
            raise RuntimeError("SandboxedKernelManager.sandbox_json is not configured")
        if self.kernel_spec is None:
            raise RuntimeError(f"no kernel spec named {self.kernel_name!r} to start in the sandbox")
        _check_registered()
        # The kernel spec's own way to name a provisioner (as `metadata.kernel_provisioner` in a kernel.json).
        self.kernel_spec.metadata["kernel_provisioner"] = {"provisioner_name": PROVISIONER,
                                                           "config": {"sandbox_json": self.sandbox_json}}
        return await super().start_kernel(**kw)
