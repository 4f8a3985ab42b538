"""The sandbox that every piece of student code runs in: bubblewrap plus resource limits.

A sandboxed command sees the system read-only, a fresh /tmp, no network (a
private loopback only), its own process tree, and can write only the folders it
is given. It runs under limits on address space (memory), CPU time, process
count, file size and open files, as a user that owns nothing else, under a
seccomp filter that refuses what would hold memory past those limits
(syscalls.py):

    prlimit --as --cpu --nproc --fsize --nofile -- env -i bwrap <mounts> -- setpriv --reuid UID --
        python -c <syscalls.py: a seccomp filter> --then <command>

Run as root (a grading server, CI), bwrap builds the sandbox and `setpriv`
drops to an unprivileged uid of its own per job slot, which also makes the
process-count limit count (the kernel never enforces it for uid 0). Run as a
normal user, bwrap makes a user namespace instead and the process limit is
counted on top of the processes the user already has.
"""

import functools
import importlib.util
import os
import re
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ...limits import GiB, MiB
from . import cgjoin, syscalls, unsandboxed

SANDBOX_UID_BASE = 200_000  # grading as root, job slot k of a run runs as uid base + k (no such user exists)
SANDBOX_HOME = "/tmp"  # a sandbox's home and temporary folder: its own /tmp (memory of a bounded size)
MAX_SLOTS = 64  # job slots of one run (or one Dask worker): slot k's uids are base + k and base + MAX_SLOTS + k

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text):
    """'2G', '512M', '1.5GiB' or a number of bytes -> bytes."""
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"expected a size like 2G, 512M or a number of bytes, got {text!r}")
    factor = {"": 1, "k": 1024, "m": MiB, "g": GiB, "t": 1024 * GiB}[m.group(2).lower()]
    return int(float(m.group(1)) * factor)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed process tree."""

    memory: int = 2 * GiB  # address space of each process (RLIMIT_AS)
    cpu: int = 600  # CPU seconds of each process (RLIMIT_CPU)
    nproc: int = 256  # processes and threads of the sandbox's user (RLIMIT_NPROC)
    fsize: int = 256 * MiB  # largest file it may write (RLIMIT_FSIZE)
    tmp_size: int = 256 * MiB  # size of its private /tmp, and of its /dev/shm (a tmpfs counts against RAM)
    nofile: int = 1024  # open file descriptors of each process: each socket's buffers are memory no limit counts


def precompile(folder):
    """Write the bytecode of the Python modules under `folder`, where this process may write there (else nothing).

    A sandboxed process sees its modules read-only, so it cannot save what it compiles: without this, every
    kernel and clean re-run would compile the course's modules again (a few hundredths of a second each).
    """
    import compileall

    try:
        compileall.compile_dir(str(folder), quiet=2, workers=1)
        for cache in Path(folder).rglob("__pycache__"):  # readable by the sandbox's user, whatever the umask
            for path in (cache, *cache.glob("*.pyc")):
                if not path.is_symlink():
                    path.chmod(0o755 if path.is_dir() else 0o644)
    except OSError:
        pass  # a folder this process may not write to: its modules are compiled as they are imported


def required_paths():
    """What a sandboxed Python must still see when folders around it are hidden."""
    # The interpreter, its standard library and site-packages, and where the editable install keeps
    # ffn_helpers; not the rest of sys.path (the caller's working folder, a test folder), which a fresh
    # interpreter does not use and which may be a scratch folder under /tmp.
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
             *site.getsitepackages()}
    prefixes = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    paths.update(p for p in sys.path if p and os.path.isdir(p)
                 and any(_inside(os.path.realpath(p), prefix) for prefix in prefixes))
    paths.update(_course_package())
    return sorted({os.path.realpath(p) for p in paths})


def _course_package():
    """The folder of the ffn_helpers this process imported (a checkout's own, which may not be the one the
    environment's editable install names), as a list: empty where there is none."""
    spec = importlib.util.find_spec("ffn_helpers")
    return list(spec.submodule_search_locations) if spec is not None and spec.submodule_search_locations else []


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def closed_ancestor(path):
    """The topmost folder above `path` that other users cannot enter (e.g. /root), or None."""
    parts = Path(path).parts
    for i in range(2, len(parts)):
        folder = str(Path(*parts[:i]))
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return None
    return None


def _outermost(paths):
    """The paths not inside another of them, sorted."""
    paths = set(paths)
    return sorted(p for p in paths if not any(_inside(p, other) and p != other for other in paths))


ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # the jobs use the cores


def own_folders(home, tmp=None, prefix=""):
    """The environment naming where a process keeps its own files, the one layout of them for every process the
    grader starts (a sandbox's, a grading worker, a zygote): HOME is `home`; matplotlib's, IPython's and Jupyter's
    folders are in it (`prefix` before their names: "." keeps them out of sight in a working folder); TMPDIR is
    `tmp`, else `home` itself."""
    home = os.fspath(home)
    return {"HOME": home, "TMPDIR": os.fspath(tmp) if tmp else home,
            "MPLCONFIGDIR": os.path.join(home, f"{prefix}matplotlib"),
            "IPYTHONDIR": os.path.join(home, f"{prefix}ipython"),
            "JUPYTER_RUNTIME_DIR": os.path.join(home, f"{prefix}jupyter-runtime")}


@dataclass(frozen=True)
class Sandbox:
    """How to run one command tree: what it may write, what it must not see, its limits.

    `uid`: run as this user (grading as root); None keeps the caller's uid (a
    user namespace when not root). `isolate=False` is `--unsafe`: limits only.
    """

    writable: tuple = ()
    readonly: tuple = ()  # shown read-only, even inside a hidden folder
    hidden: tuple = ()
    cwd: str = "/"
    uid: int | None = None
    limits: Limits = field(default_factory=Limits)
    env: tuple = ()  # extra (name, value) pairs
    isolate: bool = True
    replaced: tuple = ()  # (folder, folder it is shown in place of), read-only: public.py's build of ffn_helpers
    in_tmp: tuple = ()  # (file, where under /tmp it is shown), read-only, in folders anyone there may write
    cgroup: tuple = ()  # the sandbox's own cgroup (cgroups.py: a folder per hierarchy), joined before it starts

    def with_(self, **changes):
        return replace(self, **changes)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        data = dict(data, cgroup=data.get("cgroup", ()))
        data["limits"] = Limits(**data["limits"])
        for key in ("writable", "readonly", "hidden", "cgroup"):
            data[key] = tuple(data[key])
        data["env"] = tuple(tuple(pair) for pair in data["env"])
        for key in ("replaced", "in_tmp"):
            data[key] = tuple(tuple(pair) for pair in data.get(key, ()))
        return cls(**data)

    def environment(self):
        """The whole environment of the sandboxed command (nothing is inherited)."""
        bin_dir = os.path.dirname(sys.executable)
        env = {
            "PATH": os.pathsep.join([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "MPLBACKEND": "Agg",
            **ONE_THREAD,  # one BLAS thread per sandbox: the jobs already use every core
            # its own /tmp; without isolation nothing is hidden: the real /tmp is kept out of the way anyway
            **(own_folders(SANDBOX_HOME) if self.isolate else own_folders(self.cwd, prefix=".")),
        }
        package = _course_package()
        if package:  # ffn_helpers from where the grader has it (in a sandbox: it, or its public build)
            env["PYTHONPATH"] = os.pathsep.join(os.path.dirname(p) for p in package)
        env.update(dict(self.env))
        return env

    def rlimits(self):
        """The resource limits each process of the sandbox starts with (besides a core size of 0)."""
        lim = self.limits
        nproc = lim.nproc
        if self.uid is None and os.geteuid() != 0:  # counted with the user's own processes
            nproc += _process_count(os.getuid())
        return {"memory": lim.memory, "cpu": lim.cpu, "nproc": nproc, "fsize": lim.fsize, "nofile": lim.nofile}

    def _prlimit(self):
        if shutil.which("prlimit") is None and not self.isolate:  # no util-linux (macOS, Windows): what Python can
            return unsandboxed.limits_prefix(self.limits)
        lim = self.rlimits()
        return ["prlimit", f"--as={lim['memory']}", f"--cpu={lim['cpu']}", f"--nproc={lim['nproc']}",
                f"--fsize={lim['fsize']}", f"--nofile={lim['nofile']}", "--core=0", "--"]

    def _bwrap(self, info_fd=None):
        """bwrap and its arguments, in the order bwrap applies them (a later mount goes over an earlier one).

        An empty root with only what a Python process needs: the system's folders, the interpreter and its
        packages (each package folder, not the checkout around it), and the folders given. Nothing else on the
        machine is there to read: not the course, another checkout of it, the results or a home folder.
        """
        args = [shutil.which("bwrap") or "bwrap"]  # found here: `env -i` leaves it no PATH to search
        system = [d for d in _SYSTEM if os.path.isdir(d) or os.path.islink(d)]
        args += self._system_mounts(system)
        shown = [d for d in system if not os.path.islink(d)]  # folders bound from the machine, whose insides exist
        made = set(system) | {"/", "/tmp", "/dev", "/proc"}  # folders that exist in the sandbox's root
        args += self._in_tmp(made)
        python = required_paths()
        required = [r for r in _outermost(python) if not any(_inside(r, d) for d in shown)]
        args += _binds("--ro-bind", ((r, r) for r in required), made, shown)
        shown += required
        args += self._hide(python, shown)
        args += self._given_mounts(made, shown)
        return args + self._confinement(info_fd)

    def _system_mounts(self, system):
        """The system's folders, read-only, and the sandbox's own /dev, /proc, /tmp and /dev/shm."""
        args = []
        for d in system:
            args += ["--symlink", os.readlink(d), d] if os.path.islink(d) else ["--ro-bind", d, d]
        # Its writable memory-backed folders, each of a bounded size (a tmpfs counts against RAM, not RLIMIT_AS):
        # /tmp, and /dev/shm, which bwrap's /dev would otherwise leave as large as half the machine's memory.
        args += ["--dev", "/dev", "--proc", "/proc"]
        for folder in ("/tmp", "/dev/shm"):
            args += ["--size", str(self.limits.tmp_size), "--perms", "1777", "--tmpfs", folder]
        return args

    def _hide(self, python, shown):
        """An empty folder over each hidden folder (and the home folder) inside one already `shown`: a course inside
        /usr/local, a home folder around the interpreter. Never over one the interpreter (`python`) needs."""
        hidden = {os.path.realpath(h) for h in (*self.hidden, os.path.expanduser("~")) if h and os.path.isdir(h)}
        hidden -= set(python)
        args = []
        for h in _outermost(h for h in hidden if h != "/" and any(_inside(h, d) and h != d for d in shown)):
            if not any(_inside(r, h) for r in python):
                args += ["--perms", "0755", "--tmpfs", h]
        return args

    def _given_mounts(self, made, shown):
        """The folders this sandbox was given: read-only, writable, and last, the replacements, over whatever showed
        their targets before."""
        readonly = ((os.path.realpath(r),) * 2 for r in self.readonly)
        writable = ((os.path.realpath(w),) * 2 for w in self.writable)
        replaced = ((os.path.realpath(source), os.path.realpath(target)) for source, target in self.replaced)
        return (_binds("--ro-bind", readonly, made, shown) + _binds("--bind", writable, made, shown)
                + _binds("--ro-bind", replaced, made, shown))

    def _confinement(self, info_fd):
        """The rest of bwrap's arguments: read-only root and /dev, new namespaces, the environment, and the switch
        to the sandbox's user (grading as root), ending where the command's own arguments start."""
        # The root itself and /dev (bwrap's tmpfs of no set size, holding the folders and devices made above) are
        # read-only: their folders may belong to the sandbox's user, who could fill memory there. Only /tmp and
        # /dev/shm, each of a bounded size, are written in.
        args = ["--remount-ro", "/dev", "--remount-ro", "/"]
        args += ["--chdir", self.cwd, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--clearenv"]
        if self.uid is None and os.geteuid() != 0:
            args += ["--unshare-user", "--disable-userns"]
        for name, value in self.environment().items():
            args += ["--setenv", name, value]
        if info_fd is not None:  # where bwrap writes {"child-pid": ...} (zygote.py)
            args += ["--info-fd", str(info_fd)]
        args.append("--")
        if self.uid is not None:
            args += ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        return args

    def _in_tmp(self, made):
        """Files given under /tmp, and a working folder there: what the command writes beside them stays in its
        /tmp, within that tmpfs's size, and no folder of the machine is written at all."""
        for source, target in self.in_tmp:
            if not _inside(target, "/tmp") or target == "/tmp" or os.path.normpath(target) != target:
                raise ValueError(f"in_tmp: expected a normal path under /tmp to show {source} at, got {target!r}")
        bound = [os.path.realpath(f) for f in (*self.writable, *self.readonly)]
        own_cwd = _inside(self.cwd, "/tmp") and not any(_inside(os.path.realpath(self.cwd), b) for b in bound)
        args = []
        for folder in [self.cwd] * own_cwd + [os.path.dirname(t) for _, t in self.in_tmp]:
            args += _parents(folder, made, (), perms="1777", itself=True)
        return args + [arg for source, target in self.in_tmp for arg in ("--ro-bind", os.path.realpath(source), target)]

    def command(self, argv, info_fd=None):
        """The full command line that runs `argv` in this sandbox (`info_fd`: bwrap's --info-fd)."""
        if not self.isolate:
            return self._joined() + self._prlimit() + list(argv)
        # bwrap itself starts with an empty environment: its process in the sandbox (pid 1) belongs to the sandbox's
        # user, who could read its /proc/1/environ, and --clearenv clears only the environment of bwrap's child.
        # The command starts under the seccomp filter of syscalls.py, which it and all it starts keep.
        return self._joined() + self._prlimit() + ["env", "-i"] + self._bwrap(info_fd) + _under_the_filter(argv)

    def _joined(self):
        """The start of a command that first joins the sandbox's cgroup (cgjoin.py), if it has one."""
        if not self.cgroup:
            return []
        return [sys.executable, "-I", "-S", "-c", _source("cgjoin.py"), *self.cgroup, cgjoin.JOIN_THEN]

    def prepare(self):
        """Make the writable folders belong to the sandbox user."""
        for w in self.writable:
            os.makedirs(w, exist_ok=True)
            if self.uid is not None and self.isolate:
                for root, dirs, files in os.walk(w):
                    os.chown(root, self.uid, self.uid)
                    for name in dirs + files:
                        os.lchown(os.path.join(root, name), self.uid, self.uid)


_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")


def _under_the_filter(argv):
    """`argv`, started by a Python that first installs syscalls.py's seccomp filter (no site, no user's path)."""
    argv = [_reachable(arg) if i == 0 else arg for i, arg in enumerate(argv)]  # empty: a prefix the caller ends
    return [_reachable(sys.executable), "-I", "-S", "-c", syscalls.source(), syscalls.THEN, *argv]


def _reachable(path):
    """`path` without its `.` and `..` steps, when that names the same file: inside the sandbox only the folders it
    needs are mounted, and Python keeps the path it was started by, so `tests/../.venv/bin/python` (the interpreter
    run from a subfolder) would need tests/, which is not there."""
    if not os.path.isabs(path):  # `./x` and `x` are not the same command
        return path
    normal = os.path.normpath(path)
    try:
        return normal if normal != path and os.path.samefile(normal, path) else path
    except OSError:  # not a path, or nothing there: left for the command to report
        return path


@functools.cache
def _source(name):
    """The source of a program of this folder that runs on its own (cgjoin.py)."""
    return Path(__file__).with_name(name).read_text(encoding="utf-8")


def _binds(option, pairs, made, shown):
    """bwrap arguments that show each (source, target) of `pairs` at its target with `option` (--bind, --ro-bind),
    after the folders leading to it (_parents); each target is added to `made`."""
    args = []
    for source, target in pairs:
        args += _parents(target, made, shown) + [option, source, target]
        made.add(target)
    return args


def _parents(path, made, binds, perms="0755", itself=False):
    """bwrap arguments that create the folders leading to `path` (and `path` itself) in the sandbox's root.

    `made`: folders that exist there already; `binds`: folders bound from the machine, whose insides exist;
    `perms`: of each folder made, traversable by anyone (0755) or writable by anyone too (1777)."""
    out = []
    parts = Path(path).parts
    for i in range(2, len(parts) + itself):
        folder = str(Path(*parts[:i]))
        if folder not in made and not any(_inside(folder, b) for b in binds):
            out += ["--perms", perms, "--dir", folder]
            made.add(folder)
    return out


def _process_count(uid):
    count = 0
    if not os.path.isdir("/proc"):  # macOS: only `check` runs there, unsandboxed, with no process limit to add to
        return 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def clear_uid(uid, timeout=20.0):
    """Kill whatever still runs as a sandbox uid and wait until it is gone; return how many were left.

    A sandbox ends with its process tree, but thousands of killed processes (a fork bomb's)
    take a moment to be reaped, and until then they count against the next student's
    process limit, which uses the same uid.
    """
    if uid is None or not _root():
        return 0
    deadline, found = time.monotonic() + timeout, 0
    while True:
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.stat(f"/proc/{entry}").st_uid == uid:
                        pids.append(int(entry))
                except OSError:
                    pass
        if not pids or time.monotonic() > deadline:
            return found
        found = max(found, len(pids))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def _root():
    """True when running as root (never on Windows, which has no uids)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def uid_base():
    """A block of uids of its own for one grading run (two runs at once must not share a process count):
    job slot k's student code runs as base + k, its tests (judge.py) as base + MAX_SLOTS + k."""
    return SANDBOX_UID_BASE + (os.getpid() % 100_000) * 2 * MAX_SLOTS


def slot_uid(slot, base=None):
    """The uid that job slot `slot` runs student code as, or None when not grading as root."""
    if not _root():
        return None
    return (uid_base() if base is None else base) + slot


def worker_uid(slot, base=None):
    """The user a grading worker of job slot `slot`, and its judges, run as (grading as root), or None.

    It owns nothing outside the worker's scratch folder; the slot's student code, run by `check` as root,
    runs as slot_uid(slot) instead."""
    if not _root():
        return None
    return (uid_base() if base is None else base) + MAX_SLOTS + slot


def probe(limits=None):
    """Check that the sandbox can be built here; return (ok, explanation)."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap, the grading sandbox, runs on Linux only; this is {sys.platform}"
    try:
        syscalls.program()
    except syscalls.NoFilter as exc:
        return False, str(exc)
    missing = [tool for tool in ("bwrap", "prlimit", "setpriv") if shutil.which(tool) is None]
    if not _root() and "setpriv" in missing:
        missing.remove("setpriv")
    if missing:
        hint = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and util-linux"
        return False, f"{', '.join(missing)} not found: {hint}"
    with tempfile.TemporaryDirectory(prefix="ffn-probe-") as tmp:
        sandbox = Sandbox(writable=(tmp,), cwd=tmp, uid=slot_uid(7), limits=limits or Limits())
        sandbox.prepare()
        code = ("import os, socket; open('probe.txt', 'w').write('ok'); "
                "s = socket.socket(); s.settimeout(2)\n"
                "try:\n    s.connect(('1.1.1.1', 53)); print('network')\nexcept OSError:\n    print('isolated')")
        try:
            run = subprocess.run(sandbox.command([sys.executable, "-c", code]), capture_output=True, text=True,
                                 timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"could not start bubblewrap: {exc}"
        if run.returncode != 0 or run.stdout.strip() != "isolated":
            detail = (run.stderr or run.stdout).strip().splitlines()[-3:]
            hint = ("bubblewrap could not create its namespaces. In a container, allow user namespaces "
                    "(e.g. Docker's --security-opt seccomp=unconfined or a privileged runner); on a host, "
                    "check `sysctl kernel.unprivileged_userns_clone` / AppArmor's restrict_unprivileged_userns.")
            return False, f"{hint}\n  bwrap said: {' | '.join(detail) or f'exit status {run.returncode}'}"
        if not os.path.exists(os.path.join(tmp, "probe.txt")):
            return False, "the sandbox could not write its scratch folder"
    return True, "bubblewrap sandbox works"
