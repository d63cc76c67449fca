#!/usr/bin/env bash
# Build, for each pinned kubelet release dir v1_*, its one binary
# bin/kubelet-adapter-<k8s.io/kubernetes version> (from the module root): the
# numaspec adapter protocol, "node" the node probe, "merge" the merge oracle
# (README.md). Binaries of the former layout (kubelet-merge-*, kubelet-node-*)
# are removed.
# Each release is built with its row of releases.json, the table of pinned
# releases: the version is stamped into the binary (-ldflags -X, what
# -version prints), after checking that the release's go.mod pins that same
# k8s.io/kubernetes; and the shared sources (release/, mergeonly/) get the
# release's build tags, kubelet1.1 ... kubelet1.N for release 1.N (as Go's
# go1.N tags: "1.N or later"), which pick each file's form for that release.
# A row with a "toolchain" (1.38: go1.27.3, its module needs Go >= 1.27) runs
# that release's go commands with GOTOOLCHAIN set to it, and only that
# release's: the others keep the go command's own toolchain.
# Modules come from the Go module proxy (go.mod/go.sum are committed;
# nothing else is fetched).
# Usage: ./build.sh [v1_30 | 1.30 ...]   (module dirs or minors; default: every
#        release in releases.json)
#        ./build.sh -tags v1_30          (print the release's build tags, e.g.
#        for go vet -tags "$(../build.sh -tags v1_30)" in v1_30/)
#        ./build.sh --patch FILE [--name NAME] 1.37
#        ./build.sh --source DIR [--name NAME] 1.37
#                    a patched kubelet (README.md, "A kubelet change before it
#                    merges"): the release with a unified diff against
#                    k8s.io/kubernetes at its tag applied (FILE), or a local
#                    kubernetes source tree (DIR), as
#                    bin/kubelet-adapter-<version>+<NAME> (NAME: the patch's
#                    file name without .patch/.diff, or "local").
#        ./build.sh --go-test FILE [--patch PATCH] 1.37
#                    run kubelet's own go test on the release (patched when
#                    asked) with FILE, a numaspec vectors export --go test,
#                    dropped into pkg/kubelet/cm/topologymanager.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

# The compiler writes no DWARF: the binaries are stripped when linked (-s -w)
# anyway, and a first build with empty Go caches spends about 14% less CPU
# (kubelet 1.37's adapter: 587 s of CPU instead of 683; docs/guides/benchmarks.md).
# Every go build and go test of the test run passes it, so they share one cache.
nodwarf=-gcflags=all=-dwarf=false

# field <row> <name>: a string field of one releases.json row.
field() { sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" <<<"$1"; }

# row <dir or minor>: the release's row of releases.json (one line each).
row() {
  local d="${1%/}" r
  case "$d" in 1.*) d="v1_${d#1.}" ;; esac
  r="$(grep "\"dir\": *\"$d\"" releases.json || true)"
  [ -n "$r" ] || { echo "no release $d in releases.json" >&2; exit 1; }
  echo "$r"
}

# use_toolchain <row>: export GOTOOLCHAIN as the release's row names it
# ("toolchain"), for the go commands of that release only (call it in a
# subshell, or in a mode that builds one release); a row without one leaves
# the environment as it is.
use_toolchain() {
  local tc
  tc="$(field "$1" toolchain)"
  if [ -n "$tc" ]; then export GOTOOLCHAIN="$tc"; fi
}

# tags <minor>: kubelet1.1,...,kubelet1.N for minor 1.N.
tags() {
  local n="${1#1.}" i out=""
  for ((i = 1; i <= n; i++)); do out+="${out:+,}kubelet1.$i"; done
  echo "$out"
}

