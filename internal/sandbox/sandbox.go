// Package sandbox runs a command of the change under judgment (a side's stack.prepare) in a box:
// own user, mount and PID namespaces, /proc of the box only, every mount read-only but the side's
// checkout (its .git and .github read-only too) and a fresh scratch directory that HOME, TMPDIR and XDG_* point
// into and that is removed after; /run, /var/run, /tmp, /var/tmp, $TMPDIR (so no Docker socket, no
// other run's worktree) and the caller's hidden paths emptied; nothing outliving it. The box is
// loadgate's binary re-run with a marker argument.
package sandbox

import "errors"

// Spec is one command to run boxed.
type Spec struct {
	Argv []string // Argv[0] "./x" is relative to Dir
	Dir  string   // the working directory, inside Root
	Root string   // the side's checkout, writable in the box but its .git ("": Dir)
	Env  []string // the whole environment, but for HOME, TMPDIR, TMP, TEMP and XDG_*: Run points them into the scratch
	Hide []string // directories shown empty, files shown empty, in the box (besides /run, /tmp, ...)
	UID  int      // the command's user and group: the caller's (Run sets them)
	GID  int
	// Scratch is the host directory shown at ScratchDir, made and removed by Run.
	Scratch string
	// Overlays are the runner's Go caches shown copy-on-write where Go looks for them in
	// the scratch (Run sets them): read warm, written to the scratch, never to the runner's.
	Overlays []Overlay
}

// Overlay shows the host directory Lower at Target (inside ScratchDir) as an overlay whose
// writes go to Upper (in the scratch): the command reads Lower, never changes it.
type Overlay struct {
	Lower, Upper, Work, Target string
}

// ScratchDir is where the box shows its scratch directory, the only writable place besides Root.
const ScratchDir = "/tmp/loadgate-prepare"

// ErrUnavailable is a box the system refused (user namespaces disabled or restricted); nothing ran.
var ErrUnavailable = errors.New("sandbox: this system refused a user namespace")
