#!/usr/bin/env bash
# The long kill -9 durability run: 200 runs by default, each killing the
# real server 0-25 ms after an answer and checking that nothing answered was lost.
#   tests/soak/kill9.sh [RUNS]        CONTEXTLS_KILL_SEED=N to repeat a run
set -euo pipefail
cd "$(dirname "$0")/../.."
CONTEXTLS_KILL_RUNS="${1:-200}" exec .venv/bin/python -m pytest -q -s -p no:cacheprovider \
    tests/e2e/test_durability.py
