#!/usr/bin/env bash
# Regenerate spec/data/feature-gates.json: for each kubelet release, build gates (main.go and
# specs_*.go) against k8s.io/kubernetes@<release> with every k8s.io staging module pinned to
# v0.X.Y (the pattern of ../gen-gomod.sh), run it, and merge its JSON into the data file.
# Run by hand, never by CI.  Usage: ./gen.sh [v1.X.Y ...]  (default: RELEASES below).
# Needs Go >= 1.26 and the Go module proxy; each release is built in a temporary directory
# that is removed afterwards (the module and build caches keep what was downloaded).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="$here/../../../spec/data/feature-gates.json"
# The newest patch of each minor release numaspec models that the module proxy was seen to
# serve, with its staging modules, when the data was generated (1.18: v1.18.20 was tagged, but
# its staging modules v0.18.20 never were, so v1.18.19; 1.36: v1.36.5 is not in the checksum
# database, so v1.36.4).
RELEASES=(v1.18.19 v1.19.16 v1.20.15 v1.21.14 v1.22.17 v1.23.17 v1.24.17 v1.25.16 v1.26.15
  v1.27.16 v1.28.15 v1.29.15 v1.30.14 v1.31.14 v1.32.13 v1.33.13 v1.34.9 v1.35.8 v1.36.4
  v1.37.2 v1.38.0-beta.0)
if [ "$#" -gt 0 ]; then RELEASES=("$@"); fi
# A release whose module needs a newer Go than the machine's: the toolchain the go command
# fetches from the module proxy for it, and the requirements of its module graph the proxy
# does not serve, replaced by the nearest it serves (nothing built here imports either).
toolchain() { case "$1" in v1.38.*) echo go1.27.3 ;; *) echo "${GOTOOLCHAIN:-auto}" ;; esac; }
unserved() {
  case "$1" in
    v1.38.*)
      echo "	sigs.k8s.io/structured-merge-diff/v7 => sigs.k8s.io/structured-merge-diff/v7 v7.0.0"
      echo "	k8s.io/ktesting => ./stub/k8s.io/ktesting" ;;
  esac
}
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir "$work/out"
modcache="$(go env GOMODCACHE)"
find "$modcache/cache/download" -name '*.zip' | sort > "$work/zips-before"
touch "$work/modules"

# extras <kubernetes source dir>: the Go statements registering gates into
# DefaultMutableFeatureGate outside pkg/features in kubelet's own command and packages
# (cmd/kubelet, pkg/kubelet), as "alias import/path" lines.
extras() {
  local src="$1" f alias path
  grep -rlE --include='*.go' '[A-Za-z0-9_]+\.AddFeatureGates\(utilfeature\.DefaultMutableFeatureGate\)' \
    "$src/cmd/kubelet" "$src/pkg/kubelet" 2>/dev/null | grep -v '_test\.go$' | while read -r f; do
    for alias in $(grep -oE '[A-Za-z0-9_]+\.AddFeatureGates\(utilfeature\.DefaultMutableFeatureGate\)' "$f" \
        | sed 's/\..*//' | sort -u); do
      path="$(sed -nE "s#^\s*$alias\s+\"([^\"]+)\".*#\1#p" "$f" | head -1)"
      [ -n "$path" ] || path="$(sed -nE "s#^\s*\"([^\"]*/$alias)\".*#\1#p" "$f" | head -1)"
      echo "$alias $path ${f#"$src"/}"
    done
  done | sort -u
}

