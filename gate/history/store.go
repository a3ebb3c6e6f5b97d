package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// Defaults of a Store.
const (
	DefaultBranch     = "loadgate-data"
	DefaultRemote     = "origin"
	DefaultAttempts   = 10
	DefaultGitTimeout = 2 * time.Minute
)

// Git runs one git command in dir and returns its stdout; all repository access goes through it.
type Git interface {
	Run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error)
}

// ExecGit runs the git program within Timeout, never prompting, in English (to spot rejected pushes).
type ExecGit struct {
	Path    string // "" : "git" on PATH
	Timeout time.Duration
}

func (g ExecGit) Run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultGitTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmpOr(g.Path, "git"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "LANG=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// Store keeps one file per entry on a data branch via git plumbing, never the work tree; a push
// that lost a race is rebuilt on the new tip. One Store per clone at a time.
type Store struct {
	Git         Git    // nil: ExecGit{}
	Dir         string // a clone of the repository
	Remote      string // "": DefaultRemote
	Branch      string // "": DefaultBranch
	Attempts    int    // pushes tried before giving up on a moving branch (0: DefaultAttempts)
	Name, Email string // sign the data branch's commits ("": loadgate's)
}

func (s *Store) git() Git       { return cmpGit(s.Git) }
func (s *Store) remote() string { return cmpOr(s.Remote, DefaultRemote) }
func (s *Store) branch() string { return cmpOr(s.Branch, DefaultBranch) }
func (s *Store) ref() string    { return "refs/loadgate/" + s.branch() } // the fetched tip

func cmpGit(g Git) Git {
	if g == nil {
		return ExecGit{}
	}
	return g
}

var (
	segmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	commitRE  = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
)

// EntryPath is e's file on the data branch: <scenario>/<unix-seconds>-<commit12>.json.
func EntryPath(e Entry) (string, error) {
	if e.Result == nil {
		return "", errors.New("history: entry without a result")
	}
	name := e.Result.Scenario.Name
	if !segmentRE.MatchString(name) {
		return "", fmt.Errorf("history: scenario name %q is not a path segment", name)
	}
	if !commitRE.MatchString(e.Commit) {
		return "", fmt.Errorf("history: commit %q is not a hex commit", e.Commit)
	}
	return fmt.Sprintf("%s/%d-%s.json", name, e.Date.Unix(), result.ShortHash(e.Commit)), nil
}

// Append writes e to the data branch and pushes it, retrying on the new tip if the branch moved.
func (s *Store) Append(ctx context.Context, e Entry) (string, error) {
	path, err := EntryPath(e)
	if err != nil {
		return "", err
	}
	var data bytes.Buffer
	if err := e.Encode(&data); err != nil {
		return "", err
	}
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	for try := 1; ; try++ {
		tip, err := s.fetch(ctx)
		if err != nil {
			return "", fmt.Errorf("history: append %s: %w", path, err)
		}
		commit, err := s.commitFile(ctx, tip, path, data.Bytes())
		if err != nil {
			return "", fmt.Errorf("history: append %s: %w", path, err)
		}
		out, err := s.git().Run(ctx, s.Dir, nil, "push", "--porcelain", s.remote(), commit+":refs/heads/"+s.branch())
		if err == nil {
			return path, nil
		}
		if !rejected(string(out)+err.Error()) || try >= attempts {
			return "", fmt.Errorf("history: append %s: push (attempt %d of %d): %w", path, try, attempts, err)
		}
		pause := time.Duration(50+rand.IntN(200*try)) * time.Millisecond
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("history: append %s: %w", path, ctx.Err())
		case <-time.After(pause):
		}
	}
}

