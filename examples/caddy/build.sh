#!/bin/sh
# Builds the Caddy example's static binaries into their Docker build
# contexts, so that the FROM scratch images need no registry:
#   proxy/bin/caddy               Caddy (this directory's own Go module)
#   ../demo/stub/bin/loadgate     loadgate itself, for the backend
# The first build downloads Caddy's modules from the Go module proxy.
set -eu
cd "$(dirname "$0")"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o proxy/bin/caddy .
echo "built $(pwd)/proxy/bin/caddy"
CGO_ENABLED=0 GOOS=linux go build -C ../.. -trimpath -ldflags='-s -w' -o examples/demo/stub/bin/loadgate ./cmd/loadgate
echo "built $(pwd)/../demo/stub/bin/loadgate"