if [ "${1:-}" = "-tags" ]; then
  [ $# -eq 2 ] || { echo "usage: $0 -tags v1_30" >&2; exit 2; }
  r="$(row "$2")"
  tags "$(field "$r" minor)"
  exit 0
fi

# why_not <patch> <git apply's errors>: the first error on one line, a failed
# hunk named by file and number ("policy.go: hunk #2 (at line 303) does not
# match").
why_not() {
  local line file at n
  line="$(grep -m1 '^error: ' <<<"$2" || true)"; line="${line#error: }"
  case "$line" in
    "patch failed: "*)
      file="${line#patch failed: }"; at="${file##*:}"; file="${file%:*}"
      n="$(awk -v f="$file" -v at="$at" '
        /^\+\+\+ / { cur = $2; sub(/^b\//, "", cur); k = 0; next }
        /^@@ / && cur == f { k++; split($2, a, ","); if (substr(a[1], 2) == at) { print k; exit } }
      ' "$1")"
      echo "$file: hunk #${n:-?} (at line $at) does not match the release's file" ;;
    *"No such file or directory") echo "${line%%: No such file*}: no such file in the release" ;;
    "") echo "git apply failed: $(head -1 <<<"$2")" ;;
    *) echo "$line" ;;
  esac
}

# copy_release <dir> <version> <work> [patch]: k8s.io/kubernetes at the
# release, copied to <work>/kubernetes (the module cache's files linked, those
# the patch changes copied), with the patch applied when given. A patch that
# does not apply stops the build with one line naming the file and hunk.
copy_release() {
  local d="$1" ver="$2" work="$3" path="${4:-}" src f err
  src="$(cd "$d" && go mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [ -d "$src" ] || { echo "k8s.io/kubernetes@$ver: not in the module cache after go mod download" >&2; exit 1; }
  chmod -R u+w "$work/kubernetes" 2>/dev/null || true
  rm -rf "$work/kubernetes"
  mkdir -p "$work"
  cp -rl "$src" "$work/kubernetes"
  find "$work/kubernetes" -type d -exec chmod u+w {} +
  [ -n "$path" ] || return 0
  # the files the patch touches, as real copies (a hard link would let the
  # patch write into the module cache)
  while read -r f; do
    [ -f "$src/$f" ] || continue
    rm -f "$work/kubernetes/$f"
    cp "$src/$f" "$work/kubernetes/$f"
    chmod u+w "$work/kubernetes/$f"
  done < <(sed -n 's#^+++ [ab]/\([^[:space:]]*\).*#\1#p; s#^--- [ab]/\([^[:space:]]*\).*#\1#p' "$path" | sort -u)
  if ! err="$(cd "$work/kubernetes" && GIT_CEILING_DIRECTORIES="$work" git apply --check -p1 "$path" 2>&1)"; then
    echo "$(basename "$path") does not apply to k8s.io/kubernetes $ver: $(why_not "$path" "$err")" >&2
    chmod -R u+w "$work" 2>/dev/null || true
    rm -rf "$work"
    exit 1
  fi
  (cd "$work/kubernetes" && GIT_CEILING_DIRECTORIES="$work" git apply -p1 "$path")
}

