#!/usr/bin/env bash
# Regenerate the example vault's trade notes from the JSON inputs in examples/trades/.
#
# Replaces only Pilot/Trades/, Pilot/Journal/ and Pilot/Reflections/ (and the `trade`
# events of .memvault/events.jsonl) of the vault, then records every examples/trades/*.json
# file, in date order, with `memvault trade record --no-learn` (the bundled Inbox.md is
# left alone). Dates follow the time zone in the vault's Profile.md. Finishes with doctor.
#
#   examples/regenerate.sh                 # regenerate examples/vault in place
#   examples/regenerate.sh /tmp/copy       # regenerate another copy of the vault
#
# memvault is run as `$MEMVAULT_PYTHON -m memvault` when MEMVAULT_PYTHON is set, else the
# `memvault` command on PATH, else `python3 -m memvault`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
vault="${1:-$here/vault}"
py="${MEMVAULT_PYTHON:-python3}"
if [[ -n "${MEMVAULT_PYTHON:-}" ]]; then
    mv_cmd=("$MEMVAULT_PYTHON" -m memvault)
elif command -v memvault >/dev/null 2>&1; then
    mv_cmd=(memvault)
else
    mv_cmd=(python3 -m memvault)
fi
[[ -d "$vault/.memvault" ]] || { echo "error: $vault is not a memvault vault" >&2; exit 1; }

home="$vault/Pilot"
for folder in Trades Journal Reflections; do
    mkdir -p "$home/$folder"
    find "$home/$folder" -maxdepth 1 -type f -name '*.md' -delete
done
events="$vault/.memvault/events.jsonl"
if [[ -f "$events" ]]; then
    "$py" - "$events" <<'PY'
import json, sys
path = sys.argv[1]
kept = []
for line in open(path, encoding="utf-8"):
    try:
        if json.loads(line).get("type") == "trade":
            continue
    except ValueError:
        pass
    kept.append(line)
with open(path, "w", encoding="utf-8") as fh:
    fh.writelines(kept)
PY
    [[ -s "$events" ]] || rm -f "$events"
fi

for input in "$here"/trades/*.json; do
    "${mv_cmd[@]}" --vault "$vault" --quiet trade record --no-learn "$input"
done
"${mv_cmd[@]}" --vault "$vault" doctor || true  # report only; the notes are recorded
