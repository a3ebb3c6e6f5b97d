#!/bin/bash
# Builds the history demo's throwaway repository in $D (default
# /tmp/histdemo): the demo stack (examples/demo's compose.yaml, its two
# FROM scratch images with their binaries committed, build.sh a no-op),
# bench/history-demo/gate.yaml as the scenario, waits of 5 ms (knob.py),
# an empty bare remote holding the data branch, and $D/loadgate. Then
# run.sh gates and records one commit after another.
set -eu
D=${D:-/tmp/histdemo}
H=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$H/../.." && pwd)
mkdir -p "$D/repo/service/bin" "$D/repo/stub/bin"
cp "$ROOT/examples/demo/compose.yaml" "$D/repo/"
cp "$H/gate.yaml" "$D/repo/"
cp "$ROOT/examples/demo/service/Dockerfile" "$D/repo/service/"
cp "$ROOT/examples/demo/stub/Dockerfile" "$D/repo/stub/"
(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$D/repo/service/bin/service" ./examples/demo/service &&
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$D/repo/stub/bin/loadgate" ./cmd/loadgate &&
  go build -o "$D/loadgate" ./cmd/loadgate)
printf '#!/bin/sh\n# binaries are committed in this throwaway repository\nexit 0\n' > "$D/repo/build.sh"
chmod +x "$D/repo/build.sh"
python3 "$H/knob.py" 1 "$D/repo/compose.yaml"
git init -q --bare "$D/remote.git"
cd "$D/repo"
git init -q -b main
git config user.name demo && git config user.email demo@example.com && git config commit.gpgsign false
git remote add origin "$D/remote.git"
git add -A && git commit -qm "history demo: two workloads, 5 ms waits"
