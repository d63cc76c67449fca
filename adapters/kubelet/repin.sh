#!/usr/bin/env bash
# Pin a new patch or pre-release of a kubelet minor numaspec already models (a
# release candidate, the release itself, a patch): README.md, "A new release
# of a modelled minor". The day it is served, one command:
#   1. builds the minor's current pin (the base),
#   2. moves the minor's row of releases.json to the new version, regenerates
#      its go.mod/go.sum (gen-gomod.sh) and builds it,
#   3. carries the expectations manifest over to the new version's name,
#   4. prints numaspec's behaviour diff of the two builds (RUN-19: the suite's
#      vectors at the release, random merges small and large),
#   5. runs the suite against the new build with its manifest,
# and then says what is left to do by hand (the gate table, the pre-release
# named in numaspec, the release-delta chapter).
# Usage: ./repin.sh VERSION [--cases N] [--seed S]
#   VERSION  v1.38.0-rc.0, v1.38.0, v1.37.3 ... (the minor must be in
#            releases.json)
# Exit status: 0 when the new build answers every question as the old one and
# the suite passes; 1 when something changed or the suite fails (the pin is
# kept: read the diff, then update the spec or revert releases.json); 2 on bad
# usage or a failed build (releases.json and the go.mod are put back).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
usage() { sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
new="$1"; shift
cases=20000; seed=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="${2:?--cases N}"; shift 2 ;;
    --seed) seed="${2:?--seed S}"; shift 2 ;;
    *) echo "repin.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$new" =~ ^v1\.([0-9]+)\.[0-9]+(-[0-9A-Za-z.]+)?$ ]] || {
  echo "repin.sh: $new is not a kubernetes version such as v1.38.0-rc.0" >&2; exit 2; }
minor="1.${BASH_REMATCH[1]}"

numaspec="$here/../../.venv/bin/numaspec"
[ -x "$numaspec" ] || numaspec="$(command -v numaspec || true)"
[ -n "$numaspec" ] || { echo "numaspec is not installed: run the README's first command" >&2; exit 2; }

table="$here/releases.json"
row="$(grep "\"minor\": *\"$minor\"" "$table" || true)"
[ -n "$row" ] || { echo "repin.sh: kubelet $minor is not pinned (releases.json); a new minor is README.md, \"Adding a release\"" >&2; exit 2; }
old="$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' <<<"$row")"
dir="$(sed -n 's/.*"dir": *"\([^"]*\)".*/\1/p' <<<"$row")"
[ "$old" != "$new" ] || { echo "repin.sh: kubelet $minor is already pinned at $new" >&2; exit 2; }

echo "== kubelet $minor: $old -> $new ($dir)" >&2
"$here/build.sh" "$dir" || exit 2
base="$here/bin/kubelet-adapter-$old"
keep="$(mktemp -d)"
trap 'rm -rf "$keep"' EXIT
cp "$table" "$here/$dir/go.mod" "$here/$dir/go.sum" "$keep/"
restore() {
  cp "$keep/releases.json" "$table"
  cp "$keep/go.mod" "$keep/go.sum" "$here/$dir/"
  echo "repin.sh: $1; releases.json and $dir/go.mod put back" >&2
  exit 2
}
python3 - "$table" "$minor" "$old" "$new" <<'EOF' || restore "could not rewrite releases.json"
import sys
path, minor, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
row = next(line for line in text.splitlines() if f'"minor": "{minor}"' in line)
open(path, "w", encoding="utf-8").write(text.replace(row, row.replace(f'"{old}"', f'"{new}"')))
EOF
"$here/gen-gomod.sh" "$new" "$dir" || restore "gen-gomod.sh $new $dir failed (a module the proxy does not serve? see $dir/extra.gomod)"
"$here/build.sh" "$dir" || restore "the build of $new failed (a kubelet signature that changed: README.md, \"Adding a release\", step 4)"
patched="$here/bin/kubelet-adapter-$new"

manifest_old="$here/expectations/kubelet-$old.json"
manifest="$here/expectations/kubelet-$new.json"
if [ -f "$manifest_old" ] && [ ! -f "$manifest" ]; then
  sed "s/${old//./\\.}/$new/g; s/${old#v}/${new#v}/g" "$manifest_old" > "$manifest"
  git -C "$here" mv -f "$manifest_old" "$manifest" 2>/dev/null || rm -f "$manifest_old"
  echo "== expectations: $manifest_old -> $manifest (its IDs are per minor; reasons name $new)" >&2
fi

# VER-1: what numaspec says of the version it read, when the minor is or was a pre-release
prerelease_note() {
  local versions="$here/../../reference/topology/versions.py"
  if [[ "$new" == *-* ]]; then
    echo "  - reference/topology/versions.py PRERELEASES: ${minor#1.} -> \"${new#v}\" (the pre-release"
    echo "    read; spec/topology/versions.md, spec/conformance/releases.md and the README name it)"
  elif grep -q "PRERELEASES.*\b${minor#1.}:" "$versions" 2>/dev/null; then
    echo "  - reference/topology/versions.py PRERELEASES: drop ${minor#1.} ($new is the release), and"
    echo "    DEFAULT becomes $minor; spec/topology/versions.md, spec/conformance/releases.md and the README say so"
  else
    echo "  - (a patch of a released minor: nothing to rename)"
  fi
}

status=0
echo "== what changed: numaspec behaviour-diff (RUN-19), $old against $new" >&2
"$numaspec" behaviour-diff --base "exec:$base" --patched "exec:$patched" \
  --cases "$cases" --seed "$seed" --no-progress || status=1
echo "== the suite against $new, with its manifest" >&2
reports="$here/build/repin-$new"
"$numaspec" conformance --impl "exec:$patched" --expectations "$manifest" \
  --out "$reports" --seed "$seed" || status=1

cat >&2 <<EOF

== pinned kubelet $minor at $new ($([ "$status" = 0 ] && echo "nothing changed, the suite passes" || echo "read what changed above"))
The suite's reports: $reports
Left to do by hand:
  - the feature gates of $new: adapters/kubelet/gates/gen.sh $new (spec/data/feature-gates.json)
$(prerelease_note)
  - spec/conformance/releases.md: re-read the diff of $old and $new (function by function) and carry any
    change into the chapters
  - binaries of $old are no longer built: rm $base when done
  - commit releases.json, $dir/go.mod, $dir/go.sum and the manifest
EOF
exit "$status"
