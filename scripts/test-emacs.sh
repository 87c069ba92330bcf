#!/usr/bin/env bash
# The Emacs stage of `make test`: byte-compile (warnings are errors), checkdoc,
# the ERT suite in `emacs --batch`, and the part of it that needs a real
# terminal frame (the mode line as drawn) in `emacs -nw` under tmux; all
# against the real server from .venv, and all twice: with Emacs 28's built-in
# jsonrpc (1.0.14) and with GNU ELPA's current one (test/jsonrpc-elpa/), both at once.
# Installs Debian's emacs-nox and tmux when missing. Ends with
# `N passed, N failed`.
#
# `scripts/test-emacs.sh bench` runs the Emacs benchmarks instead (typing on a
# 246K-character line, redisplay, an add): figures, no pass or fail.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '[test-emacs %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

apt_install() {
    local SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    for attempt in 1 2 3 4 5; do
        if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
                $SUDO apt-get install -y -q "$@" >/dev/null; then
            return 0
        fi
        log "apt is busy (another install?); trying again in a minute ($attempt/5)"
        sleep 60
    done
    return 1
}
missing=()
command -v emacs >/dev/null || missing+=(emacs-nox)
command -v tmux >/dev/null || missing+=(tmux)
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    apt_install "${missing[@]}"
fi
[[ -x .venv/bin/contextls ]] || make setup
log "$(emacs --version | head -1), $(tmux -V)"

