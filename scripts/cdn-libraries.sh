#!/usr/bin/env bash
# Install the CDN libraries HIT pages load (server/cdn/package.json) with npm, exactly as locked.
# Skipped when node_modules is newer than the lock file; installs npm with apt when it is missing.
set -euo pipefail
cd "$(dirname "$0")/../server/cdn"
if [[ node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0
fi
echo "==> installing the CDN libraries for HIT pages (jQuery, jQuery UI, Bootstrap, Font Awesome) with npm"
if ! command -v npm >/dev/null; then
  echo "==> npm is missing: installing it with apt"
  if [[ $(id -u) -eq 0 ]]; then apt-get update -q && apt-get install -y -q npm; else sudo apt-get install -y -q npm; fi
fi
# --ignore-scripts: the packages are static files; nothing of theirs needs to run here.
npm ci --ignore-scripts --no-audit --no-fund
