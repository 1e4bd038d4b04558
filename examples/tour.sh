#!/usr/bin/env bash
# A five-minute tour of memvault on the bundled example vault.
#
# Copies examples/vault to a temporary folder (the bundled vault is never modified),
# then lists Sam's facts, remembers a new one, shows it with its history, forgets one,
# shows the byte diff of Memory.md (only the touched lines change), prints the context
# block an assistant would get, and runs doctor.
# Needs no network and no accounts.
#
#   bash examples/tour.sh                   # run the tour, delete the copy afterwards
#   TOUR_DIR=/tmp/vault bash examples/tour.sh   # keep the copy in /tmp/vault (must not exist)
#
# memvault is run as `$TOUR_PYTHON -m memvault` when TOUR_PYTHON is set, else the
# `memvault` command on PATH, else `python3 -m memvault`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_vault="$here/examples/vault"

if [[ -n "${TOUR_PYTHON:-}" ]]; then
    mv_cmd=("$TOUR_PYTHON" -m memvault)
elif command -v memvault >/dev/null 2>&1; then
    mv_cmd=(memvault)
else
    mv_cmd=(python3 -m memvault)
fi
py="${TOUR_PYTHON:-python3}"

if [[ -n "${TOUR_DIR:-}" ]]; then
    if [[ -e "$TOUR_DIR" ]]; then
        echo "error: $TOUR_DIR already exists; pick a new folder for the copy" >&2
        exit 1
    fi
    vault="$TOUR_DIR"
    mkdir -p "$(dirname "$vault")"
else
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/memvault-tour.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    vault="$tmp/vault"
fi
cp -R "$source_vault" "$vault"

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi

show() {  # print a command line, quoting arguments that hold spaces
    local line="$" arg
    for arg in "$@"; do
        if [[ "$arg" == *" "* ]]; then line+=" \"$arg\""; else line+=" $arg"; fi
    done
    printf '\n%s%s%s\n' "$bold" "$line" "$plain"
}

step() {
    show memvault "$@"
    "${mv_cmd[@]}" --vault "$vault" "$@"
}

echo "memvault tour: a copy of examples/vault is in $vault"
echo "(open it in Obsidian to see the same files as notes)"

# 1. What does memvault know about Sam? The 8 most recent facts (--all for every fact).
step memory list

# 2. Sam states a new preference: saved at once, with a fresh id and timestamp.
new_fact="I prefer gas costs in USD, not gwei"
step remember "$new_fact" --category presentation
new_id="$("${mv_cmd[@]}" --vault "$vault" memory list --json | "$py" -c '
import json, sys
print(next(f["id"] for f in json.load(sys.stdin)["facts"] if f["text"] == sys.argv[1]))
' "$new_fact")"

# 3. One fact with its metadata and its history from .memvault/events.jsonl.
step memory show "$new_id"

# 4. Forget by text: memvault shows what matches; --yes confirms without a prompt.
#    The text leaves Memory.md; a content-free tombstone is kept.
step forget "offline on Sundays" --yes

# 5. Only the touched lines of Memory.md changed; every other byte is as Sam wrote it.
show diff examples/vault/Pilot/Memory.md "<copy>/Pilot/Memory.md"
diff "$source_vault/Pilot/Memory.md" "$vault/Pilot/Memory.md" || true

# 6. What an assistant puts in its prompt: Sam's limits, then the remembered facts,
#    quoted as untrusted data.
step context

# 7. A health check: the hand-written bullet without an id is reported as info (exit 0).
step doctor

echo
echo "tour done. Your own vault: memvault init ~/Notes && memvault --vault ~/Notes remember \"...\""