# go_test <test file> <patch or ""> <dir or minor>: kubelet's own
# pkg/kubelet/cm/topologymanager tests named TestNumaspecVectors, with the
# test file (numaspec vectors export --go) dropped into a copy of the release
# (patched when a patch is given), run by go test from the release's module.
go_test() {
  local file="$1" path="$2" r d ver minor work name=""
  r="$(row "$3")"
  d="$(field "$r" dir)"; ver="$(field "$r" version)"; minor="$(field "$r" minor)"
  use_toolchain "$r"
  [ -f "$file" ] || { echo "--go-test $file: no such file" >&2; exit 2; }
  file="$(cd "$(dirname "$file")" && pwd)/$(basename "$file")"
  if [ -n "$path" ]; then
    [ -f "$path" ] || { echo "--patch $path: no such file" >&2; exit 2; }
    path="$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
    name="$(basename "$path")"; name="+${name%.patch}"; name="${name%.diff}"
  fi
  work="$here/build/gotest/$ver$name"
  copy_release "$d" "$ver" "$work" "$path"
  # A release whose go.mod replaces k8s.io/ktesting by a stand-in (1.38: the
  # module proxy does not serve it; v1_38/extra.gomod, ../stubs/ktesting):
  # kubelet's own tests of the package import it and cannot compile, so the
  # copy keeps none of them (only TestNumaspecVectors runs, and it uses none of
  # their helpers).
  if grep -q '^[[:space:]]*k8s\.io/ktesting => \.\{1,2\}/' "$d/go.mod"; then
    find "$work/kubernetes/pkg/kubelet/cm/topologymanager" -maxdepth 1 -name '*_test.go' -delete
  fi
  cp "$file" "$work/kubernetes/pkg/kubelet/cm/topologymanager/zz_numaspec_vectors_test.go"
  cp "$d/go.mod" "$work/go.mod"; cp "$d/go.sum" "$work/go.sum"
  printf '\nreplace k8s.io/kubernetes => %s\n' "$work/kubernetes" >>"$work/go.mod"
  echo "== $d: go test TestNumaspecVectors in k8s.io/kubernetes $ver$name" >&2
  (cd "$d" && go test -modfile="$work/go.mod" -trimpath -buildvcs=false "$nodwarf" -tags "$(tags "$minor")" \
    -count=1 -run '^TestNumaspecVectors$' k8s.io/kubernetes/pkg/kubelet/cm/topologymanager)
}

# patched <patch|source> <path> <name> <dir or minor>: build the release
# against a copy of k8s.io/kubernetes with the patch applied (or against a
# source tree), wired in by a replace in a go.mod of its own (go build
# -modfile): the release's module dir and committed go.mod stay as they are.
# The copy links the module cache's files (read-only there) and copies only
# those the patch changes. Cached: rebuilt only when the patch, the tree's
# path or the release's sources changed (the go build cache does the rest).
patched() {
  local kind="$1" path="$2" name="$3" r d ver minor work src stamp key
  r="$(row "$4")"
  d="$(field "$r" dir)"; ver="$(field "$r" version)"; minor="$(field "$r" minor)"
  use_toolchain "$r"
  case "$name" in ''|*[!A-Za-z0-9._-]*)
    echo "--name $name: use letters, digits, '.', '_' or '-'" >&2; exit 2 ;; esac
  work="$here/build/patched/$ver+$name"
  out="bin/kubelet-adapter-$ver+$name"
  mkdir -p "$work" bin
  if [ "$kind" = patch ]; then
    [ -f "$path" ] || { echo "--patch $path: no such file" >&2; exit 2; }
    path="$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
    key="patch $(sha256sum <"$path" | cut -c1-64)"
  else
    [ -f "$path/go.mod" ] && grep -q '^module k8s.io/kubernetes$' "$path/go.mod" || {
      echo "--source $path: not a kubernetes source tree (no go.mod of module k8s.io/kubernetes)" >&2
      exit 2; }
    path="$(cd "$path" && pwd)"
    key="source $path"  # a tree changes under us: its builds are never skipped
  fi
  # and the adapter's own sources (every module here but the builds)
  key="$key $(find . \( -path ./build -o -path ./bin \) -prune -o -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) -print0 \
    | sort -z | xargs -0 cat | sha256sum | cut -c1-64)"
  if [ "$kind" = patch ] && [ -x "$out" ] && [ "$(cat "$work/stamp" 2>/dev/null)" = "$key" ]; then
    echo "== $d: k8s.io/kubernetes $ver + $name: up to date ($out)" >&2
    return 0
  fi
  rm -f "$work/stamp"
  if [ "$kind" = patch ]; then
    copy_release "$d" "$ver" "$work" "$path"
    src="$work/kubernetes"
  else
    src="$path"
  fi
  cp "$d/go.mod" "$work/go.mod"; cp "$d/go.sum" "$work/go.sum"
  printf '\n// %s: k8s.io/kubernetes %s + %s (build.sh --%s)\nreplace k8s.io/kubernetes => %s\n' \
    "$name" "$ver" "$name" "$kind" "$src" >>"$work/go.mod"
  echo "== $d: k8s.io/kubernetes $ver + $name ($kind)" >&2
  local start; start=$(date +%s)
  (cd "$d" && go build -modfile="$work/go.mod" -trimpath -buildvcs=false "$nodwarf" -tags "$(tags "$minor")" \
    -ldflags="-s -w -X numaspec.invalid/kubelet-oracle/common.pinnedVersion=$ver -X numaspec.invalid/kubelet-oracle/common.patchName=$name" \
    -o "../$out" .)
  echo "$key" >"$work/stamp"
  echo "   built $out in $(( $(date +%s) - start ))s" >&2
}

