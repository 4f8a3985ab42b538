#!/usr/bin/env bash
# Set up the FFN course on one Debian or Ubuntu server with JupyterHub and nbgrader's exchange.
# Run as root from a checkout of the course:  sudo deploy/jupyterhub/setup.sh
#
# What it does (each step is skipped when already done, so it can run again after a `git pull`):
#   1. system packages: Python's venv, bubblewrap and libseccomp (the grading sandbox), Node and npm, and
#      configurable-http-proxy from npm (JupyterHub's proxy);
#   2. one Python environment for the hub and every user's server, $FFN_PREFIX/venv, with
#      JupyterHub and the course (numpy, nbgrader 0.9.6, JupyterLab...), and its
#      environment-wide Jupyter configuration (nbgrader_config.py, learner/): learners get the
#      Assignments panel and Validate, not the formgrader;
#   3. the grading account $FFN_GRADER, with the course copied into its home (the gradebook
#      lives there, readable by it alone) and the formgrader enabled for it only (grader/);
#   4. the exchange $FFN_EXCHANGE, where students fetch and submit;
#   5. the hub's folder $FFN_PREFIX/hub: jupyterhub_config.py and its settings, course.env;
#   6. the systemd service ffn-course-hub, enabled and (re)started, where systemd runs the machine.
# Every name in FFN_INSTRUCTORS and FFN_STUDENTS must already be an account on the server: it stops,
# naming those that are not, before changing anything. add-user.sh adds users later.
#
# Settings (environment variables; the defaults are the instructor guide's):
FFN_PREFIX=${FFN_PREFIX:-/opt/ffn-course}              # the environment and the hub's state
FFN_GRADER=${FFN_GRADER:-grader-ffn-course}            # the grading account (made if missing)
FFN_EXCHANGE=${FFN_EXCHANGE:-/srv/nbgrader/exchange}   # nbgrader's exchange (Exchange.root)
FFN_INSTRUCTORS=${FFN_INSTRUCTORS:-}                   # hub users who may use the formgrader (space-separated)
FFN_STUDENTS=${FFN_STUDENTS:-}                         # the other hub users (space-separated)
FFN_PYTHON=${FFN_PYTHON:-/usr/bin/python3}             # every user runs it: not one under a private home
FFN_JUPYTERHUB=${FFN_JUPYTERHUB:-jupyterhub>=6.1,<7}   # the release series tests/hub/ runs (6.1.1)
FFN_HUB_PORT=${FFN_HUB_PORT:-8000}                     # the proxy's public port (put TLS in front of it)
FFN_HUB_IP=${FFN_HUB_IP:-}                             # where the proxy listens ("" = every interface)
FFN_HUB_AUTH=${FFN_HUB_AUTH:-pam}                      # pam: the server's own accounts and passwords
set -euo pipefail

