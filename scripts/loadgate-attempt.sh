#!/usr/bin/env bash
# Decides whether this gate keeps its rounds for a re-run and continues an
# earlier attempt's (docs/action.md, "Re-runs"), and the actions/cache key:
# this run's id, job and scenario path, so only an attempt of the same
# workflow run is restored (restore: a re-run, GITHUB_RUN_ATTEMPT > 1).
# Outputs: dir, key (with the attempt), prefix (without), restore, save.
set -euo pipefail
out=${GITHUB_OUTPUT:-/dev/null}
dir=${LG_DIR:?}
echo "dir=$dir" >>"$out"
if [[ ${LG_CONTINUE:-true} != true || -n ${LG_SHARD:-} || -n ${LG_MERGE:-} || -z ${GITHUB_RUN_ID:-} ]]; then
	echo "restore=false" >>"$out"
	echo "save=false" >>"$out"
	exit 0
fi
scenario=$(printf '%s' "${LG_SCENARIO:-}" | sha256sum | cut -c1-16)
prefix="loadgate-attempt-${GITHUB_RUN_ID}-${GITHUB_JOB:-job}-${scenario}-"
attempt=${GITHUB_RUN_ATTEMPT:-1}
echo "prefix=$prefix" >>"$out"
echo "key=${prefix}${attempt}" >>"$out"
echo "save=true" >>"$out"
if [[ $attempt != 1 ]]; then
	echo "restore=true" >>"$out"
	echo "loadgate: re-run (attempt $attempt): the earlier attempt's rounds are restored, if kept, and continued"
else
	echo "restore=false" >>"$out"
fi
