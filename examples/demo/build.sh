#!/bin/sh
# Builds the demo's static binaries into their Docker build contexts, so
# that the FROM scratch images need no registry:
#   service/bin/service   the demo service (api and its siblings)
#   stub/bin/loadgate     loadgate itself, for the backend: `loadgate stub`
# Usage: examples/demo/build.sh   (from anywhere; needs Go)
set -eu
cd "$(dirname "$0")"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o service/bin/service ./service
echo "built $(pwd)/service/bin/service"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o stub/bin/loadgate ../../cmd/loadgate
echo "built $(pwd)/stub/bin/loadgate"
