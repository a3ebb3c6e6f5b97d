// Package sandbox runs a command of the change under judgment (a side's stack.prepare) in a box:
// own user, mount and PID namespaces, /proc of the box only, /run and /var/run (so no Docker
// socket) and the caller's hidden paths emptied, nothing outliving it. The box is loadgate's binary re-run with a marker argument.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const marker = "loadgate-sandbox-8f3c2a"

// Spec is one command to run boxed.
type Spec struct {
	Argv []string // Argv[0] "./x" is relative to Dir
	Dir  string   // the working directory, writable
	Env  []string // the whole environment
	Hide []string // directories shown empty, files shown empty, in the box (besides /run, /var/run)
	UID  int      // the command's user and group: the caller's (Run sets them)
	GID  int
}

// ErrUnavailable is a box the system refused (user namespaces disabled or restricted); nothing ran.
var ErrUnavailable = errors.New("sandbox: this system refused a user namespace")

// Run runs s boxed, its output to out, until it exits or ctx ends (killing the whole box). Errors:
// *exec.ExitError for a failed command, ErrUnavailable for a box that could not be made.
func Run(ctx context.Context, s Spec, out io.Writer) error {
	if len(s.Argv) == 0 {
		return errors.New("sandbox: no command")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	s.UID, s.GID = os.Getuid(), os.Getgid()
	spec, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tail := &lastLine{w: out}
	cmd := exec.CommandContext(ctx, exe, marker, string(spec))
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.Dir, s.Env, out, tail
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	// Root of its own user namespace (to mount); the command runs as the caller one namespace down.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: s.UID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: s.GID, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == exitNoBox:
		return fmt.Errorf("%w: %s", ErrUnavailable, tail.line)
	case errors.As(err, &ee):
		return err
	default: // clone refused: EPERM, EINVAL, ENOSPC
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
}

// exitNoBox is the box's exit status when it could not set itself up.
const exitNoBox = 125

type lastLine struct {
	w    io.Writer
	line string
}

func (l *lastLine) Write(p []byte) (int, error) {
	if s := strings.TrimSpace(string(p)); s != "" {
		l.line = s[strings.LastIndexByte(s, '\n')+1:]
	}
	return l.w.Write(p)
}

func init() {
	if len(os.Args) == 3 && os.Args[1] == marker {
		os.Exit(box(os.Args[2]))
	}
}

// box is the box's init: it hides, then runs the command a namespace down, where its mounts are locked.
func box(spec string) int {
	var s Spec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return exitNoBox
	}
	if err := hide(s); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return exitNoBox
	}
	path := s.Argv[0]
	if strings.HasPrefix(path, "./") {
		path = filepath.Join(s.Dir, path)
	}
	cmd := exec.Command(path, s.Argv[1:]...)
	cmd.Args[0] = s.Argv[0]
	cmd.Dir, cmd.Env = s.Dir, s.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: s.UID, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: s.GID, HostID: 0, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		if ee.ExitCode() == exitNoBox {
			return 1 // the command's own 125 is not the box's
		}
		return ee.ExitCode()
	case errors.As(err, &ee):
		fmt.Fprintf(os.Stderr, "sandbox: %s: %v\n", s.Argv[0], err)
		return 1
	default:
		fmt.Fprintf(os.Stderr, "sandbox: %s: %v\n", s.Argv[0], err)
		return 127
	}
}

// hide empties /run, /var/run and s.Hide's paths (except dirs holding s.Dir) and mounts the box's /proc.
func hide(s Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	dir := filepath.Clean(s.Dir)
	empty := ""
	for _, p := range append([]string{"/run", "/var/run"}, s.Hide...) {
		p, err := filepath.EvalSymlinks(p)
		if err != nil || p == "/" || dir == p || strings.HasPrefix(dir, p+"/") {
			continue // nothing there, or the command's own directory
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755")
		default:
			if empty == "" {
				empty = "/run/.sandbox-empty" // /run is the box's own by now
				if err = os.WriteFile(empty, nil, 0o444); err != nil {
					return fmt.Errorf("hide %s: %w", p, err)
				}
			}
			err = unix.Mount(empty, p, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}
