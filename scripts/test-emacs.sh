#!/usr/bin/env bash
# The Emacs stage of `make test`: byte-compile (warnings are errors), checkdoc,
# and the ERT suite in `emacs --batch` against the real server from .venv.
# Installs Debian's emacs-nox when Emacs is missing. Ends with `N passed, N failed`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '[test-emacs %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if ! command -v emacs >/dev/null; then
    log "installing emacs-nox"
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q emacs-nox >/dev/null
fi
[[ -x .venv/bin/contextls ]] || make setup
log "$(emacs --version | head -1)"

LISP="$ROOT/editors/emacs"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
cp "$LISP/contextls.el" "$BUILD/"

log "byte-compile (warnings are errors)"
emacs --batch -Q -L "$BUILD" --eval "(setq byte-compile-error-on-warn t)" \
    -f batch-byte-compile "$BUILD/contextls.el"

log "checkdoc"
emacs --batch -Q -L "$LISP" --eval "
(progn
  (require 'checkdoc)
  (setq checkdoc-spellcheck-documentation-flag nil)
  (let ((warnings 0))
    (advice-add 'display-warning :before (lambda (&rest _) (setq warnings (1+ warnings))))
    (checkdoc-file \"$LISP/contextls.el\")
    (when (> warnings 0) (message \"checkdoc: %d problems\" warnings) (kill-emacs 1))))"

log "ERT against $ROOT/.venv/bin/contextls"
CONTEXTLS_TEST_SERVER="$ROOT/.venv/bin/contextls" emacs --batch -Q -L "$BUILD" \
    -l ert -l "$LISP/test/contextls-test.el" --eval "
(let* ((stats (ert-run-tests-batch \"^contextls-test-\"))
       (passed (ert-stats-completed-expected stats))
       (failed (+ (ert-stats-completed-unexpected stats)
                  (- (ert-stats-total stats) (ert-stats-completed stats)))))
  (princ (format \"%d passed, %d failed\n\" passed failed))
  (kill-emacs (if (zerop failed) 0 1)))"
