#!/usr/bin/env bash
# Install the official MCP conformance suite (@modelcontextprotocol/conformance) and the
# Node >= 22 it needs (the node-<os>-<cpu> package of this platform: no install scripts run),
# from this folder's package.json and package-lock.json, into <repo>/.cache/npm-conformance
# (git-ignored). Idempotent: nothing is fetched when the installed lock matches. Needs npm.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
target="$root/.cache/npm-conformance"
suite="$target/node_modules/@modelcontextprotocol/conformance/dist/index.js"
node="$target/node_modules/.bin/node"
if [ -f "$suite" ] && [ -x "$node" ] && cmp -s "$here/package-lock.json" "$target/package-lock.json"; then
  exit 0
fi
mkdir -p "$target"
cp "$here/package.json" "$here/package-lock.json" "$target/"
npm ci --prefix "$target" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
test -f "$suite" && test -x "$node"
