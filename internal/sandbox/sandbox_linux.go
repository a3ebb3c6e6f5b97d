package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

const marker = "loadgate-sandbox-8f3c2a"

// readOnlyInCheckout are the checkout's entries left read-only in the box.
var readOnlyInCheckout = []string{".git", ".github"}

// scratchEnv are the variables Run points into the scratch, under these subdirectories.
var scratchEnv = [][2]string{
	{"HOME", "home"}, {"TMPDIR", "tmp"}, {"TMP", "tmp"}, {"TEMP", "tmp"},
	{"XDG_CONFIG_HOME", "config"}, {"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"},
	{"XDG_STATE_HOME", "state"}, {"XDG_RUNTIME_DIR", "run"},
}

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
	if s.Root == "" {
		s.Root = s.Dir
	}
	if rel, err := filepath.Rel(s.Root, s.Dir); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("sandbox: %s is not inside %s", s.Dir, s.Root)
	}
	for _, p := range []string{"/", "/tmp", "/var/tmp", os.TempDir()} {
		if filepath.Clean(s.Root) == filepath.Clean(p) {
			return fmt.Errorf("sandbox: the writable checkout cannot be %s, which the box hides", p)
		}
	}
	s.Hide = append(s.Hide, os.TempDir()) // the worktrees of this and other runs
	if s.Scratch, err = os.MkdirTemp("", "loadgate-prepare-"); err != nil {
		return fmt.Errorf("sandbox: scratch: %w", err)
	}
	defer removeAll(s.Scratch)
	s.Overlays = goOverlays(s.Env, s.Scratch)
	s.Env = scratchEnviron(s.Env)
	spec, err := json.Marshal(s)
	if err != nil {
		return err
	}
	out = &lockedWriter{w: out} // the command's stdout and stderr are copied by two goroutines
	tail := &lastLine{w: out}
	cmd := exec.CommandContext(ctx, exe, marker, string(spec))
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.Dir, s.Env, out, tail
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

