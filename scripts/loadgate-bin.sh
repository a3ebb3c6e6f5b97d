#!/usr/bin/env bash
# The loadgate binary of the action's own ref, for action.yml,
# comment/action.yml and history/action.yml: the release the ref resolves to (vX.Y.Z; the newest
# vX.Y.Z of a moving tag such as v1; the vX.Y.Z tag of a commit SHA),
# checked against the release's SHA256SUMS and, where gh is installed, its
# build attestation; any other ref sets build=true (built from source).
# Reads LG_ACTION_REF, LG_ACTION_REPO, LG_SERVER_URL, LG_RUNNER_OS,
# LG_RUNNER_ARCH, LG_TOKEN; writes path, build and verify to GITHUB_OUTPUT.
set -euo pipefail
if [ "$LG_RUNNER_OS" != Linux ]; then
  echo "::error title=loadgate::loadgate needs a Linux runner with Docker; this one is $LG_RUNNER_OS"
  exit 2
fi
case "$LG_RUNNER_ARCH" in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) echo "::error title=loadgate::no loadgate binary for $LG_RUNNER_ARCH (amd64 and arm64 only)"; exit 2 ;;
esac
dir="$RUNNER_TEMP/loadgate-bin"
mkdir -p "$dir"
bin="$dir/loadgate"
echo "path=$bin" >> "$GITHUB_OUTPUT"
api() {
  curl -fsSL --retry 3 -H "Accept: application/vnd.github+json" -H "Authorization: Bearer $LG_TOKEN" "${GITHUB_API_URL:-https://api.github.com}/repos/$LG_ACTION_REPO/$1"
}
# Every page of a list, 100 a page, the newest first, at most 10
# pages (1000 entries): one JSON array a page. Fails when a page
# fails, so that a partial list never picks an older release.
pages() {
  local p out
  for p in 1 2 3 4 5 6 7 8 9 10; do
    out=$(api "$1?per_page=100&page=$p") || return 1
    printf '%s\n' "$out"
    [[ $(jq 'length' <<<"$out") -lt 100 ]] && return 0
  done
  return 0
}
# The release this ref runs: vX.Y.Z itself; for a moving tag (v1,
# v1.4) the newest vX.Y.Z release of that line (release.yml moves v1
# to each release); for a full commit SHA the vX.Y.Z tag on that
# commit. Anything else (a branch, `uses: ./`) builds from source.
ref="$LG_ACTION_REF" tag="" why=""
if [[ -n "$LG_ACTION_REPO" ]]; then
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    tag="$ref"
  elif [[ "$ref" =~ ^v[0-9]+(\.[0-9]+)?$ || "$ref" =~ ^[0-9a-f]{40}$ ]] && command -v jq >/dev/null; then
    if [[ "$ref" =~ ^v ]]; then
      line="^${ref//./\\.}\\.[0-9]+(\\.[0-9]+)?\$"
      list=$(pages releases) || { list=""; why="the release list could not be read"; }
      tag=$(jq -r '.[] | select(.draft == false and .prerelease == false) | .tag_name' <<<"$list" |
        grep -E "$line" | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)
    else
      list=$(pages tags) || { list=""; why="the tag list could not be read"; }
      tag=$(jq -r --arg c "$ref" '.[] | select(.commit.sha == $c) | .name' <<<"$list" |
        grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)
    fi
    if [[ -n "$tag" ]]; then
      echo "loadgate $ref: release $tag"
    elif [[ -z "$why" ]]; then
      why="no release of this repository matches it"
    fi
  fi
fi
if [[ -n "$tag" ]]; then
  asset="loadgate-linux-$arch"
  url="$LG_SERVER_URL/$LG_ACTION_REPO/releases/download/$tag"
  if curl -fsSL --retry 3 -o "$dir/$asset" "$url/$asset" && curl -fsSL --retry 3 -o "$dir/SHA256SUMS" "$url/SHA256SUMS"; then
    # Exactly one line for this asset, and it must match: a mismatch
    # is never worked around by building.
    if ! (cd "$dir" && grep -E "^[0-9a-f]{64}  $asset\$" SHA256SUMS | sha256sum --check --strict -); then
      echo "::error title=loadgate::$asset of $tag does not match the release's SHA256SUMS: refused"
      exit 2
    fi
    # SHA256SUMS comes from the same release as the binary: it
    # catches a broken download, not a replaced release. The build
    # attestation (release.yml, actions/attest-build-provenance)
    # proves the binary was built by this repository's workflow.
    if command -v gh >/dev/null; then
      if ! GH_TOKEN="$LG_TOKEN" gh attestation verify "$dir/$asset" --repo "$LG_ACTION_REPO" >&2; then
        echo "::error title=loadgate::$asset of $tag: its build attestation does not verify (gh attestation verify --repo $LG_ACTION_REPO): refused"
        exit 2
      fi
      verified="build attestation verified (gh attestation verify) and sha256 checked"
      echo "verify=attestation" >> "$GITHUB_OUTPUT"
    else
      verified="sha256 checked against the release's SHA256SUMS only: gh is not on this runner, so the build attestation was not verified"
      echo "::warning title=loadgate::$asset of $tag: $verified"
      echo "verify=checksum" >> "$GITHUB_OUTPUT"
    fi
    mv "$dir/$asset" "$bin"
    chmod +x "$bin"
    echo "build=false" >> "$GITHUB_OUTPUT"
    echo "loadgate $tag: released binary $asset, $verified"
    exit 0
  fi
  echo "::warning title=loadgate::no release binary $asset for $tag: building from the action's source"
elif [[ -n "$why" ]]; then
  echo "::warning title=loadgate::ref $ref: $why: building from the action's source"
elif [[ -n "$LG_ACTION_REPO" ]]; then
  echo "::warning title=loadgate::ref $ref is no release (vX.Y.Z, a major tag such as v1, or a release's commit SHA): building from the action's source"
fi
echo "verify=source" >> "$GITHUB_OUTPUT"
echo "build=true" >> "$GITHUB_OUTPUT"
