#!/usr/bin/env bash
# Install the TypeScript language server the lsp tests drive, from this folder's
# package.json and package-lock.json, into <repo>/.cache/npm-lsp (git-ignored).
# Idempotent: nothing is fetched when the installed lock matches. Needs npm.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
target="$root/.cache/npm-lsp"
bin="$target/node_modules/.bin/typescript-language-server"
if [ -x "$bin" ] && cmp -s "$here/package-lock.json" "$target/package-lock.json"; then
  exit 0
fi
mkdir -p "$target"
cp "$here/package.json" "$here/package-lock.json" "$target/"
npm ci --prefix "$target" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
test -x "$bin"
