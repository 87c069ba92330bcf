# contextls: `make run` (set up + a real daemon session through the CLI),
# `make test` (set up + every check CI runs). Both work on a fresh clone.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test test-python test-emacs lint typecheck schema bench clean test-vscode vsix mcp-test-clients

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,mcp,semantic,models]'
	# Editors spawn the server often: have its bytecode ready before the first spawn.
	$(BIN)/python -m compileall -q server clients
	touch $(STAMP)

run: setup
	bash scripts/demo.sh

lint: setup
	$(BIN)/ruff check server clients tests

typecheck: setup
	$(BIN)/mypy

schema: setup
	$(BIN)/python -m contextls.protocol.schema

# Everything CI runs: the Python checks and suite, then each editor's stage, every stage
# even when one fails; it ends with one line per stage and the total.
test: setup
	bash scripts/test-all.sh

# ruff, mypy, the schema check and pytest (each run even when one fails).
test-python: setup mcp-test-clients
	bash scripts/test-python.sh

# The MCP tests' outside clients (the TypeScript SDK, the reference filesystem server), from npm.
mcp-test-clients:
	bash scripts/install-mcp-test-clients.sh

# The VS Code extension: lint, typecheck, unit tests, .vsix, and the end-to-end test in a real
# VS Code (code-server + headless Chromium) against the real server. Installs what it needs.
test-vscode: setup
	bash scripts/test-vscode.sh

# The Emacs package: byte-compile (warnings are errors), checkdoc, and ERT in emacs --batch
# against the real server. Installs Debian's emacs-nox when Emacs is missing.
test-emacs: setup
	bash scripts/test-emacs.sh

# editors/vscode/dist/contextls.vsix
vsix:
	bash scripts/test-vscode.sh vsix

bench: setup
	$(BIN)/python tests/bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
