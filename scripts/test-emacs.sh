#!/usr/bin/env bash
# The Emacs stage of `make test`: byte-compile (warnings are errors), checkdoc,
# the ERT suite in `emacs --batch`, and the part of it that needs a real
# terminal frame (the mode line as drawn) in `emacs -nw` under tmux; all
# against the real server from .venv. Installs Debian's emacs-nox and tmux
# when missing. Ends with `N passed, N failed`.
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
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
cp "$LISP"/*.el "$BUILD/"
SOURCES=("$BUILD"/contextls*.el)

log "byte-compile (warnings are errors), without gptel installed"
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

export CONTEXTLS_TEST_SERVER="$ROOT/.venv/bin/contextls"
# The tests' daemons and databases stay in temporary directories of their own.
export CONTEXTLS_RUNTIME_DIR="$BUILD/run" CONTEXTLS_STATE_DIR="$BUILD/run"
mkdir -m 700 "$BUILD/run"

log "ERT in emacs --batch against $CONTEXTLS_TEST_SERVER"
emacs --batch -Q -L "$BUILD" -L "$TESTS" -l ert \
    -l "$TESTS/contextls-test.el" -l "$TESTS/contextls-gptel-test.el" --eval "
(let* ((stats (ert-run-tests-batch \"^contextls-\\\\(gptel-\\\\)?test-\"))
       (passed (ert-stats-completed-expected stats))
       (failed (+ (ert-stats-completed-unexpected stats)
                  (- (ert-stats-total stats) (ert-stats-completed stats)))))
  (princ (format \"batch: %d passed, %d failed\n\" passed failed))
  (kill-emacs (if (zerop failed) 0 1)))" 2>&1 | tee "$BUILD/batch.log" >&2 || true
batch_line="$(grep -E '^batch: [0-9]+ passed' "$BUILD/batch.log" || echo 'batch: 0 passed, 1 failed')"

log "ERT in a real terminal frame: emacs -nw in tmux"
SOCKET="contextls-test-$$"
RESULTS="$BUILD/terminal.log"
tmux -L "$SOCKET" -f /dev/null new-session -d -x 200 -y 50 \
    "env LANG=C.UTF-8 TERM=xterm-256color emacs -nw -Q -L '$BUILD' -L '$TESTS' \
       -l '$TESTS/contextls-terminal-test.el' \
       --eval \"(contextls-terminal-test-run \\\"$RESULTS\\\")\"; \
     echo \$? > '$BUILD/terminal.rc'"
tmux -L "$SOCKET" set-option -g status off >/dev/null
for _ in $(seq 1 600); do
    [[ -e "$BUILD/terminal.rc" ]] && break
    sleep 0.2
done
if [[ ! -e "$BUILD/terminal.rc" ]]; then
    log "the terminal suite did not finish in 120 s; its screen:"
    tmux -L "$SOCKET" capture-pane -p >&2 || true
fi
tmux -L "$SOCKET" kill-server 2>/dev/null || true
cat "$RESULTS" >&2 2>/dev/null || true
terminal_line="$(grep -E '^terminal: [0-9]+ passed' "$RESULTS" 2>/dev/null || echo 'terminal: 0 passed, 1 failed')"

read -r batch_passed batch_failed < <(sed -E 's/^batch: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$batch_line")
read -r term_passed term_failed < <(sed -E 's/^terminal: ([0-9]+) passed, ([0-9]+) failed/\1 \2/' <<<"$terminal_line")
passed=$((batch_passed + term_passed))
failed=$((batch_failed + term_failed))
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
