"""JupyterHub configuration of the FFN course: one server, local accounts, nbgrader's exchange.

setup.sh copies this file next to `course.env` (its settings) in the hub's folder; run the hub
there, as root: `jupyterhub -f jupyterhub_config.py`. A setting in the environment overrides
`course.env` (the course's hub test uses that for its ports and its test authenticator).

- Students and instructors log in with their accounts on the server (PAM) and each get a
  JupyterLab run as themselves (LocalProcessSpawner) from the course's environment.
- The formgrader is a JupyterHub service named after the course: a single-user server run by
  the grading account on the course in its home. Only the group formgrade-<course> may open it.
"""

import os
import sys
from pathlib import Path

COURSE_ID = "ffn-course"


def _settings():
    """course.env's KEY=value lines, overridden by the environment."""
    settings = {}
    env_file = Path(__file__).resolve().with_name("course.env")
    if env_file.exists():
        for line in env_file.read_text(encoding="utf-8").splitlines():
            key, sep, value = line.partition("=")
            if sep and not line.lstrip().startswith("#"):
                settings[key.strip()] = value.strip()
    settings.update({k: v for k, v in os.environ.items() if k.startswith("FFN_")})
    return settings


def without_account(names):
    """The names that are no account on this server: the hub can neither log them in nor start their server."""
    import pwd

    missing = []
    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            missing.append(name)
    return missing


s = _settings()
venv = s["FFN_VENV"]
instructors, students = s.get("FFN_INSTRUCTORS", "").split(), s.get("FFN_STUDENTS", "").split()
c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)
if missing := without_account(instructors + students):  # said at every start, in the hub's log
    print(f"jupyterhub_config.py: no Unix account on this server for {' '.join(missing)}: they cannot log in. "
          "Create them (deploy/jupyterhub/add-user.sh --create NAME) or take them out of course.env.",
          file=sys.stderr, flush=True)

# The proxy listens where users reach it; the hub's own API and the users' servers stay on loopback.
c.JupyterHub.ip = s.get("FFN_HUB_IP", "")
c.JupyterHub.port = int(s.get("FFN_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(s.get("FFN_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s.get('FFN_PROXY_API_PORT', '8001')}"

if s.get("FFN_HUB_AUTH", "pam") == "shared-password":  # tests only: one password for all, from the environment
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = s["FFN_HUB_TEST_PASSWORD"]
c.Authenticator.allowed_users = set(instructors + students)

c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [f"{venv}/bin/jupyterhub-singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.ip = "127.0.0.1"
# nbgrader makes a gradebook by running `alembic`, and its commands run in terminals: the environment's bin/ first.
c.Spawner.environment = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin"}


def _instructor_extras(spawner):
    """Instructors' own servers also get nbgrader's course list, which links to the formgrader service."""
    if spawner.user.name in instructors:
        spawner.environment["JUPYTER_CONFIG_PATH"] = s["FFN_INSTRUCTOR_CONFIG"]


c.Spawner.pre_spawn_hook = _instructor_extras

# Instructors open the grading account's formgrader; the group's name must start with formgrade-.
c.JupyterHub.load_groups = {f"formgrade-{COURSE_ID}": {"users": instructors}}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{COURSE_ID}", "groups": [f"formgrade-{COURSE_ID}"],
     "scopes": [f"access:services!service={COURSE_ID}", "list:services", f"read:services!service={COURSE_ID}"]},
    # A user's server acts with its user's rights, and may see which services exist (names and URLs).
    {"name": "server", "scopes": ["inherit", "list:services", "read:services"]},
]
c.JupyterHub.services = [{
    "name": COURSE_ID,
    "url": f"http://127.0.0.1:{s.get('FFN_SERVICE_PORT', '9999')}",
    "command": [f"{venv}/bin/jupyterhub-singleuser", f"--ServerApp.root_dir={s['FFN_COURSE_DIR']}"],
    "user": s["FFN_GRADER"],
    "cwd": s["FFN_COURSE_DIR"],
    "environment": {"JUPYTERHUB_DEFAULT_URL": "/lab", "PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin"},
    "oauth_no_confirm": True,
}]
