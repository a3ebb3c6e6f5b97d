#!/usr/bin/env bash
# The release's binaries: scripts/release.sh VERSION DIR [GOOS/GOARCH ...]
# builds loadgate for each target (default linux and darwin, amd64 and
# arm64) into DIR as loadgate-<os>-<arch>: static (CGO_ENABLED=0),
# -trimpath, VERSION stamped (`loadgate version` prints it), then
# DIR/SHA256SUMS over them (`sha256sum -c SHA256SUMS` in DIR checks them).
# release.yml runs it on a tag; cmd/loadgate's TestReleaseScript runs it too.
# DIR must not exist yet or be empty: a release is never built over another.
# GO names the go command (default go).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/release.sh VERSION DIR [GOOS/GOARCH ...]" >&2
  exit 2
fi
version=$1 dir=$2
shift 2
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release.sh: version $version: want vX.Y.Z or vX.Y.Z-suffix (a release tag)" >&2
  exit 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
  echo "release.sh: $dir is not empty: a release is never built over another" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."
names=()
for t in "${targets[@]}"; do
  if [[ ! "$t" =~ ^[a-z0-9]+/[a-z0-9]+$ ]]; then
    echo "release.sh: target $t: want GOOS/GOARCH, e.g. linux/amd64" >&2
    exit 2
  fi
  name="loadgate-${t%/*}-${t#*/}"
  CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} "${GO:-go}" build -trimpath \
    -ldflags "-s -w -X main.stamped=$version" -o "$dir/$name" ./cmd/loadgate
  names+=("$name")
done
(cd "$dir" && sha256sum "${names[@]}" > SHA256SUMS && cat SHA256SUMS)
