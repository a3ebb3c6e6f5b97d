#!/usr/bin/env bash
# Runs "$@" (the loadgate binary and its arguments) with CAP_SYS_NICE where
# the runner's user is not root but has passwordless sudo, as on GitHub's
# hosted runners, so that --load-priority auto can raise the generator to
# SCHED_RR (docs/action.md). The process stays the runner's user, with its
# groups, environment and working directory; only that one capability is
# added, as an ambient one (a file capability on the binary would stop
# stack.prepare's box from starting). Without sudo or setpriv it runs "$@"
# as it is: the gate never needs it.
set -euo pipefail
if [[ $(id -u) != 0 ]] && command -v setpriv >/dev/null && sudo -n true 2>/dev/null; then
	echo "loadgate: the gate runs with CAP_SYS_NICE (sudo setpriv), so the generator can run at real-time priority"
	exec sudo -n -E -- setpriv --reuid "$(id -u)" --regid "$(id -g)" --init-groups \
		--inh-caps +sys_nice --ambient-caps +sys_nice -- \
		env HOME="$HOME" PATH="$PATH" USER="${USER:-}" LOGNAME="${LOGNAME:-}" "$@"
fi
exec "$@"