if [ "${1:-}" = "--go-test" ]; then
  [ $# -ge 3 ] || { echo "usage: $0 --go-test FILE [--patch PATCH] 1.37" >&2; exit 2; }
  file="$2"; shift 2
  patch=""
  if [ "${1:-}" = "--patch" ]; then
    [ $# -ge 2 ] || { echo "--patch needs a file" >&2; exit 2; }
    patch="$2"; shift 2
  fi
  [ $# -eq 1 ] || { echo "usage: $0 --go-test FILE [--patch PATCH] 1.37 (one release)" >&2; exit 2; }
  go_test "$file" "$patch" "$1"
  exit $?
fi

if [ "${1:-}" = "--patch" ] || [ "${1:-}" = "--source" ]; then
  kind="${1#--}"; [ $# -ge 3 ] || { echo "usage: $0 --$kind PATH [--name NAME] 1.37" >&2; exit 2; }
  path="$2"; shift 2
  name=local
  [ "$kind" = patch ] && { name="$(basename "$path")"; name="${name%.patch}"; name="${name%.diff}"; }
  if [ "${1:-}" = "--name" ]; then
    [ $# -ge 2 ] || { echo "--name needs a value" >&2; exit 2; }
    name="$2"; shift 2
  fi
  [ $# -eq 1 ] || { echo "usage: $0 --$kind PATH [--name NAME] 1.37 (one release)" >&2; exit 2; }
  patched "$kind" "$path" "$name" "$1"
  exit 0
fi

mkdir -p bin
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t dirs < <(sed -n 's/.*"dir": *"\(v1_[0-9]*\)".*/\1/p' releases.json)
fi
for arg in "${dirs[@]}"; do
  r="$(row "$arg")"
  d="$(field "$r" dir)"; ver="$(field "$r" version)"; minor="$(field "$r" minor)"
  [ -f "$d/go.mod" ] || { echo "no module $d (releases.json)" >&2; exit 1; }
  pinned="$(awk '$1=="k8s.io/kubernetes" {print $2; exit}' "$d/go.mod")"
  if [ "$pinned" != "$ver" ]; then
    echo "releases.json pins $d to $ver, but $d/go.mod requires k8s.io/kubernetes ${pinned:-(none)}" >&2
    exit 1
  fi
  echo "== $d: k8s.io/kubernetes $ver" >&2
  start=$(date +%s)
  (use_toolchain "$r" && cd "$d" && go build -trimpath -buildvcs=false "$nodwarf" -tags "$(tags "$minor")" \
    -ldflags="-s -w -X numaspec.invalid/kubelet-oracle/common.pinnedVersion=$ver" \
    -o "../bin/kubelet-adapter-$ver" .)
  rm -f "bin/kubelet-merge-$ver" "bin/kubelet-node-$ver"
  echo "   built bin/kubelet-adapter-$ver in $(( $(date +%s) - start ))s" >&2
done
