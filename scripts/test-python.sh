#!/usr/bin/env bash
# The Python stage of `make test`: ruff, mypy, the schema check and pytest, each run even
# when one before it failed, so one run shows everything wrong. Ends with
# `N passed, N failed` (pytest's tests, plus one failure per check that failed).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN=.venv/bin
log() { printf '[test-python %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
failed=0
passed=0
check() {
    local name=$1 s=$SECONDS; shift
    if "$@" >&2; then log "$name ok ($((SECONDS - s))s)"; else log "$name FAILED"; failed=$((failed + 1)); fi
}
check ruff "$BIN/ruff" check server clients tests
check mypy "$BIN/mypy"
check schema "$BIN/python" -m contextls.protocol.schema --check

# Independent test files run on every core (each worker has its own daemons and state
# folders: tests/conftest.py); a test that hangs fails alone after $PYTEST_TIMEOUT s.
workers=${PYTEST_WORKERS:-auto}
log "pytest on $workers workers"
report=$(mktemp)
s=$SECONDS
"$BIN/python" -m pytest -q -p no:cacheprovider -n "$workers" --dist loadfile \
    --timeout "${PYTEST_TIMEOUT:-600}" --durations=15 2>&1 | tee "$report" >&2
pytest_rc=${PIPESTATUS[0]}
line=$(grep -E '^(=+ )?[0-9]+ (passed|failed)' "$report" | tail -1)
rm -f "$report"
count() { local n; n=$(grep -oE "[0-9]+ $1" <<<"$line" | grep -oE '^[0-9]+'); echo "${n:-0}"; }
p=$(count passed)
f=$(($(count failed) + $(count 'errors?')))
((pytest_rc != 0 && f == 0)) && f=1
passed=$((passed + p)) failed=$((failed + f))
log "pytest: ${line:-no summary} ($((SECONDS - s))s)"
echo "$passed passed, $failed failed"
((failed == 0))
