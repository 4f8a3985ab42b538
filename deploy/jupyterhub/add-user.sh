#!/usr/bin/env bash
# Let more people into the course's hub, without running setup.sh again.
#   sudo deploy/jupyterhub/add-user.sh student3 student4            # students
#   sudo deploy/jupyterhub/add-user.sh --instructor carol           # instructors (they may open the formgrader)
#   sudo deploy/jupyterhub/add-user.sh --create student5            # make the Unix account first (no password:
#                                                                   #   set one with passwd for PAM logins)
# Each name must be an account on this server (the hub logs in with PAM and starts each server as its
# user). The names are added to the hub's course.env, which jupyterhub_config.py reads at start, and the
# hub is restarted when it runs as the systemd service ffn-course-hub; otherwise restart it yourself.
FFN_PREFIX=${FFN_PREFIX:-/opt/ffn-course}  # as given to setup.sh
set -euo pipefail

UNIT=ffn-course-hub
ENV_FILE=$FFN_PREFIX/hub/course.env
die() { printf 'add-user: %s\n' "$*" >&2; exit 1; }

key=FFN_STUDENTS create=0 names=()
for arg in "$@"; do
    case $arg in
        --instructor) key=FFN_INSTRUCTORS ;;
        --create) create=1 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        -*) die "unknown option $arg; expected --instructor, --create or user names" ;;
        *) [[ $arg =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] \
               || die "'$arg' is not a user name (expected lower-case letters, digits, _ or -, at most 32)"
           names+=("$arg") ;;
    esac
done
((${#names[@]})) || die "no user name given; usage: add-user.sh [--instructor] [--create] NAME..."
[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0): it edits the hub's settings and restarts it"
[ -f "$ENV_FILE" ] || die "no $ENV_FILE: run deploy/jupyterhub/setup.sh first (or set FFN_PREFIX as you gave it)"

missing=()
for name in "${names[@]}"; do
    id -u "$name" >/dev/null 2>&1 && continue
    if ((create)); then useradd --create-home --shell /bin/bash "$name"; else missing+=("$name"); fi
done
((${#missing[@]} == 0)) || die "no Unix account on this server for: ${missing[*]}. Create them first
(useradd --create-home NAME, then passwd NAME), or run again with --create; nothing was changed."

current=$(sed -n "s/^$key=//p" "$ENV_FILE" | tail -n 1)
for name in "${names[@]}"; do
    [[ " $current " == *" $name "* ]] || current="${current:+$current }$name"
done
if grep -q "^$key=" "$ENV_FILE"; then
    sed -i "s/^$key=.*/$key=$current/" "$ENV_FILE"
else
    echo "$key=$current" >>"$ENV_FILE"
fi
echo "$key=$current (in $ENV_FILE)"

if [ -d /run/systemd/system ] && systemctl is-active --quiet "$UNIT"; then
    systemctl restart "$UNIT" && echo "restarted $UNIT: they can log in now"
else
    echo "the hub reads course.env when it starts: restart it to let them in"
fi
