#!/usr/bin/env bash
# install-mcp-test-clients.sh -- the MCP tests' clients nobody here wrote, from npm, into
# tests/mcp/node_modules: the official TypeScript SDK (its Client drives `contextls mcp` in
# tests/mcp/client.mjs) and the reference filesystem server (the startup floor of
# tests/bench/bench_mcp_start.py). Installs Debian's nodejs and npm when node is missing.
# Does nothing when node_modules already came from this very lockfile.
set -euo pipefail

DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/mcp" && pwd)
STAMP=$DIR/node_modules/.contextls-lock-sha
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "[mcp-test-clients] apt-get install nodejs npm" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm >&2
fi
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
if [[ -f $STAMP && $(cat "$STAMP") == "$want" ]]; then exit 0; fi
echo "[mcp-test-clients] npm ci in $DIR" >&2
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
echo "$want" >"$STAMP"