COURSE_ID=ffn-course  # autograder/course/nbgrader_config.py's course_id; the formgrader service is named after it
UNIT=ffn-course-hub   # the systemd service (ffn-course-hub.service)
HERE=$(cd "$(dirname "$0")" && pwd)
CHECKOUT=$(cd "$HERE/../.." && pwd)
VENV=$FFN_PREFIX/venv
HUB=$FFN_PREFIX/hub
GRADER_HOME=$(getent passwd "$FFN_GRADER" | cut -d: -f6 || true)
COURSE=${GRADER_HOME:-/home/$FFN_GRADER}/ffn-course
step() { printf '\n--- setup: %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0): it creates an account and installs system packages"
[ -f "$CHECKOUT/autograder/course/nbgrader_config.py" ] || die "$CHECKOUT is not a checkout of the course"

# The hub logs users in with PAM and starts each server as its user: every name must be an account here.
missing=()
for name in $FFN_INSTRUCTORS $FFN_STUDENTS; do
    id -u "$name" >/dev/null 2>&1 || missing+=("$name")
done
((${#missing[@]} == 0)) || die "no Unix account on this server for: ${missing[*]}. Create them first
(useradd --create-home NAME, then passwd NAME) or leave them out of FFN_INSTRUCTORS/FFN_STUDENTS; nothing
was changed. Later, deploy/jupyterhub/add-user.sh --create NAME adds one without running setup.sh again."

step "system packages"
need=()
"$FFN_PYTHON" -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
command -v bwrap >/dev/null || need+=(bubblewrap)
ldconfig -p | grep 'libseccomp\.so\.2 ' >/dev/null || need+=(libseccomp2)  # the sandbox's seccomp filter (pyseccomp loads it)
command -v npm >/dev/null || need+=(nodejs npm)
command -v git >/dev/null || need+=(git)
if ((${#need[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
command -v configurable-http-proxy >/dev/null || npm install --global --silent configurable-http-proxy
"$FFN_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$FFN_PYTHON is older than 3.11"

git -C "$CHECKOUT" rev-parse --git-dir >/dev/null 2>&1 \
    || die "$CHECKOUT is not a git checkout: clone the course's repository (its file list comes from git)"

step "the grading account $FFN_GRADER"
id -u "$FFN_GRADER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$FFN_GRADER"
GRADER_HOME=$(getent passwd "$FFN_GRADER" | cut -d: -f6)
COURSE=$GRADER_HOME/ffn-course
chmod 700 "$GRADER_HOME"  # the gradebook, the solutions and every submission live here
as_grader() { runuser -u "$FFN_GRADER" -- env HOME="$GRADER_HOME" PATH="$VENV/bin:/usr/local/bin:/usr/bin:/bin" "$@"; }

step "the course, copied into $COURSE"
# The checkout's tracked and new files (not .venv, nor the checkout's own gradebook): a later run
# brings the code up to date and keeps the grading account's gradebook and folders.
mkdir -p "$COURSE"
git -C "$CHECKOUT" ls-files -z --cached --others --exclude-standard \
    | (cd "$CHECKOUT" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$COURSE"
chown -R "$FFN_GRADER:" "$COURSE"

step "the environment $VENV (JupyterHub and the course)"
[ -x "$VENV/bin/python" ] || "$FFN_PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet "$COURSE[grading]" "$FFN_JUPYTERHUB"  # grading: the sandbox's seccomp filter
chmod a+rx "$FFN_PREFIX" && chmod -R a+rX "$VENV"  # every user runs it; not the hub's folder

step "learners' side: the Assignments panel and Validate, no formgrader (environment-wide)"
# Environment-wide = read by every user's server and nbgrader: the course id and the exchange.
install -D -m 644 "$HERE/nbgrader_config.py" "$VENV/etc/jupyter/nbgrader_config.py"
sed -i "s|^EXCHANGE = .*|EXCHANGE = \"$FFN_EXCHANGE\"|" "$VENV/etc/jupyter/nbgrader_config.py"
# Files, not `jupyter ... enable/disable` commands: the same effect, and each command takes seconds.
install -m 644 "$HERE/learner/jupyter_server_config.json" "$VENV/etc/jupyter/jupyter_server_config.json"
install -D -m 644 "$HERE/learner/labconfig/page_config.json" "$VENV/etc/jupyter/labconfig/page_config.json"
# How JupyterLab shows the notebooks' mathematics: the course's stylesheet, the one `make lab` uses.
install -m 644 "$HERE/../../jupyter/learner/jupyter_server_config.py" "$VENV/etc/jupyter/jupyter_server_config.py"
install -D -m 644 "$HERE/../../jupyter/learner/custom/custom.css" "$VENV/etc/jupyter/custom/custom.css"

# Instructors' own servers add nbgrader's course list, a link to the formgrader (jupyterhub_config.py
# puts this folder on their JUPYTER_CONFIG_PATH).
install -D -m 644 "$HERE/instructor/jupyter_server_config.json" "$FFN_PREFIX/instructor/jupyter_server_config.json"
install -D -m 644 "$HERE/instructor/labconfig/page_config.json" "$FFN_PREFIX/instructor/labconfig/page_config.json"

step "the grading account's side: the formgrader on the course"
# The account's own ~/.jupyter outranks the environment's configuration: the formgrader, for it alone.
install -d -o "$FFN_GRADER" -m 700 "$GRADER_HOME/.jupyter" "$GRADER_HOME/.jupyter/labconfig"
for file in jupyter_server_config.py jupyter_server_config.json nbgrader_config.py labconfig/page_config.json; do
    install -o "$FFN_GRADER" -m 600 "$HERE/grader/$file" "$GRADER_HOME/.jupyter/$file"
done
sed -i "s|^COURSE = .*|COURSE = \"$COURSE/autograder/course\"|" "$GRADER_HOME/.jupyter/nbgrader_config.py"
# The formgrader works on nbgrader's source notebooks, autograder/course/source/<id>/<id>.ipynb, made from the authored .py.
(cd "$COURSE" && as_grader python -c 'from autograder.authoring import build; build.write_sources()')

step "the exchange $FFN_EXCHANGE"
# nbgrader wants its root world-writable (it checks rwx for all). The sticky bit, which it does not
# check, keeps anyone but its owner from renaming or deleting the course's folder in it, made here
# by the grading account: else a student could move it away and put up a course of their own.
install -d -m 1777 "$FFN_EXCHANGE"
chmod 1777 "$FFN_EXCHANGE"
install -d -o "$FFN_GRADER" -m 755 "$FFN_EXCHANGE/$COURSE_ID"

step "the hub's folder $HUB"
install -d -m 700 "$HUB"
install -m 644 "$HERE/jupyterhub_config.py" "$HUB/jupyterhub_config.py"
cat >"$HUB/course.env" <<ENV
# Read by jupyterhub_config.py; written by deploy/jupyterhub/setup.sh.
FFN_VENV=$VENV
FFN_INSTRUCTOR_CONFIG=$FFN_PREFIX/instructor
FFN_GRADER=$FFN_GRADER
FFN_COURSE_DIR=$COURSE/autograder/course
FFN_INSTRUCTORS=$FFN_INSTRUCTORS
FFN_STUDENTS=$FFN_STUDENTS
FFN_HUB_IP=$FFN_HUB_IP
FFN_HUB_PORT=$FFN_HUB_PORT
FFN_HUB_AUTH=$FFN_HUB_AUTH
ENV
chmod 600 "$HUB/course.env"

step "the hub as a systemd service, $UNIT"
sed -e "s|@VENV@|$VENV|g" -e "s|@HUB@|$HUB|g" "$HERE/$UNIT.service" >"$HUB/$UNIT.service"
if [ -d /run/systemd/system ]; then  # systemd runs this machine: the hub starts now and at every boot
    install -m 644 "$HUB/$UNIT.service" "/etc/systemd/system/$UNIT.service"
    systemctl daemon-reload
    systemctl enable --quiet "$UNIT"
    systemctl restart "$UNIT"  # a later run (after a git pull) brings the running hub up to date
    started="the hub runs as the systemd service $UNIT (systemctl status $UNIT; journalctl -u $UNIT)"
else
    started="no systemd on this machine: start the hub (as root) with  cd $HUB && $VENV/bin/jupyterhub -f jupyterhub_config.py"
fi

step "done"
echo "$started"
echo "More users later: deploy/jupyterhub/add-user.sh [--instructor] NAME..."
echo "Instructors: http://<server>:$FFN_HUB_PORT/services/$COURSE_ID/ (formgrader); students: http://<server>:$FFN_HUB_PORT/"
