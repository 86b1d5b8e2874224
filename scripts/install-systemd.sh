#!/usr/bin/env bash
# Install nadird as a systemd service on this host: a system user, the state
# and config directories, the example configs (never overwriting yours) and
# the template unit. Run as root from a checkout, after `pip install .` put
# `nadird` on the PATH (or set NADIRD_BIN).
#   sudo scripts/install-systemd.sh            # then: systemctl start nadird@master
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${NADIRD_BIN:-$(command -v nadird || true)}"
if [ -z "$bin" ]; then
  echo "install-systemd: nadird is not on the PATH; pip install it or set NADIRD_BIN" >&2
  exit 2
fi
if ! id nadird >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/nadird --shell /usr/sbin/nologin nadird
fi
install -d -o root -g nadird -m 0750 /etc/nadird
install -d -o nadird -g nadird -m 0750 /var/lib/nadird
for role in master worker; do
  if [ ! -e "/etc/nadird/$role.yaml" ]; then
    install -o root -g nadird -m 0640 "$here/configs/$role.yaml" "/etc/nadird/$role.yaml"
  fi
done
sed "s#^ExecStart=/usr/local/bin/nadird#ExecStart=$bin#" "$here/systemd/nadird@.service" \
  > /etc/systemd/system/nadird@.service
systemctl daemon-reload
echo "installed: edit /etc/nadird/{master,worker}.yaml, then"
echo "  systemctl enable --now nadird@master    # or nadird@worker"
echo "  journalctl -u nadird@master -f -o cat   # JSON lines"
