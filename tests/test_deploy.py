"""deploy/: what can be checked without a server or a cluster (tests/hub/ runs the real hub).

The Kubernetes values file is valid YAML and gives each pod the same Jupyter configuration
as deploy/jupyterhub/ does on one server; the guide's hub section names every deploy file.
"""

import json
import os
import subprocess
from pathlib import Path
from unittest import mock

import yaml
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
HUB_DIR = ROOT / "deploy" / "jupyterhub"
VALUES = ROOT / "deploy" / "kubernetes" / "values.yaml"


def _values():
    return yaml.safe_load(VALUES.read_text(encoding="utf-8"))


def _guide_hub_sections():
    guide = (ROOT / "autograder" / "README.md").read_text(encoding="utf-8")
    start = guide.index("## The class that outgrows one laptop")
    end = guide.index("\n## ", guide.index("\n## ", start + 1) + 1)  # this section and "Past one server"
    return guide[start:end]


def test_values_file_is_yaml_for_the_chart():
    values = _values()
    assert set(values) <= {"hub", "singleuser", "cull", "proxy", "scheduling", "prePuller"}, sorted(values)
    mounts = {m["mountPath"] for m in values["singleuser"]["storage"]["extraVolumeMounts"]}
    assert "/srv/nbgrader/exchange" in mounts
    compile(values["hub"]["extraConfig"]["ffn-course"], "extraConfig", "exec")  # Python the hub will run


def test_values_file_gives_pods_the_same_jupyter_config_as_one_server():
    files = _values()["singleuser"]["extraFiles"]
    pairs = {"learner-server": "learner/jupyter_server_config.json",
             "learner-lab": "learner/labconfig/page_config.json",
             "grader-server": "grader/jupyter_server_config.json", "grader-lab": "grader/labconfig/page_config.json"}
    for name, path in pairs.items():
        on_one_server = json.loads((HUB_DIR / path).read_text(encoding="utf-8"))
        on_one_server.get("disabledExtensions", {}).pop("@jupyterlab/apputils-extension:announcements", None)
        assert files[name]["data"] == on_one_server, f"values.yaml's {name} differs from deploy/jupyterhub/{path}"
    for name, path in {"nbgrader-config": "nbgrader_config.py", "grader-nbgrader": "grader/nbgrader_config.py"}.items():
        assert _settings(files[name]["stringData"]).keys() == _settings((HUB_DIR / path).read_text()).keys(), name


def _settings(source):
    """The (section, trait) pairs a Jupyter config file sets."""
    c = Config()
    exec(compile(source, "config", "exec"), {"get_config": lambda: c})
    return {(section, trait): value for section in c for trait, value in c[section].items()}


def test_the_one_server_config_files_load():
    assert _settings((HUB_DIR / "nbgrader_config.py").read_text())[("CourseDirectory", "course_id")] == "ffn-course"
    hub = Config()
    env = {"FFN_VENV": "/opt/ffn-course/venv", "FFN_GRADER": "grader-ffn-course", "FFN_INSTRUCTORS": "alice bob",
           "FFN_STUDENTS": "s1", "FFN_COURSE_DIR": "/home/grader-ffn-course/ffn-course/autograder"}
    source = (HUB_DIR / "jupyterhub_config.py").read_text()
    namespace = {"get_config": lambda: hub, "__file__": str(HUB_DIR / "jupyterhub_config.py")}
    with mock.patch.dict(os.environ, env):
        exec(compile(source, "jupyterhub_config.py", "exec"), namespace)
    assert hub.JupyterHub.hub_ip == "127.0.0.1" and hub.Spawner.ip == "127.0.0.1"
    assert hub.Authenticator.allowed_users == {"alice", "bob", "s1"}
    [service] = hub.JupyterHub.services
    assert service["name"] == "ffn-course" and service["user"] == "grader-ffn-course"
    assert service["url"].startswith("http://127.0.0.1:")
    subprocess.run(["bash", "-n", str(HUB_DIR / "setup.sh")], check=True)


def test_the_guide_points_at_every_deploy_file():
    section = _guide_hub_sections()
    for path in sorted((ROOT / "deploy").rglob("*")):
        if path.is_file():
            assert str(path.relative_to(ROOT)) in section, f"the guide's hub sections do not name {path}"
