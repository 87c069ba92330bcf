#!/usr/bin/env bash
# test-vscode.sh -- every check of the VS Code extension (editors/vscode), from a fresh machine:
# installs what is missing (Debian chromium, ripgrep, build tools; code-server from npm into a
# cache dir outside the repository), then `npm ci`, lint, typecheck, unit tests, build, package
# (.vsix), and the end-to-end test in code-server against the real server (.venv/bin/contextls).
#
# Usage: scripts/test-vscode.sh          all of the above; the last line is `N passed, N failed`
#        scripts/test-vscode.sh vsix     only build editors/vscode/dist/contextls.vsix
#        scripts/test-vscode.sh bench [REF]
#                                        what activation costs VS Code, this build against REF's
#                                        (default: 6137563, which started its server in
#                                        activate() on first use), in code-server; RUNS=5 profiles
# Screenshots and logs of the e2e run: editors/vscode/test-artifacts/e2e/
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXT=$ROOT/editors/vscode
MODE=${1:-all}
START=$SECONDS

log() { printf '[test-vscode %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; echo "0 passed, 1 failed"; exit 1; }
export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# Node.js 20 and npm (vsce, playwright and code-server need 20; Debian bookworm's nodejs is 18, so
# vscode-e2e-env.sh then takes Node 20 from the npm registry). Puts it first on PATH.
use_node() {
  local out; out=$(bash "$ROOT/scripts/vscode-e2e-env.sh" "$1") || die "installing the e2e environment failed"
  CODE_SERVER=$(sed -n 's/^CODE_SERVER=//p' <<<"$out")
  export PATH=$(sed -n 's/^NODE_BIN=//p' <<<"$out"):$PATH
}

# npm ci, unless node_modules already came from this very lockfile.
npm_ci() {
  local stamp=$EXT/node_modules/.contextls-lock-sha
  local want; want=$(sha256sum "$EXT/package-lock.json" | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then log "node_modules up to date"; return 0; fi
  log "npm ci"
  (cd "$EXT" && npm ci --no-audit --no-fund >&2) || return 1
  echo "$want" >"$stamp"
}

if [[ $MODE == vsix ]]; then
  use_node node
  npm_ci || die "npm ci failed"
  (cd "$EXT" && npm run --silent package >&2) || die "packaging failed"
  log "built $EXT/dist/contextls.vsix"
  exit 0
fi
if [[ $MODE == bench ]]; then
  use_node all
  npm_ci || die "npm ci failed"
  (cd "$EXT" && npm run --silent package >&2) || die "packaging failed"
  # the base: the build that awaited its server in activate() on first use (~170 ms) and had no
  # startup check, or REF
  ref=${2:-6137563}
  base=$(mktemp -d)
  git -C "$ROOT" archive "$ref" editors/vscode clients/protocol | tar -x -C "$base" || die "cannot read $ref"
  ln -s "$EXT/node_modules" "$base/editors/vscode/node_modules"
  (cd "$base/editors/vscode" && npm run --silent package >&2) || die "packaging $ref failed"
  log "base: $(git -C "$ROOT" log -1 --format='%h %s' "$ref" | cut -c1-100)"
  log "load before: $(uptime)"
  (cd "$EXT" && CODE_SERVER=$CODE_SERVER CONTEXTLS_BIN=$ROOT/.venv/bin/contextls \
     node test/bench/activation.cjs "$base/editors/vscode/dist/contextls.vsix" "$EXT/dist/contextls.vsix")
  rc=$?
  rm -rf "$base"
  exit $rc
fi
[[ $MODE == all ]] || die "usage: $0 [all|vsix|bench [REF]]"

passed=0 failed=0
# A stage that is not a test suite (lint, typecheck, build): a failure counts as one failed.
stage() {
  local name=$1 s=$SECONDS; shift
  log "== $name"
  if (cd "$EXT" && "$@") >&2; then log "$name ok ($((SECONDS - s))s)"; return 0; fi
  log "$name FAILED"; failed=$((failed + 1)); return 1
}

[[ -x $ROOT/.venv/bin/contextls ]] || (cd "$ROOT" && make setup >&2) || die "make setup failed"
use_node all
log "setup done ($((SECONDS - START))s): node $(node --version), code-server $CODE_SERVER"

npm_ci || die "npm ci failed"
stage lint npm run --silent lint
stage typecheck npm run --silent typecheck

log "== unit tests"
unit_log=$(mktemp)
(cd "$EXT" && npm run --silent test:unit) >"$unit_log" 2>&1
unit_rc=$?
grep -E '^not ok|^# (tests|pass|fail)' "$unit_log" >&2
unit_pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$unit_log")
unit_fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$unit_log")
if [[ -z $unit_pass || -z $unit_fail ]]; then
  tail -30 "$unit_log" >&2; unit_pass=0; unit_fail=1
elif ((unit_rc != 0 && unit_fail == 0)); then
  unit_fail=1
fi
rm -f "$unit_log"
passed=$((passed + unit_pass)) failed=$((failed + unit_fail))

if stage package npm run --silent package; then
  log "== e2e (code-server + Chromium + contextls serve)"
  e2e_log=$(mktemp)
  (cd "$EXT" && CODE_SERVER=$CODE_SERVER CONTEXTLS_BIN=$ROOT/.venv/bin/contextls \
     ARTIFACTS=$EXT/test-artifacts/e2e timeout -k 10 600 node test/e2e/e2e.cjs) 2>&1 | tee "$e2e_log" >&2
  line=$(grep -E '^e2e: [0-9]+ passed, [0-9]+ failed$' "$e2e_log" | tail -1)
  if [[ $line =~ ^e2e:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
  else
    failed=$((failed + 1))
  fi
  rm -f "$e2e_log"
  log "screenshots and logs: $EXT/test-artifacts/e2e"
else
  failed=$((failed + 1))   # no package, no e2e
fi

log "VS Code stage took $((SECONDS - START))s"
echo "$passed passed, $failed failed"
((failed == 0))
