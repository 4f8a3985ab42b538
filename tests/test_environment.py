"""The conda/Binder environment agrees with pyproject.toml, and Binder's files work."""

import json
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def conda_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    reqs = {}
    for dep in env["dependencies"]:
        assert isinstance(dep, str), f"environment.yml: unexpected entry {dep!r}"
        name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
        reqs[name.lower()] = SpecifierSet(spec)
    return reqs


def test_environment_yml_lists_the_same_packages_and_ranges_as_pyproject():
    conda = conda_requirements()
    for line in PYPROJECT["project"]["dependencies"]:
        req = Requirement(line)
        assert req.name.lower() in conda, f"{req.name} is in pyproject.toml but not in environment.yml"
        assert conda[req.name.lower()] == req.specifier, (
            f"{req.name}: pyproject.toml says {req.specifier}, environment.yml says {conda[req.name.lower()]}")
    extra = set(conda) - {Requirement(r).name.lower() for r in PYPROJECT["project"]["dependencies"]} - {"python", "pip"}
    assert not extra, f"environment.yml has packages pyproject.toml lacks: {sorted(extra)}"


def test_environment_python_range_admits_the_projects_minimum():
    conda_python = conda_requirements()["python"]
    assert "3.11" in conda_python and SpecifierSet(PYPROJECT["project"]["requires-python"]).contains("3.11")


def test_binder_badge_opens_the_first_notebook_of_this_repository():
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"\(https://mybinder\.org/v2/gh/([^/]+/[^/]+)/HEAD\?urlpath=lab/tree/([^)]+)\)", readme)
    assert match, "README.md has no Binder badge link with urlpath=lab/tree/..."
    repo_url = PYPROJECT["project"]["urls"]["Repository"]
    assert repo_url.endswith("/" + match[1]), f"badge points at {match[1]}, pyproject.toml at {repo_url}"
    assert match[2] == "notebooks/00_start_here.ipynb" and (ROOT / match[2]).is_file()


def test_every_relative_link_in_the_readme_exists():
    readme = (ROOT / "README.md").read_text()
    links = [t for t in re.findall(r"\]\(([^)#]+)\)", readme) if "://" not in t]
    assert links
    missing = [t for t in links if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_jupyter_role_configs_parse_and_hide_instructor_parts_from_learners():
    learner = json.loads((ROOT / "jupyter/learner/labconfig/page_config.json").read_text())["disabledExtensions"]
    instructor = json.loads((ROOT / "jupyter/instructor/labconfig/page_config.json").read_text())["disabledExtensions"]
    for plugin in ("formgrader", "create-assignment", "course-list"):
        plugin = f"@jupyter/nbgrader:{plugin}"
        assert learner.get(plugin) is True and plugin not in instructor
    assert "@jupyter/nbgrader:validate-assignment" not in learner
    server = json.loads((ROOT / "jupyter/learner/jupyter_server_config.json").read_text())
    ext = server["ServerApp"]["jpserver_extensions"]
    assert ext["nbgrader.server_extensions.formgrader"] is False
    assert ext["nbgrader.server_extensions.validate_assignment"] is True


def test_binder_start_script_puts_the_learner_config_first(tmp_path):
    out = subprocess.run(["bash", str(ROOT / "start"), "bash", "-c", 'echo "$JUPYTER_CONFIG_PATH"'],
                         capture_output=True, text=True, check=True, cwd=tmp_path,
                         env={**os.environ, "JUPYTER_CONFIG_PATH": "/elsewhere"}).stdout.strip()
    first, rest = out.split(os.pathsep, 1)
    assert Path(first) == ROOT / "jupyter" / "learner" and rest == "/elsewhere"


@pytest.mark.grading
def test_postbuild_installs_the_package_in_a_fresh_virtual_environment(tmp_path):
    """Binder runs postBuild after environment.yml; here, in a fresh venv, the course package installs."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(env_dir)}
    env.pop("PYTHONPATH", None)
    subprocess.run(["bash", str(ROOT / "postBuild")], cwd=ROOT, env=env, check=True, capture_output=True)
    code = ("import importlib.util as u; "
            "print(u.find_spec('ffn_helpers').origin); print(u.find_spec('autograder').origin)")
    origins = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True).stdout.split()
    assert [Path(o).parent for o in origins] == [ROOT / "ffn_helpers", ROOT / "autograder"]
    assert sys.prefix != str(env_dir)
