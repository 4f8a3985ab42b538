"""deploy/: what can be checked without a server or a cluster (tests/hub/ runs the real hub).

The Kubernetes values file is valid YAML and gives each pod the same Jupyter configuration
as deploy/jupyterhub/ does on one server; the guide's hub section names every deploy file.
"""

import json
import os
import pwd
import shutil
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
    end = guide.index("\n## What this does not do")  # this section, "Past one server" and "Grading on a cluster"
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
    for name, path in {"learner-css-config": "jupyter_server_config.py", "learner-css": "custom/custom.css"}.items():
        on_one_server = (HUB_DIR.parents[1] / "jupyter" / "learner" / path).read_text(encoding="utf-8")
        assert files[name]["stringData"] == on_one_server, f"values.yaml's {name} differs from jupyter/learner/{path}"
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


# ---------------------------------------------------------------- the hub's accounts and service


def _fake_checkout(tmp_path):
    """A copy of deploy/jupyterhub/ in a folder that looks like a checkout (not a git one), and a PATH on which
    configurable-http-proxy is found, so that setup.sh, were it to go past its checks, stops without installing."""
    checkout = tmp_path / "checkout"
    shutil.copytree(HUB_DIR, checkout / "deploy" / "jupyterhub")
    (checkout / "autograder" / "course").mkdir(parents=True)
    (checkout / "autograder" / "course" / "nbgrader_config.py").write_text("", encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "configurable-http-proxy").write_text("#!/bin/sh\n", encoding="utf-8")
    (bin_dir / "configurable-http-proxy").chmod(0o755)
    return checkout, f"{bin_dir}:{os.environ['PATH']}"


