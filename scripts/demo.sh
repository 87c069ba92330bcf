#!/usr/bin/env bash
# A scripted contextls session against this repository (the README's `make run`).
#
# It marks a few files and regions, pins one, overflows a 6,000-token window
# so eviction shows, searches the archive by words and by meaning (after the
# daemon has embedded it), restores an item, and prints the
# status and the rendered markdown. Every command goes through one contextls
# daemon, started by the first of them and stopped at the end. State lives in
# a temporary directory (CONTEXTLS_STORAGE, CONTEXTLS_CONFIG_DIR and the
# daemon's CONTEXTLS_RUNTIME_DIR), so your own windows and daemon are untouched.
#
# Usage: scripts/demo.sh        (from anywhere; it works on the repository root)
#        CONTEXTLS=/path/to/contextls scripts/demo.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONTEXTLS="${CONTEXTLS:-$ROOT/.venv/bin/contextls}"
PYTHON="$(dirname "$CONTEXTLS")/python"
STATE="$(mktemp -d)"
export CONTEXTLS_STORAGE="$STATE/context.sqlite3"
export CONTEXTLS_CONFIG_DIR="$STATE/config"
export CONTEXTLS_RUNTIME_DIR="$STATE/run"
export CONTEXTLS_STATE_DIR="$STATE"
trap '"$CONTEXTLS" daemon stop >/dev/null 2>&1; rm -rf "$STATE"' EXIT

if [[ -t 1 ]]; then BOLD=$'\e[1m' DIM=$'\e[2m' PLAIN=$'\e[0m'; else BOLD='' DIM='' PLAIN=''; fi

# Print a command like a shell transcript, then run it (stderr goes to the
# terminal too: that is where evictions are reported).
run() {
    printf '\n%s$ contextls %s%s\n' "$BOLD" "$*" "$PLAIN"
    "$CONTEXTLS" "$@"
}
say() { printf '\n%s# %s%s\n' "$DIM" "$*" "$PLAIN"; }

say "The first command starts your contextls daemon; the CLI and editors share it."
run config set maxTokens 6000
run daemon status

say "Mark context: a pinned file, a region, an error we just hit, and a file."
run add pyproject.toml --pin
run add server/contextls/protocol/methods.py:1-30
printf '%s\n' 'Traceback (most recent call last):' \
    '  File "server/contextls/app/settings.py", line 88, in apply_settings' \
    "KeyError: 'maxTokens'" > "$STATE/traceback.txt"
printf '\n%s$ contextls add-text --kind error < traceback.txt%s\n' "$BOLD" "$PLAIN"
"$CONTEXTLS" add-text --kind error < "$STATE/traceback.txt"
run add server/contextls/core/secrets.py
run status

say "A whole directory is more than the window holds: contextls says by how much, and adds nothing."
run add server/contextls/core || true
say "Part of it fits, but only by evicting most of the window: asked plainly, contextls refuses;"
say "--dry-run shows what would go, --force does it. The new files never evict each other, and"
say "every eviction is reported."
run add 'server/contextls/core/t*.py' || true
run add 'server/contextls/core/t*.py' --dry-run
run add 'server/contextls/core/t*.py' --force
run ls

say "Evicted items are searchable by words, and by meaning once the daemon has embedded"
say "them (when idle, in the background; --wait waits for it and says how much is left)."
run search --wait KeyError maxTokens
run search --mode semantic "which files usually hold credentials"
restored_id="$("$CONTEXTLS" search KeyError maxTokens --json 2>/dev/null \
    | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["hits"][0]["item"]["id"])')"
run restore "$restored_id"

say "What an LLM gets: contextls show | your-llm-cli (first 40 lines here)."
printf '\n%s$ contextls show | head -n 40%s\n' "$BOLD" "$PLAIN"
"$CONTEXTLS" show > "$STATE/context.md"
head -n 40 "$STATE/context.md"
printf '%s[... %s lines in all]%s\n' "$DIM" "$(wc -l < "$STATE/context.md" | tr -d ' ')" "$PLAIN"

run status
