#!/usr/bin/env bash
# Check a kubelet change before it merges (README.md, "A kubelet change before
# it merges"): build the pinned release and the release with the change, then
# print numaspec's behaviour diff of the two (numaspec behaviour-diff, RUN-19):
# the suite's vectors at the release, random merge cases small and large, and
# the bench rows, every question they answer differently, shrunk.
# Usage: ./check-patch.sh PATCH [RELEASE] [behaviour-diff options...]
#        ./check-patch.sh --source DIR [RELEASE] [behaviour-diff options...]
#   PATCH    a unified diff against k8s.io/kubernetes at the release's tag
#            (paths a/pkg/..., b/pkg/...)
#   DIR      a kubernetes source tree at (or near) the release
#   RELEASE  a pinned minor (releases.json), default 1.37
# Exit status: 0 when the two answer every question alike, 1 when they do not,
# 2 on bad usage or a build that failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kind=patch
if [ "${1:-}" = "--source" ]; then kind=source; shift; fi
[ $# -ge 1 ] || { sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
change="$1"; shift
release=1.37
case "${1:-}" in 1.*) release="$1"; shift ;; esac

# numaspec: the project's own environment when set up (README), else PATH
numaspec="$here/../../.venv/bin/numaspec"
[ -x "$numaspec" ] || numaspec="$(command -v numaspec || true)"
[ -n "$numaspec" ] || { echo "numaspec is not installed: run the README's first command" >&2; exit 2; }

version="$(sed -n "s/.*\"dir\": *\"v1_${release#1.}\".*\"version\": *\"\([^\"]*\)\".*/\1/p; s/.*\"version\": *\"\([^\"]*\)\".*\"dir\": *\"v1_${release#1.}\".*/\1/p" "$here/releases.json" | head -1)"
[ -n "$version" ] || { echo "no pinned release $release in releases.json" >&2; exit 2; }
if [ "$kind" = patch ]; then
  name="$(basename "$change")"; name="${name%.patch}"; name="${name%.diff}"
else
  name=local
fi
"$here/build.sh" "$release" || exit 2
"$here/build.sh" "--$kind" "$change" "$release" || exit 2
exec "$numaspec" behaviour-diff \
  --base "exec:$here/bin/kubelet-adapter-$version" \
  --patched "exec:$here/bin/kubelet-adapter-$version+$name" \
  --sizes "${NUMASPEC_SIZES:-4x3x15,8x3x255,8x4x255,12x4x4095}" "$@"
