#!/usr/bin/env bash
# Install the browser tests' tools (tests/browser/axe/package.json: axe-core) with npm, exactly as locked.
# Skipped when node_modules is newer than the lock file.
set -euo pipefail
cd "$(dirname "$0")/../tests/browser/axe"
if [[ node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0
fi
echo "==> installing the browser tests' accessibility checker (axe-core) with npm"
npm ci --ignore-scripts --no-audit --no-fund
