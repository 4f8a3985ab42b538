"""`make lab` for a machine without make (Windows; a Mac without Apple's command-line tools).

    python lab.py                 # Windows (or: py lab.py)
    python3 lab.py                # macOS, Linux
    python lab.py --dry-run       # print the steps, run nothing

The first run sets up the course's own Python environment in .venv/, as `make setup` does (a
virtual environment, pip, the course and its tools); every run then opens the learner's
JupyterLab on my-notebooks/. Standard library only, so that any Python 3.11 or newer runs it.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
READY = ".installed-learner"  # in the environment, once the course is installed (`make setup` leaves ".installed")


def venv_python(venv=VENV):
    """The environment's interpreter: Scripts\\python.exe on Windows, bin/python elsewhere."""
    return venv / "Scripts" / "python.exe" if os.name == "nt" else venv / "bin" / "python"


def set_up_steps(venv=VENV):
    """(what it does, command) for each step of the set-up, in order."""
    python = str(venv_python(venv))
    return [
        (f"creating {venv.name}/", [sys.executable, "-m", "venv", str(venv)]),
        ("updating pip", [python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"]),
        ("installing the course and its tools: numpy, scipy, matplotlib, JupyterLab, nbgrader (a few minutes)",
         [python, "-m", "pip", "install", "--quiet", "-e", str(HERE)]),
    ]


def _ready(venv):
    """Set up since pyproject.toml last changed, by this script or by `make setup` (which installs more)."""
    newest = (HERE / "pyproject.toml").stat().st_mtime
    return any((venv / mark).exists() and (venv / mark).stat().st_mtime >= newest for mark in (READY, ".installed"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python lab.py", description=__doc__.splitlines()[0])
    parser.add_argument("--allow-root", action="store_true", help="run even as root (containers)")
    parser.add_argument("--port", type=int, help="port to listen on (default: 8888 or the next free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    parser.add_argument("--venv", type=Path, default=VENV, help="the environment's folder (default: .venv)")
    args = parser.parse_args(argv)
    venv = args.venv.resolve()
    if sys.version_info < (3, 11):  # noqa: UP036 (this file runs with whatever Python the learner has)
        print(f"Python 3.11 or newer is needed, found {sys.version.split()[0]}: install it from python.org "
              "and run this again with it (on Windows: py -3.11 lab.py).", file=sys.stderr)
        return 2
    from autograder.authoring.lab import refuse_root  # standard library only, like this file

    refusal = refuse_root(args.allow_root)
    if refusal:  # before anything is installed
        print(refusal.replace("`make lab ARGS=--allow-root`", "`python lab.py --allow-root`"), file=sys.stderr)
        return 2
    lab = [str(venv_python(venv)), "-m", "autograder", "lab"] + ["--allow-root"] * args.allow_root \
        + ([f"--port={args.port}"] if args.port else []) + ["--no-browser"] * args.no_browser
    steps = [] if _ready(venv) else set_up_steps(venv)
    if args.dry_run:
        for i, (what, command) in enumerate(steps, 1):
            print(f"{i}/{len(steps)} {what}: {subprocess.list2cmdline(command)}")
        print(f"then: {subprocess.list2cmdline(lab)}")
        return 0
    if steps:
        print(f"Setting up the course's own Python environment in {venv.name}/ (once; later runs start at once).")
    for i, (what, command) in enumerate(steps, 1):
        print(f"  {i}/{len(steps)} {what}", flush=True)
        if subprocess.call(command) != 0:
            print(f"This step failed: {subprocess.list2cmdline(command)}", file=sys.stderr)
            return 1
    if steps:
        (venv / READY).touch()
        print(f"{venv.name}/ is ready.", flush=True)
    return subprocess.call(lab)


if __name__ == "__main__":
    sys.exit(main())
