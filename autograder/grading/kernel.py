"""A Jupyter kernel manager that starts each kernel inside the grading sandbox.

The kernel talks to the grader over Unix sockets in a folder both can reach
(ZeroMQ's `ipc` transport): the sandbox has its own network namespace, so the
grader's loopback is out of its reach.

Student code can write junk to those sockets. A message to the kernel then
never leaves, and a plain zmq send would wait for it forever, in the event loop,
where no timeout can end it: the interrupt (and the shutdown, which interrupts
first) gives up after `control_send_timeout` seconds instead. The client starts
no heartbeat channel: its thread can hang the same way, and `stop_channels` would
wait for it forever; whether the kernel lives is asked of its process instead.
"""

import json
import os
import subprocess
import uuid

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Unicode, default

from .sandbox import Sandbox


def sandbox_to_json(sandbox, runtime_dir):
    """The kernel manager's configuration value: the sandbox and where its sockets go."""
    return json.dumps({"sandbox": sandbox.to_dict(), "runtime_dir": str(runtime_dir)})


def sandbox_from_json(text):
    data = json.loads(text)
    return Sandbox.from_dict(data["sandbox"]), data["runtime_dir"]


class SandboxedKernelClient(AsyncKernelClient):
    """A kernel client without the heartbeat thread (its manager, the parent, says whether the kernel lives)."""

    def start_channels(self, shell=True, iopub=True, stdin=True, hb=True, control=True):
        return super().start_channels(shell=shell, iopub=iopub, stdin=stdin, hb=False, control=control)


class SandboxedKernelManager(AsyncKernelManager):
    """Start the kernel as `prlimit ... bwrap ... -- python -m ipykernel_launcher -f CONNECTION_FILE`."""

    client_class = DottedObjectName("autograder.grading.kernel.SandboxedKernelClient")

    @default("client_factory")
    def _client_factory_default(self):
        return SandboxedKernelClient

    sandbox_json = Unicode("", help="The sandbox (see sandbox_to_json).").tag(config=True)

    def _sandbox(self):
        if not self.sandbox_json:
            raise RuntimeError("SandboxedKernelManager.sandbox_json is not configured")
        return sandbox_from_json(self.sandbox_json)

    async def _async_pre_start_kernel(self, **kw):
        sandbox, runtime_dir = self._sandbox()
        sandbox.prepare()  # its folders exist and belong to the sandbox user
        self.transport = "ipc"
        name = uuid.uuid4().hex[:12]
        self.connection_file = os.path.join(runtime_dir, f"kernel-{name}.json")
        self.ip = os.path.join(runtime_dir, f"k-{name}")
        if self.kernel_spec is not None:
            # An interrupt goes as a message on the control channel: a signal would reach bwrap, not the kernel.
            self.kernel_spec.interrupt_mode = "message"
        # The notebook's output travels over the sockets; what the process itself writes (os.write(1, ...),
        # crashes, the kernel's banner) would only fill the grader's log.
        kw["stdout"] = kw["stderr"] = subprocess.DEVNULL
        return await super()._async_pre_start_kernel(**kw)

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        sandbox, _ = self._sandbox()
        if sandbox.uid is not None and sandbox.isolate and os.path.exists(self.connection_file):
            os.chown(self.connection_file, sandbox.uid, sandbox.uid)  # the kernel reads it as the sandbox user

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        sandbox, _ = self._sandbox()
        # The sandbox's own working folder, never the one nbgrader asks for (the autograded folder, which
        # nbgrader writes and chmods afterwards: student code must not be able to leave links there).
        return sandbox.command(cmd)

    control_send_timeout = 2.0  # seconds an interrupt_request may wait to leave

    def _connect_control_socket(self):
        super()._connect_control_socket()
        self._control_socket.sndtimeo = int(self.control_send_timeout * 1000)

    async def _async_interrupt_kernel(self):
        try:
            await super()._async_interrupt_kernel()
        except zmq.Again:  # the control channel is stuck: the caller's timeout (or the kill) ends the kernel
            self.log.warning("could not send the interrupt: the kernel's control channel is stuck")

    interrupt_kernel = _async_interrupt_kernel