// goOverlays are the runner's build and module caches (by env, Go's defaults otherwise),
// each to be shown copy-on-write at the place Go's defaults find in the scratch: a side's
// build starts warm, and what it writes stays in its scratch, where no other side reads it.
func goOverlays(env []string, scratch string) []Overlay {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	gocache := get("GOCACHE")
	if gocache == "" {
		if xdg := get("XDG_CACHE_HOME"); filepath.IsAbs(xdg) {
			gocache = filepath.Join(xdg, "go-build")
		} else if filepath.IsAbs(home) {
			gocache = filepath.Join(home, ".cache", "go-build")
		}
	}
	modcache := get("GOMODCACHE")
	if modcache == "" {
		if gopath, _, _ := strings.Cut(get("GOPATH"), string(filepath.ListSeparator)); gopath != "" {
			modcache = filepath.Join(gopath, "pkg", "mod")
		} else if filepath.IsAbs(home) {
			modcache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	var out []Overlay
	for i, c := range [][2]string{{gocache, ScratchDir + "/cache/go-build"}, {modcache, ScratchDir + "/home/go/pkg/mod"}} {
		if fi, err := os.Stat(c[0]); err != nil || !fi.IsDir() || !filepath.IsAbs(c[0]) {
			continue
		}
		dir := filepath.Join(scratch, fmt.Sprintf(".overlay-%d", i))
		o := Overlay{Lower: c[0], Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work"), Target: c[1]}
		if os.MkdirAll(o.Upper, 0o700) == nil && os.MkdirAll(o.Work, 0o700) == nil {
			out = append(out, o)
		}
	}
	return out
}

// goEnv are Go's cache variables, unset in the box so that Go's defaults (under HOME and
// XDG_CACHE_HOME) put its caches in the scratch: a side's build can neither fail on a
// read-only cache nor poison the other side's.
var goEnv = []string{"GOCACHE", "GOMODCACHE", "GOPATH"}

// scratchEnviron is env with the scratch variables pointing into ScratchDir and Go's caches
// there; the runner's module cache, read-only, is Go's first proxy (GOPROXY=file://…), so
// modules it holds are not downloaded again.
func scratchEnviron(env []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	modcache := get("GOMODCACHE")
	if modcache == "" {
		if gopath, _, _ := strings.Cut(get("GOPATH"), string(filepath.ListSeparator)); gopath != "" {
			modcache = filepath.Join(gopath, "pkg", "mod")
		} else if home := get("HOME"); home != "" {
			modcache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	proxy := get("GOPROXY")
	out := make([]string, 0, len(env)+len(scratchEnv)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := !slices.Contains(goEnv, name)
		for _, v := range scratchEnv {
			keep = keep && name != v[0]
		}
		if keep && !(name == "GOPROXY" && filepath.IsAbs(modcache)) {
			out = append(out, kv)
		}
	}
	for _, v := range scratchEnv {
		out = append(out, v[0]+"="+ScratchDir+"/"+v[1])
	}
	if dl := filepath.Join(modcache, "cache", "download"); filepath.IsAbs(modcache) {
		if fi, err := os.Stat(dl); err == nil && fi.IsDir() {
			switch proxy {
			case "":
				proxy = "https://proxy.golang.org,direct"
			case "off":
				proxy = ""
			}
			out = append(out, "GOPROXY="+strings.TrimSuffix("file://"+dl+","+proxy, ","))
		} else if proxy != "" {
			out = append(out, "GOPROXY="+proxy)
		}
	}
	return out
}

// removeAll removes dir even where the command took its own permissions away.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// exitNoBox is the box's exit status when it could not set itself up.
const exitNoBox = 125

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

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
	if err := setup(&s); err != nil {
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

// setup builds the box's file system, as root of its user namespace, before the command runs a
// namespace down (where every mount is locked: no umount, no remount read-write):
//
//  1. /run becomes the box's tmpfs; the checkout and the scratch are bound there for a moment;
//  2. /var/run, /tmp, /var/tmp, $TMPDIR and s.Hide are covered (an empty tmpfs, an empty file);
//  3. the scratch goes to ScratchDir, the checkout back to its own path (so nothing of the path
//     names what the cover hid: other runs, this run's other worktree);
//  4. what s.Hide names inside the checkout is covered, its .git and .github bound on themselves;
//  5. the box's /proc is mounted, then every mount made read-only but the checkout and the
//     scratch; /dev/shm is a fresh tmpfs, gone with the box.
func setup(s *Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	root, err := filepath.EvalSymlinks(s.Root)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	if s.Dir, err = filepath.EvalSymlinks(s.Dir); err != nil {
		return fmt.Errorf("directory: %w", err)
	}
	if err := unix.Mount("tmpfs", "/run", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return fmt.Errorf("hide /run: %w", err)
	}
	stage, stageScratch := "/run/.sandbox-checkout", "/run/.sandbox-scratch"
	for _, m := range [][2]string{{root, stage}, {s.Scratch, stageScratch}} {
		if err := os.Mkdir(m[1], 0o700); err != nil {
			return err
		}
		if err := unix.Mount(m[0], m[1], "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", m[0], err)
		}
	}
	// The runner's Go caches, copy-on-write, mounted now (their lower dirs may lie where the
	// covers go) and moved under the scratch below. One that will not mount is left out:
	// the build then starts cold.
	var overlays []Overlay
	for i, o := range s.Overlays {
		stageOv := fmt.Sprintf("/run/.sandbox-overlay-%d", i)
		if os.Mkdir(stageOv, 0o700) != nil {
			continue
		}
		opts := "lowerdir=" + o.Lower + ",upperdir=" + o.Upper + ",workdir=" + o.Work
		if unix.Mount("overlay", stageOv, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts) != nil {
			_ = os.Remove(stageOv)
			continue
		}
		o.Lower = stageOv // where it is staged, until moved to its Target
		overlays = append(overlays, o)
	}
	var inside []string // hidden paths inside the checkout, covered once it is back
	covered := map[string]bool{}
	for _, p := range append([]string{"/var/run", "/tmp", "/var/tmp"}, s.Hide...) {
		p, err := filepath.EvalSymlinks(p)
		switch {
		case err != nil || p == "/" || p == "/run" || strings.HasPrefix(p, "/run/") || covered[p]:
			continue // nothing there (or hidden already), or the box's own /run
		case p == root:
			return fmt.Errorf("the checkout %s is also a path to hide", p)
		case strings.HasPrefix(p, root+"/"):
			inside = append(inside, p)
			continue
		}
		covered[p] = true
		if err := cover(p); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(ScratchDir, 0o700); err != nil { // in the box's /tmp
		return fmt.Errorf("scratch: %w", err)
	}
	if err := unix.Mount(stageScratch, ScratchDir, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	for _, v := range scratchEnv {
		if err := os.MkdirAll(filepath.Join(ScratchDir, v[1]), 0o700); err != nil {
			return fmt.Errorf("scratch: %w", err)
		}
	}
	keep := map[string]bool{root: true, ScratchDir: true, "/proc": true}
	for _, o := range overlays {
		if err := os.MkdirAll(o.Target, 0o700); err != nil {
			return fmt.Errorf("scratch: %w", err)
		}
		if err := unix.Mount(o.Lower, o.Target, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("go cache: %w", err)
		}
		_ = os.Remove(o.Lower)
		keep[o.Target] = true
	}
	// The checkout exists on the host; what MkdirAll makes is inside a cover.
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	if err := unix.Mount(stage, root, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	for _, d := range []string{stage, stageScratch} {
		if err := os.Remove(d); err != nil {
			return err
		}
	}
	for _, p := range inside {
		if err := cover(p); err != nil {
			return err
		}
	}
	// .git (a directory, or a worktree's file naming the repository's) read-only: no hooks;
	// .github too: a later step of the job may run a local action from the checkout.
	for _, name := range readOnlyInCheckout {
		if p := filepath.Join(root, name); exists(p) {
			if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s: %w", p, err)
			}
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	// /proc stays writable: the command's uid_map is written through it (a box-only mount).
	if err := readOnly(keep); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64m,mode=1777"); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// cover shows p empty: a directory as an empty tmpfs, a file as an empty file.
func cover(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil // gone under an earlier cover
	case fi.IsDir():
		err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755")
	default:
		const empty = "/run/.sandbox-empty" // /run is the box's own by now
		if !exists(empty) {
			if err = os.WriteFile(empty, nil, 0o444); err != nil {
				return fmt.Errorf("hide %s: %w", p, err)
			}
		}
		err = unix.Mount(empty, p, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("hide %s: %w", p, err)
	}
	return nil
}

// readOnly remounts every mount read-only but keep's, keeping the flags the kernel locked.
// Mounts under /proc are the box's own proc's (the host's are shadowed). A mount point now
// shadowed by a cover is out of reach: gone (ENOENT), or no mount point any more (EINVAL),
// then on a mount that must itself be read-only by the end, unless it is a kept one.
func readOnly(keep map[string]bool) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read-only: %w", err)
	}
	seen := map[string]bool{}
	var shadowed []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescape(f[4])
		if seen[mp] || keep[mp] || strings.HasPrefix(mp, "/proc/") {
			continue
		}
		seen[mp] = true
		var st unix.Statfs_t
		if err := unix.Statfs(mp, &st); err != nil {
			continue // under a cover now: out of reach
		}
		if st.Flags&unix.ST_RDONLY != 0 {
			continue
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, m := range [][2]int64{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
			{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
			{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
			if st.Flags&m[0] != 0 {
				flags |= uintptr(m[1])
			}
		}
		err := unix.Mount("", mp, "", flags, "")
		switch {
		case errors.Is(err, unix.EINVAL):
			shadowed = append(shadowed, mp)
		case err != nil:
			return fmt.Errorf("make %s read-only: %w", mp, err)
		}
	}
	for _, mp := range shadowed {
		var st unix.Statfs_t
		if err := unix.Statfs(mp, &st); err != nil || st.Flags&unix.ST_RDONLY != 0 {
			continue
		}
		kept := false
		for k := range keep {
			kept = kept || strings.HasPrefix(mp, k+"/")
		}
		if !kept {
			return fmt.Errorf("make %s read-only: %w", mp, unix.EINVAL)
		}
	}
	return nil
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