LISP="$ROOT/editors/emacs"
TESTS="$LISP/test"
ELPA_JSONRPC="$TESTS/jsonrpc-elpa"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
cp "$LISP"/*.el "$BUILD/"
SOURCES=("$BUILD"/contextls*.el)

export CONTEXTLS_TEST_SERVER="$ROOT/.venv/bin/contextls"
# The tests' daemons and databases stay in temporary directories of their own.
export CONTEXTLS_RUNTIME_DIR="$BUILD/run" CONTEXTLS_STATE_DIR="$BUILD/run"
mkdir -m 700 "$BUILD/run"

if [[ "${1:-}" == "bench" ]]; then
    emacs --batch -Q -L "$BUILD" --eval "(setq byte-compile-error-on-warn t)" \
        -f batch-byte-compile "${SOURCES[@]}"
    log "benchmarks ($(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg))"
    emacs --batch -Q -L "$BUILD" -L "$TESTS" -l "$TESTS/contextls-bench.el" \
        -f contextls-bench-run-batch
    # What is drawn is measured in a real terminal frame.
    tmux -L "contextls-bench-$$" -f /dev/null new-session -d -x 200 -y 50 \
        "env LANG=C.UTF-8 TERM=xterm-256color emacs -nw -Q -L '$BUILD' -L '$TESTS' \
           -l '$TESTS/contextls-terminal-test.el' \
           --eval \"(contextls-terminal-test-run \\\"$BUILD/bench.log\\\" \\\"^contextls-terminal-bench-\\\")\"; \
         echo \$? > '$BUILD/bench.rc'"
    for _ in $(seq 1 600); do [[ -e "$BUILD/bench.rc" ]] && break; sleep 0.2; done
    tmux -L "contextls-bench-$$" kill-server 2>/dev/null || true
    grep '^bench: ' "$BUILD/bench.log" | sed 's/^bench: //'
    exit 0
fi

log "byte-compile (warnings are errors), without gptel installed, with GNU ELPA's jsonrpc"
ELPA_BUILD="$BUILD/elpa"
mkdir "$ELPA_BUILD"
cp "$LISP"/*.el "$ELPA_BUILD/"
emacs --batch -Q -L "$ELPA_JSONRPC" -L "$ELPA_BUILD" --eval "(setq byte-compile-error-on-warn t)" \
    -f batch-byte-compile "$ELPA_BUILD"/contextls*.el
rm -rf "$ELPA_BUILD"

log "byte-compile (warnings are errors), without gptel installed, with Emacs's jsonrpc"
emacs --batch -Q -L "$BUILD" --eval "(setq byte-compile-error-on-warn t)" \
    -f batch-byte-compile "${SOURCES[@]}"

log "checkdoc"
for file in "$LISP"/contextls*.el; do
    emacs --batch -Q -L "$LISP" --eval "
(progn
  (require 'checkdoc)
  (setq checkdoc-spellcheck-documentation-flag nil)
  (let ((warnings 0))
    (advice-add 'display-warning :before (lambda (&rest _) (setq warnings (1+ warnings))))
    (checkdoc-file \"$file\")
    (when (> warnings 0) (message \"checkdoc: %d problems\" warnings) (kill-emacs 1))))"
done

run_suites() {  # $1: a name for the jsonrpc used; $2: a directory put first on load-path, or "";
    # $3: a directory of its own (logs, the tests' daemons), where the counts are written
    local name="$1" first=() work="$3"
    [[ -n "$2" ]] && first=(-L "$2")
    mkdir -m 700 "$work/run"
    export CONTEXTLS_RUNTIME_DIR="$work/run" CONTEXTLS_STATE_DIR="$work/run"
    log "ERT in emacs --batch against $CONTEXTLS_TEST_SERVER, $name"
    emacs --batch -Q "${first[@]}" -L "$BUILD" -L "$TESTS" -l ert \
        -l "$TESTS/contextls-test.el" -l "$TESTS/contextls-gptel-test.el" \
        -l "$TESTS/contextls-sync-test.el" -l "$TESTS/contextls-connection-test.el" --eval "
(let* ((stats (ert-run-tests-batch \"^contextls-\\\\(gptel-\\\\)?test-\"))
       (passed (ert-stats-completed-expected stats))
       (failed (+ (ert-stats-completed-unexpected stats)
                  (- (ert-stats-total stats) (ert-stats-completed stats)))))
  (princ (format \"batch: %d passed, %d failed\n\" passed failed))
  (kill-emacs (if (zerop failed) 0 1)))" >"$work/batch.log" 2>&1 || true
    local batch_line
    batch_line="$(grep -E '^batch: [0-9]+ passed' "$work/batch.log" || echo 'batch: 0 passed, 1 failed')"

    log "ERT in a real terminal frame: emacs -nw in tmux, $name"
    local socket="contextls-test-$$-${work##*/}" results="$work/terminal.log" lisp_path=""
    [[ -n "$2" ]] && lisp_path="-L '$2'"
    tmux -L "$socket" -f /dev/null new-session -d -x 200 -y 50 \
        "env LANG=C.UTF-8 TERM=xterm-256color emacs -nw -Q $lisp_path -L '$BUILD' -L '$TESTS' \
           -l '$TESTS/contextls-terminal-test.el' \
           --eval \"(contextls-terminal-test-run \\\"$results\\\")\"; \
         echo \$? > '$work/terminal.rc'"
    tmux -L "$socket" set-option -g status off >/dev/null
    for _ in $(seq 1 900); do
        [[ -e "$work/terminal.rc" ]] && break
        sleep 0.2
    done
    if [[ ! -e "$work/terminal.rc" ]]; then
        log "the terminal suite did not finish in 180 s; its screen:"
        tmux -L "$socket" capture-pane -p >>"$work/screen.log" 2>&1 || true
    fi
    tmux -L "$socket" kill-server 2>/dev/null || true
    local terminal_line
    terminal_line="$(grep -E '^terminal: [0-9]+ passed' "$results" 2>/dev/null || echo 'terminal: 0 passed, 1 failed')"
    local bp bf tp tf
    read -r bp bf < <(sed -E 's/^batch: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$batch_line")
    read -r tp tf < <(sed -E 's/^terminal: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$terminal_line")
    echo "$name: $batch_line; $terminal_line" >"$work/verdict"
    echo "$((bp + tp)) $((bf + tf))" >"$work/counts"
}

# Both jsonrpc's at once, each with its own daemons and logs: the suites mostly wait on
# the server and on timers, so together they take little more than one. Their logs are
# shown one after the other once both are done.
mkdir "$BUILD/emacs-jsonrpc" "$BUILD/elpa-jsonrpc"
run_suites "Emacs's jsonrpc" "" "$BUILD/emacs-jsonrpc" &
run_suites "GNU ELPA's jsonrpc ($(sed -n 's/^;; Version: //p' "$ELPA_JSONRPC/jsonrpc.el"))" \
    "$ELPA_JSONRPC" "$BUILD/elpa-jsonrpc" &
wait
passed=0
failed=0
for work in "$BUILD/emacs-jsonrpc" "$BUILD/elpa-jsonrpc"; do
    cat "$work/batch.log" "$work/screen.log" "$work/terminal.log" >&2 2>/dev/null || true
    log "$(cat "$work/verdict" 2>/dev/null || echo "${work##*/}: no verdict")"
    read -r p f < <(cat "$work/counts" 2>/dev/null || echo "0 1")
    passed=$((passed + p))
    failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
