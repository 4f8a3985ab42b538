"""One map of the code, that cannot drift: each package's docstring under autograder/ names what is in it.

A package's `__init__.py` docstring has one line for each module (`name.py`) and subpackage (`name/`) directly in
it, the name first, then its one job. Read both ways: every module and subpackage has its line, and every line names
something there (a folder that is no package, such as templates/, may have one too). The guides point to these
maps instead of repeating them; every module a guide names is a file of the project.
"""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autograder"
GUIDES = ("autograder/AUTHORING.md", "autograder/README.md", "README.md")
_MAP_LINE = re.compile(r"^\s*([A-Za-z_]\w*(?:\.py|/))(?:\s|$)")  # a line that starts with a module's or folder's name


def _packages():
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py"))


def _members(package):
    """`name.py` for each module of `package` (no `__init__.py`), `name/` for each subpackage: what its map names."""
    return sorted([p.name for p in package.glob("*.py") if p.name != "__init__.py"]
                  + [f"{p.parent.name}/" for p in package.glob("*/__init__.py")])


def _map(package):
    """The names the map lines of `package`'s docstring start with."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    return {match[1] for line in doc.splitlines() if (match := _MAP_LINE.match(line))}


def test_the_map_finds_the_packages_and_their_members():
    assert {p.relative_to(ROOT).as_posix() for p in _packages()} >= {"autograder", "autograder/grading",
                                                                     "autograder/grading/gate_in"}
    assert {"grade.py", "worker_setup.py", "dispatch/", "gate_in/"} <= set(_members(PACKAGE / "grading"))
    assert "__init__.py" not in _members(PACKAGE / "grading")


def test_each_package_docstring_names_every_module_and_subpackage_in_it():
    missing = [f"{(p / '__init__.py').relative_to(ROOT)}: {name}" for p in _packages()
               for name in _members(p) if name not in _map(p)]
    assert not missing, ("a package's docstring should have a line for each module and subpackage in it, "
                         "starting with its name (`name.py`, `name/`) and saying its one job; missing:\n  "
                         + "\n  ".join(missing))


def test_each_line_of_a_package_map_names_something_there():
    gone = [f"{(p / '__init__.py').relative_to(ROOT)}: {name}" for p in _packages()
            for name in sorted(_map(p)) if not (p / name.rstrip("/")).exists()]
    assert not gone, "a package's docstring names what is not in it (renamed, moved or removed?):\n  " + \
        "\n  ".join(gone)


def test_every_module_a_guide_names_is_a_file_of_the_project():
    """A guide names modules by a path (`grading/gate_in/sandbox.py`) or by their name alone (`judge.py`)."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()  # a new file counts too
    unknown = [f"{guide}: {name}" for guide in GUIDES
               for name in sorted(set(re.findall(r"(?<![\w/.<>-])[\w/]+\.py\b", (ROOT / guide).read_text("utf-8"))))
               if not any(f == name or f.endswith("/" + name) for f in files)]
    assert not unknown, "these guides name modules the project does not have:\n  " + "\n  ".join(unknown)
