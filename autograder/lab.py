"""Open the course in JupyterLab: the learner's setup, or the instructor's with nbgrader's formgrader.

    python -m autograder lab               # learner: notebooks/00_start_here.ipynb, Validate only
    python -m autograder lab --instructor  # instructor: formgrader on the course in autograder/

The server binds to 127.0.0.1 and keeps token authentication. Which nbgrader
parts each role sees is configured in jupyter/<role>/ (also used by Binder's
`start` script), put first on JUPYTER_CONFIG_PATH.
"""

import os
import shutil
import sys

from . import COURSE_ROOT, REPO_ROOT

CONFIG_DIRS = {role: REPO_ROOT / "jupyter" / role for role in ("learner", "instructor")}


def lab_command(role, port=None, open_browser=True, allow_root=False, extra=(), root=None):
    """The `jupyter lab` argument list and environment for `role`; nothing is started.

    `root` replaces the folder served (tests serve a scratch copy of the course).
    """
    if role == "instructor":
        default, start = COURSE_ROOT, None  # nbgrader reads nbgrader_config.py from the working folder
    else:
        default, start = REPO_ROOT, "notebooks/00_start_here.ipynb"
    root = default if root is None else root
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")  # nbgrader's gradebook needs `alembic` on PATH
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        [str(CONFIG_DIRS[role])] + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p])
    argv = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1"]
    if port is not None:
        argv.append(f"--ServerApp.port={port}")
    if not open_browser:
        argv.append("--no-browser")
    if allow_root:
        argv.append("--allow-root")
    if start:
        argv.append(start)
    return argv + list(extra), env, root


def main(instructor=False, port=None, open_browser=True, allow_root=False):
    role = "instructor" if instructor else "learner"
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not allow_root:
        print("JupyterLab should not run as root: start it as your normal user. "
              "If you really mean to (a container, say), add --allow-root "
              "(`make lab ARGS=--allow-root`).", file=sys.stderr)
        return 2
    if instructor:
        from . import build

        build.write_sources()  # the formgrader works on autograder/source/<id>/<id>.ipynb
    argv, env, root = lab_command(role, port, open_browser, allow_root)
    if shutil.which("jupyter", path=env["PATH"]) is None:
        print("jupyter is not installed in this environment: run `make setup` first.", file=sys.stderr)
        return 2
    print(f"Opening the {role} JupyterLab on {root} (127.0.0.1, token required; Ctrl-C to stop).", flush=True)
    os.chdir(root)
    os.execvpe(argv[0], argv, env)
