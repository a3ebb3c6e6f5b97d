#!/bin/sh
# Builds the demo service's static binary into its Docker build context
# (service/bin/service), so that the FROM scratch image needs no registry.
# Usage: examples/demo/build.sh   (from anywhere; needs Go)
set -eu
cd "$(dirname "$0")"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o service/bin/service ./service
echo "built $(pwd)/service/bin/service"
