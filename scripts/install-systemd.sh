#!/usr/bin/env bash
# Install nadird as a systemd service on this host, from a checkout, as root:
#   - nadird in a virtualenv under /opt/nadird (NADIRD_VENV): the unit runs
#     with ProtectHome=yes, which hides /home, /root and /run/user, so a
#     nadird installed there could not start;
#   - the `nadird` system user, /etc/nadird and /var/lib/nadird;
#   - the example configs (never overwriting yours) and a CURVE key pair per
#     role in /etc/nadird/keys (`nadird keygen`, never overwriting either);
#   - the manual (docs/, Markdown) in /usr/share/doc/nadird, whose pages the
#     unit's Documentation= names, and the template unit;
#   - with the `replica` extra (Litestream, for master.replica; NADIRD_EXTRAS=
#     installs the core only) and, when /etc/nadird/master.yaml names a
#     file:// replica, a drop-in letting the master write there
#     (ReadWritePaths=, which ProtectSystem=strict needs).
#   sudo scripts/install-systemd.sh            # then: systemctl start nadird@master
# NADIRD_BIN=/path/to/nadird uses an existing install instead of the venv (it
# must not be under /home, /root or /run/user). DESTDIR=DIR writes the files
# under DIR only (no user, no ownership, no systemctl): for packages and tests.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dest="${DESTDIR:-}"
venv="${NADIRD_VENV:-/opt/nadird}"
extras="${NADIRD_EXTRAS-replica}"

fail() {
  echo "install-systemd: $*" >&2
  exit 2
}

hidden_by_protect_home() {
  case "$(readlink -m "$1")" in
    /home | /home/* | /root | /root/* | /run/user | /run/user/*) return 0 ;;
  esac
  return 1
}

if [ -n "${NADIRD_BIN:-}" ]; then
  bin="$NADIRD_BIN"
  run="$bin"
else
  bin="$venv/bin/nadird"
  run="$dest$bin"
  python3 -m venv "$dest$venv"
  "$dest$venv/bin/pip" install --quiet "$here${extras:+[$extras]}"
fi
hidden_by_protect_home "$bin" &&
  fail "$bin is under /home, /root or /run/user, which the unit's ProtectHome=yes hides; install it elsewhere (default: a venv in /opt/nadird)"
[ -x "$run" ] || fail "$run is not an executable nadird"
interpreter="$(head -n 1 "$run" | sed -n 's/^#! *\([^ ]*\).*/\1/p')"
interpreter="${interpreter#"$dest"}" # where it will be once installed
if [ -n "$interpreter" ] && hidden_by_protect_home "$interpreter"; then
  fail "$bin runs $interpreter, which is under /home, /root or /run/user (hidden by ProtectHome=yes)"
fi
"$run" --version >/dev/null || fail "$run --version failed"

owner=(-o root -g nadird)
if [ -n "$dest" ]; then
  owner=()
elif ! id nadird >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/nadird --shell /usr/sbin/nologin nadird
fi
install -d "${owner[@]}" -m 0750 "$dest/etc/nadird" "$dest/etc/nadird/keys" \
  "$dest/etc/nadird/keys/workers"
if [ -n "$dest" ]; then
  install -d -m 0750 "$dest/var/lib/nadird"
else
  install -d -o nadird -g nadird -m 0750 /var/lib/nadird
fi
for role in master worker; do
  if [ ! -e "$dest/etc/nadird/$role.yaml" ]; then
    install "${owner[@]}" -m 0640 "$here/configs/$role.yaml" "$dest/etc/nadird/$role.yaml"
  fi
  # The configs' commented security blocks name these files.
  if [ ! -e "$dest/etc/nadird/keys/$role.key_secret" ]; then
    "$run" keygen --out "$dest/etc/nadird/keys" --name "$role" >/dev/null
    [ -n "$dest" ] || chown nadird:nadird "/etc/nadird/keys/$role.key_secret"
  fi
done
# The manual's pages as Markdown (the reference pages' generated tables need
# `mkdocs build` from a checkout, see the README).
(cd "$here/docs" && find . -name '*.md' -print0) | while IFS= read -r -d '' page; do
  install -D -m 0644 "$here/docs/$page" "$dest/usr/share/doc/nadird/$page"
done
install -d "$dest/etc/systemd/system"
sed "s#^ExecStart=/usr/local/bin/nadird#ExecStart=$bin#" "$here/systemd/nadird@.service" \
  >"$dest/etc/systemd/system/nadird@.service"
# A file:// replica outside the state directory: ProtectSystem=strict makes
# it read-only for the service unless the unit names it. Read with the
# Python beside nadird (its venv's, which has PyYAML).
python="$(dirname "$run")/python"
if [ -x "$python" ] && [ -e "$dest/etc/nadird/master.yaml" ]; then
  replica_dir="$("$python" - "$dest/etc/nadird/master.yaml" <<'PY'
import sys
from urllib.parse import unquote, urlsplit

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    config = yaml.safe_load(f) or {}
url = str((config.get("master") or {}).get("replica") or "")
if url.startswith("file:///"):
    print(unquote(urlsplit(url).path))
PY
)"
  if [ -n "$replica_dir" ]; then
    dropin="$dest/etc/systemd/system/nadird@master.service.d"
    install -d "$dropin"
    printf '# Written by scripts/install-systemd.sh from master.replica.\n[Service]\nReadWritePaths=%s\n' \
      "$replica_dir" >"$dropin/replica.conf"
    if [ -n "$dest" ]; then
      install -d -m 0750 "$dest$replica_dir"
    else
      install -d -o nadird -g nadird -m 0750 "$replica_dir"
    fi
  fi
fi
if [ -n "$dest" ] && [ -z "${NADIRD_BIN:-}" ]; then
  # pip wrote the venv's scripts for where it stood, under DESTDIR: they must
  # name the interpreter where the venv will be once installed.
  for script in "$dest$venv/bin/"*; do
    [ -f "$script" ] && [ ! -L "$script" ] || continue
    first="$(head -c 4096 "$script" | head -n 1 | tr -d '\0')"
    if [[ "$first" == "#!$dest$venv/"* ]]; then
      body="$(tail -n +2 "$script"; echo x)"
      printf '%s\n%s' "#!${first#"#!$dest"}" "${body%x}" >"$script"
    fi
  done
fi
if [ -n "$dest" ]; then
  echo "installed under $dest"
  exit 0
fi
if command -v systemd-run >/dev/null && [ -d /run/systemd/system ]; then
  # The unit's own sandbox: can the service user run nadird with /home hidden?
  systemd-run --quiet --wait --pipe --collect -p User=nadird -p ProtectHome=yes \
    "$bin" --version >/dev/null || fail "nadird does not run as user nadird with ProtectHome=yes"
else
  runuser -u nadird -- "$bin" --version >/dev/null || fail "user nadird cannot run $bin"
fi
systemctl daemon-reload
echo "installed: edit /etc/nadird/{master,worker}.yaml, then"
echo "  systemctl enable --now nadird@master    # or nadird@worker"
echo "  journalctl -u nadird@master -f -o cat   # JSON lines"
