#!/usr/bin/env bash
# Regenerates tests/fixtures/quantity/parse-v0.30.14.json (see README.md): builds this module
# from the Go module proxy (or the module cache) and feeds it the strings of tools/numaspec_tools/quantity_strings.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && GOFLAGS="-mod=mod -p=1" \
    go build -gcflags=all=-dwarf=false -o "$work/quantity" .)
mkdir -p "$repo/tests/fixtures/quantity"
"$python" -m numaspec_tools.quantity_strings | "$work/quantity" \
    > "$repo/tests/fixtures/quantity/parse-v0.30.14.json"