func rejected(m string) bool {
	for _, s := range []string{"[rejected]", "non-fast-forward", "fetch first", "stale info", "cannot lock ref", "failed to update ref",
		"Updates were rejected"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func (s *Store) fetch(ctx context.Context) (string, error) {
	out, err := s.git().Run(ctx, s.Dir, nil, "ls-remote", "--heads", s.remote(), "refs/heads/"+s.branch())
	if err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", nil
	}
	if _, err := s.git().Run(ctx, s.Dir, nil, "fetch", "--no-tags", "--quiet", s.remote(), "+refs/heads/"+s.branch()+":"+s.ref()); err != nil {
		return "", err
	}
	tip, err := s.git().Run(ctx, s.Dir, nil, "rev-parse", "--verify", s.ref()+"^{commit}")
	return strings.TrimSpace(string(tip)), err
}

func (s *Store) commitFile(ctx context.Context, parent, path string, data []byte) (string, error) {
	dir, file, _ := strings.Cut(path, "/")
	g := s.git()
	blob, err := g.Run(ctx, s.Dir, data, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	var root, sub []byte
	if parent != "" {
		if root, err = g.Run(ctx, s.Dir, nil, "ls-tree", "-z", parent); err != nil {
			return "", err
		}
		if id := treeEntry(root, dir); id != "" {
			if sub, err = g.Run(ctx, s.Dir, nil, "ls-tree", "-z", id); err != nil {
				return "", err
			}
		}
	}
	subID, err := g.Run(ctx, s.Dir, withEntry(sub, "100644 blob "+strings.TrimSpace(string(blob)), file), "mktree", "-z")
	if err != nil {
		return "", err
	}
	rootID, err := g.Run(ctx, s.Dir, withEntry(root, "040000 tree "+strings.TrimSpace(string(subID)), dir), "mktree", "-z")
	if err != nil {
		return "", err
	}
	args := []string{"-c", "user.name=" + cmpOr(s.Name, "loadgate"), "-c", "user.email=" + cmpOr(s.Email, "loadgate@users.noreply.github.com"),
		"commit-tree", strings.TrimSpace(string(rootID)), "-m", "loadgate history: " + path}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	c, err := g.Run(ctx, s.Dir, nil, args...)
	return strings.TrimSpace(string(c)), err
}

func treeEntry(listing []byte, name string) string {
	for _, line := range strings.Split(string(listing), "\x00") {
		meta, n, ok := strings.Cut(line, "\t")
		if ok && n == name {
			if f := strings.Fields(meta); len(f) == 3 {
				return f[2]
			}
		}
	}
	return ""
}

// withEntry is a `ls-tree -z` listing with name set to meta, as `mktree -z` input.
func withEntry(listing []byte, meta, name string) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(listing), "\x00") {
		if _, n, ok := strings.Cut(line, "\t"); ok && n != name {
			b.WriteString(line)
			b.WriteByte(0)
		}
	}
	b.WriteString(meta + "\t" + name)
	b.WriteByte(0)
	return b.Bytes()
}

// Load fetches and reads every entry of scenario on the data branch.
func (s *Store) Load(ctx context.Context, scenario string) ([]Entry, error) {
	if !segmentRE.MatchString(scenario) {
		return nil, fmt.Errorf("history: scenario name %q is not a path segment", scenario)
	}
	tip, err := s.fetch(ctx)
	if err != nil || tip == "" {
		return nil, wrapLoad(err)
	}
	list, err := s.git().Run(ctx, s.Dir, nil, "ls-tree", "-r", "-l", "-z", tip, "--", scenario+"/")
	if err != nil {
		return nil, wrapLoad(err)
	}
	var paths []string
	var batch bytes.Buffer
	for _, line := range strings.Split(string(list), "\x00") {
		meta, path, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasSuffix(path, ".json") {
			continue
		}
		f := strings.Fields(meta) // mode type object size
		if len(f) != 4 || f[1] != "blob" {
			continue
		}
		if n, err := strconv.ParseInt(f[3], 10, 64); err != nil || n > MaxEntryBytes {
			return nil, fmt.Errorf("history: load %s: %s bytes, more than an entry may have (%d)", path, f[3], MaxEntryBytes)
		}
		paths = append(paths, path)
		batch.WriteString(f[2] + "\n")
	}
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := s.git().Run(ctx, s.Dir, batch.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, wrapLoad(err)
	}
	entries := make([]Entry, 0, len(paths))
	for _, path := range paths {
		// "<object> blob <size>\n<content>\n"
		head, rest, ok := bytes.Cut(out, []byte("\n"))
		f := strings.Fields(string(head))
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("history: load %s: cat-file said %q", path, head)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n+1 > len(rest) {
			return nil, fmt.Errorf("history: load %s: cat-file said %q", path, head)
		}
		e, err := Decode(bytes.NewReader(rest[:n]))
		if err != nil {
			return nil, fmt.Errorf("history: load %s: %w", path, err)
		}
		entries = append(entries, *e)
		out = rest[n+1:]
	}
	return entries, nil
}

func wrapLoad(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("history: load: %w", err)
}
