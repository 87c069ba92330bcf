#!/usr/bin/env bash
# `make test`: every stage (Python, VS Code, Emacs), each run even when one before it
# failed, so a person sees everything that is wrong in one run. Ends with one line per
# stage (its `N passed, N failed` and its time) and the total; exits 1 if any failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$SECONDS
summary=()
bad=0
for stage in python vscode emacs; do
    s=$SECONDS
    out=$(mktemp)
    make --no-print-directory "test-$stage" | tee "$out"
    rc=${PIPESTATUS[0]}
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
    rm -f "$out"
    verdict=ok
    if ((rc != 0)); then verdict=FAILED; bad=$((bad + 1)); fi
    summary+=("$(printf '%-12s %-7s %-26s %4ds' "test-$stage" "$verdict" "${counts:-no count}" $((SECONDS - s)))")
done
echo
echo "== make test"
printf '%s\n' "${summary[@]}"
printf '%-12s %-7s %-26s %4ds\n' total "$([[ $bad == 0 ]] && echo ok || echo FAILED)" "$bad of 3 stages failed" $((SECONDS - START))
((bad == 0))
