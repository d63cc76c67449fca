#!/usr/bin/env bash
# Run the smoke request streams (testdata/*.jsonl, written for release 1.37)
# through built binaries: each stream's "release" is rewritten to the
# binary's own minor, and each binary runs under every -variant. Prints one
# line per answer: <version> <variant> <stream>#<seq> <answer JSON>.
# Usage: ./smoke.sh [bin/dra-allocator-v0.35.0 ...]  (default: every bin/dra-allocator-*)
#        VARIANTS="auto stable" STREAMS="count all" ./smoke.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then bins=(bin/dra-allocator-v*); fi
variants=(${VARIANTS:-auto stable incubating experimental})
streams=(${STREAMS:-pcieroot count all firstavailable celerror missingclass twopools invalidpool})
for b in "${bins[@]}"; do
  ver="$("$b" -version)"
  minor="1.$(cut -d. -f2 <<<"$ver")"
  for v in "${variants[@]}"; do
    for s in "${streams[@]}"; do
      sed "s/\"release\":\"1.37\"/\"release\":\"$minor\"/" "testdata/$s.jsonl" \
        | timeout 60 "$b" -variant "$v" \
        | while IFS= read -r line; do
            case "$line" in
              *'"ready":'*) ;;
              *) seq="$(sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' <<<"$line")"
                 echo "$ver $v $s#$seq $line" ;;
            esac
          done
    done
  done
done