one() {
  local ver="$1" minor staging started d json gomod_file src mods ex tags others
  minor="$(sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/' <<<"$ver")"
  staging="v0.${ver#v1.}"
  export GOTOOLCHAIN; GOTOOLCHAIN="$(toolchain "$ver")"
  started=$SECONDS
  d="$work/$minor"; mkdir -p "$d"
  cp "$here/main.go" "$here"/specs_*.go "$d/"
  json="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$ver")"
  gomod_file="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$json")"
  src="$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$json")"
  mods="$(sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/src/.*#\1#p' "$gomod_file" | sort -u)"
  {
    echo "module numaspec.invalid/gates"
    echo; if [ "$GOTOOLCHAIN" = auto ]; then echo "go 1.26"; else echo "go ${GOTOOLCHAIN#go}"; fi; echo
    echo "require k8s.io/kubernetes $ver"; echo
    echo "replace ("
    for m in $mods; do
      if unserved "$ver" | grep -q "^	$m =>"; then continue; fi
      echo "	$m => $m $staging"
    done
    unserved "$ver"
    if unserved "$ver" | grep -q '=> ./stub/k8s.io/ktesting'; then
      # an empty package: go mod tidy resolves the tests' import, and no build compiles it
      mkdir -p "$d/stub/k8s.io/ktesting" && echo "module k8s.io/ktesting" > "$d/stub/k8s.io/ktesting/go.mod"
      echo "package ktesting" > "$d/stub/k8s.io/ktesting/doc.go"
    fi
    # 1.19's module graph names vbom.ml/util, whose host is gone and which the proxy refuses;
    # nothing built here imports it, so an empty stand-in module satisfies the graph.
    if grep -q 'vbom.ml/util' "$gomod_file"; then
      echo "	vbom.ml/util => ./stub/vbom.ml/util"
      mkdir -p "$d/stub/vbom.ml/util" && echo "module vbom.ml/util" > "$d/stub/vbom.ml/util/go.mod"
    fi
    echo ")"
  } > "$d/go.mod"
  # What kubelet registers beyond pkg/features; other registrations under pkg/ are listed for
  # review (none of them was in kubelet's import graph when this was written).
  ex="$(extras "$src")"
  {
    echo "package main"; echo
    echo "import ("
    echo "	utilruntime \"k8s.io/apimachinery/pkg/util/runtime\""
    echo "	utilfeature \"k8s.io/apiserver/pkg/util/feature\""
    while read -r alias path _; do [ -n "$alias" ] && echo "	$alias \"$path\""; done <<<"$ex"
    echo ")"; echo
    echo "func registerExtras() {"
    while read -r alias _ _; do
      [ -n "$alias" ] && echo "	utilruntime.Must($alias.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))"
    done <<<"$ex"
    echo "	_ = utilruntime.Must"
    echo "	_ = utilfeature.DefaultMutableFeatureGate"
    echo "}"
  } > "$d/extras.go"
  tags=""
  if grep -q 'AddVersioned(' "$src/pkg/features/kube_features.go"; then tags="-tags=versioned"; fi
  (cd "$d" && go mod tidy >"$d/tidy.log" 2>&1) || { cat "$d/tidy.log" >&2; return 1; }
  mkdir "$work/out/$minor"
  (cd "$d" && go build $tags -o gates . && ./gates > "$work/out/$minor/$minor.json") || return 1
  echo "$minor: $ver, $(grep -c '"preRelease"' "$work/out/$minor/$minor.json") gates, extras: $(tr '\n' ';' <<<"$ex"), $((SECONDS - started)) s" >&2
  others="$(grep -rlE --include='*.go' 'DefaultMutableFeatureGate\.Add|AddFeatureGates\(utilfeature\.DefaultMutableFeatureGate\)' \
    "$src/pkg" | grep -v '_test\.go$' | grep -vE '/pkg/(features|kubelet)/' || true)"
  [ -z "$others" ] || echo "  review: other registrations under pkg/: ${others//$src\//}" >&2
  echo "$ver" > "$work/out/$minor/$minor.source"
  (cd "$d" && go list -deps $tags -f '{{with .Module}}{{.Path}}@{{.Version}}{{end}}' . | sort -u) \
    >> "$work/modules"
  python3 "$here/merge.py" "$data" "$work/out/$minor"
  chmod -R u+w "$d"; rm -rf "$d"
}

failed=()
for ver in "${RELEASES[@]}"; do
  one "$ver" || { echo "$ver: FAILED" >&2; failed+=("$ver"); }
done
# What this run added to the module cache: the zips of the modules the builds used that were
# not there when it started (other downloads meanwhile are not counted).
added=0
while IFS=@ read -r path version; do
  [ -n "$version" ] || continue
  esc="$(sed -E 's/([A-Z])/!\L\1/g' <<<"$path")"
  zip="$modcache/cache/download/$esc/@v/$version.zip"
  if [ -f "$zip" ] && ! grep -qxF "$zip" "$work/zips-before"; then
    added=$((added + $(stat -c %s "$zip")))
  fi
done < <(sort -u "$work/modules")
echo "module zips added by this run: $((added / 1048576)) MiB" >&2
[ "${#failed[@]}" -eq 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