def test_setup_names_the_students_without_an_account_and_changes_nothing(tmp_path):
    assert not _exists("ffnt-nosuch1") and not _exists("ffnt-nosuch2") and _exists("daemon")
    checkout, path = _fake_checkout(tmp_path)
    env = {**os.environ, "PATH": path, "FFN_PREFIX": str(tmp_path / "opt"), "FFN_GRADER": "ffnt-never-made",
           "FFN_STUDENTS": "ffnt-nosuch1 daemon ffnt-nosuch2", "FFN_INSTRUCTORS": "nobody"}
    done = subprocess.run([str(checkout / "deploy" / "jupyterhub" / "setup.sh")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert "no Unix account on this server for: ffnt-nosuch1 ffnt-nosuch2." in done.stderr, done.stderr
    assert not (tmp_path / "opt").exists() and not _exists("ffnt-never-made")


def _exists(user):
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def _add_user(prefix, *args):
    return subprocess.run([str(HUB_DIR / "add-user.sh"), *args], env={**os.environ, "FFN_PREFIX": str(prefix)},
                          capture_output=True, text=True, timeout=60)


def test_add_user_checks_the_accounts_then_adds_them_to_the_hubs_settings(tmp_path):
    env_file = tmp_path / "hub" / "course.env"
    env_file.parent.mkdir()
    before = "# written by setup.sh\nFFN_INSTRUCTORS=alice\nFFN_STUDENTS=s1 s2\nFFN_HUB_PORT=8000\n"
    env_file.write_text(before, encoding="utf-8")
    refused = _add_user(tmp_path, "daemon", "ffnt-nosuch1")
    assert refused.returncode == 1 and "no Unix account on this server for: ffnt-nosuch1." in refused.stderr
    assert env_file.read_text(encoding="utf-8") == before  # nothing changed, daemon neither
    for bad in ("Bad;Name", "--admin"):
        done = _add_user(tmp_path, bad)
        assert done.returncode == 1 and ("not a user name" in done.stderr or "unknown option" in done.stderr)
    assert env_file.read_text(encoding="utf-8") == before
    done = _add_user(tmp_path, "daemon")
    assert done.returncode == 0 and "restart it" in done.stdout, done.stderr  # no systemd here
    assert _add_user(tmp_path, "daemon").returncode == 0  # twice: listed once
    assert _add_user(tmp_path, "--instructor", "nobody").returncode == 0
    assert env_file.read_text(encoding="utf-8") == before.replace("FFN_STUDENTS=s1 s2", "FFN_STUDENTS=s1 s2 daemon") \
        .replace("FFN_INSTRUCTORS=alice", "FFN_INSTRUCTORS=alice nobody")


def test_the_hubs_systemd_unit_is_valid_once_setup_fills_it_in(tmp_path):
    venv, hub = tmp_path / "venv", tmp_path / "hub"
    (venv / "bin").mkdir(parents=True)
    hub.mkdir()
    (venv / "bin" / "jupyterhub").write_text("#!/bin/sh\n", encoding="utf-8")
    (venv / "bin" / "jupyterhub").chmod(0o755)
    template = (HUB_DIR / "ffn-course-hub.service").read_text(encoding="utf-8")
    setup = (HUB_DIR / "setup.sh").read_text(encoding="utf-8")
    assert 'sed -e "s|@VENV@|$VENV|g" -e "s|@HUB@|$HUB|g" "$HERE/$UNIT.service" >"$HUB/$UNIT.service"' in setup
    unit = tmp_path / "ffn-course-hub.service"
    unit.write_text(template.replace("@VENV@", str(venv)).replace("@HUB@", str(hub)), encoding="utf-8")
    assert "@" not in unit.read_text(encoding="utf-8").split("[Unit]")[1]
    assert f"ExecStart={venv}/bin/jupyterhub -f {hub}/jupyterhub_config.py" in unit.read_text(encoding="utf-8")
    assert "User=root" in template and "Restart=on-failure" in template and "WantedBy=multi-user.target" in template
    if shutil.which("systemd-analyze"):
        done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- secrets in the Kubernetes manifests


def _secret_volumes(node):
    """(volumes, mounts) of every pod-like part of a manifest: each volume that holds a secret (as a `secret` or a
    projected one) with its name, and each volume mount, wherever in the tree they are listed."""
    volumes, mounts = [], []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("volumes", "extraVolumes") and isinstance(value, list):
                volumes += [v for v in value if isinstance(v, dict) and ("secret" in v or any(
                    "secret" in source for source in (v.get("projected") or {}).get("sources", [])))]
            elif key in ("volumeMounts", "extraVolumeMounts") and isinstance(value, list):
                mounts += value
            else:
                v, m = _secret_volumes(value)
                volumes, mounts = volumes + v, mounts + m
    elif isinstance(node, list):
        for item in node:
            v, m = _secret_volumes(item)
            volumes, mounts = volumes + v, mounts + m
    return volumes, mounts


def _modes(volume):
    """The file modes a secret volume gives: its defaultMode (Kubernetes' 0644 when absent) and each item's own."""
    source = volume.get("secret") or volume["projected"]
    modes = [source.get("defaultMode", 0o644)]
    items = list(source.get("items") or [])
    for projected in source.get("sources", []):
        items += (projected.get("secret") or {}).get("items") or []
    return modes + [item["mode"] for item in items if "mode" in item]


def test_no_secret_is_mounted_where_the_sandbox_shows_files_or_readable_by_others():
    """Student code sees /etc, /usr, ... and the Python prefix read-only (sandbox._SYSTEM, sandbox.required_paths()):
    a secret mounted there, at Kubernetes' default mode 0644, would be printed into a student's feedback."""
    from autograder.grading.gate_in import sandbox

    shown = [*sandbox._SYSTEM, *sandbox.required_paths()]
    found = 0
    for manifest in sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml")):
        for document in yaml.safe_load_all(manifest.read_text(encoding="utf-8")):
            volumes, mounts = _secret_volumes(document)
            secrets = {v["name"] for v in volumes}
            for volume in volumes:
                found += 1
                for mode in _modes(volume):
                    assert isinstance(mode, int) and not mode & 0o007, \
                        f"{manifest.name}: secret volume {volume['name']} has mode {mode!r}, readable by others"
            for mount in mounts:
                if mount.get("name") in secrets:
                    path = os.path.normpath(mount["mountPath"])
                    inside = [d for d in shown if sandbox._inside(path, d) or sandbox._inside(d, path)]
                    assert not inside, f"{manifest.name}: secret {mount['name']} mounted at {path}, shown by " \
                        f"the sandbox ({inside})"
                    assert mount.get("readOnly") is True, f"{manifest.name}: secret {mount['name']} is writable"
    assert found >= 2, "no secret volumes found: the Dask cluster's TLS secrets were expected"


def test_the_dask_cluster_reads_its_tls_files_where_the_secret_is_mounted():
    spec = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "dask-grader.yaml").read_text(encoding="utf-8"))
    for role in ("worker", "scheduler"):
        pod = spec["spec"][role]["spec"]
        [container] = pod["containers"]
        [mount] = [m for m in container["volumeMounts"] if m["name"] == "tls"]
        assert container["securityContext"]["runAsUser"] == 0  # the owner of the secret's files (mode 0400)
        files = {e["name"]: e["value"] for e in container["env"] if e["name"].startswith("DASK_DISTRIBUTED__COMM__TLS")}
        assert len(files) == 3, files
        for name, path in files.items():
            assert os.path.dirname(path) == mount["mountPath"], f"{role}: {name}={path} is not in the secret"
