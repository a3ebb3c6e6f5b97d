package history_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/history"
)

// repos is a bare "origin" and two clones of it, a and b.
func repos(t *testing.T) (origin, a, b string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the data branch is not tested")
	}
	dir := t.TempDir()
	origin = filepath.Join(dir, "origin.git")
	a, b = filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, args := range [][]string{{"init", "--quiet", "--bare", origin}, {"clone", "--quiet", origin, a}, {"clone", "--quiet", origin, b}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return origin, a, b
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// entries is n entries of the helper chain, from entry first on.
func entries(t *testing.T, first, n int) []history.Entry {
	ratios := make([]float64, first+n)
	for i := range ratios {
		ratios[i] = 1.01
	}
	return chain(t, ratios, 0.03).Entries[first : first+n]
}

func commits(es []history.Entry) []string {
	var cs []string
	for _, e := range es {
		cs = append(cs, e.Commit)
	}
	slices.Sort(cs)
	return cs
}

// Written from one clone, read back from another, in the file layout.
func TestStoreAppendLoad(t *testing.T) {
	origin, a, b := repos(t)
	sa, sb := &history.Store{Dir: a}, &history.Store{Dir: b}
	if got, err := sb.Load(ctx(t), "checkout"); err != nil || len(got) != 0 {
		t.Fatalf("before any entry: %v, %v", got, err)
	}
	want := entries(t, 0, 3)
	for _, e := range want {
		path, err := sa.Append(ctx(t), e)
		if err != nil {
			t.Fatal(err)
		}
		if wantPath := "checkout/" + strconv.FormatInt(e.Date.Unix(), 10) + "-" + e.Commit[:12] + ".json"; path != wantPath {
			t.Errorf("path %s, want %s", path, wantPath)
		}
	}
	got, err := sb.Load(ctx(t), "checkout")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(commits(got), commits(want)) {
		t.Errorf("read back %v, want %v", commits(got), commits(want))
	}
	c := history.NewChain(got)
	if ch := c.Cumulative(apiP95, 0, 2, 0, 0); !ch.Known || ch.Links != 2 {
		t.Errorf("the chain read back: %+v", ch)
	}
	// The clone's own branches are not touched; the data branch is on origin.
	out, err := exec.Command("git", "-C", origin, "ls-tree", "-r", "--name-only", "loadgate-data").Output()
	if err != nil || strings.Count(string(out), "\n") != 3 {
		t.Errorf("origin's data branch: %s %v", out, err)
	}
	if out, _ := exec.Command("git", "-C", a, "status", "--porcelain").Output(); len(out) != 0 {
		t.Errorf("clone a's work tree changed: %s", out)
	}
}

// pushHook runs before the first push of the Git it wraps.
type pushHook struct {
	history.Git
	once   sync.Once
	before func()
	pushes int
}

func (h *pushHook) Run(c context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	if slices.Contains(args, "push") {
		h.pushes++
		h.once.Do(h.before)
	}
	return h.Git.Run(c, dir, stdin, args...)
}

// b pushes between a's fetch and a's push: a's push is rejected, rebuilt
// on b's tip and pushed again; neither entry is lost.
func TestStoreAppendRace(t *testing.T) {
	_, a, b := repos(t)
	es := entries(t, 0, 3)
	sb := &history.Store{Dir: b}
	if _, err := sb.Append(ctx(t), es[0]); err != nil {
		t.Fatal(err)
	}
	hook := &pushHook{Git: history.ExecGit{}}
	hook.before = func() {
		if _, err := sb.Append(ctx(t), es[1]); err != nil {
			t.Error(err)
		}
	}
	sa := &history.Store{Dir: a, Git: hook}
	if _, err := sa.Append(ctx(t), es[2]); err != nil {
		t.Fatal(err)
	}
	if hook.pushes != 2 {
		t.Errorf("a pushed %d times, want 2 (one rejected)", hook.pushes)
	}
	got, err := sb.Load(ctx(t), "checkout")
	if err != nil || !slices.Equal(commits(got), commits(es)) {
		t.Errorf("after the race: %v (%v), want %v", commits(got), err, commits(es))
	}
}

// Two clones appending at once lose no entry.
func TestStoreAppendConcurrent(t *testing.T) {
	_, a, b := repos(t)
	es := entries(t, 0, 8)
	var wg sync.WaitGroup
	for i, dir := range []string{a, b} {
		s := &history.Store{Dir: dir}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, e := range es[i*4 : i*4+4] {
				if _, err := s.Append(ctx(t), e); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, err := (&history.Store{Dir: a}).Load(ctx(t), "checkout")
	if err != nil || !slices.Equal(commits(got), commits(es)) {
		t.Errorf("after concurrent appends: %d entries (%v), want %d", len(got), err, len(es))
	}
}

// A push refused for another reason is not retried, and every git call
// ends with its context.
func TestStoreErrors(t *testing.T) {
	_, a, _ := repos(t)
	e := entries(t, 0, 1)[0]
	bad := &history.Store{Dir: a, Remote: filepath.Join(t.TempDir(), "nowhere")}
	if _, err := bad.Append(ctx(t), e); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("a missing remote: %v", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&history.Store{Dir: a}).Append(done, e); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v, want context.Canceled", err)
	}
	e.Result.Scenario.Name = "../up"
	if _, err := history.EntryPath(e); err == nil {
		t.Error("a scenario name that leaves its directory: no error")
	}
}

// Read is the command's work: load, chain, analyse.
func TestRead(t *testing.T) {
	_, a, b := repos(t)
	sa := &history.Store{Dir: a, Branch: "perf-data"}
	for _, e := range entries(t, 0, 4) {
		if _, err := sa.Append(ctx(t), e); err != nil {
			t.Fatal(err)
		}
	}
	an, err := history.Read(ctx(t), &history.Store{Dir: b, Branch: "perf-data"}, "checkout", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Series) != 1 || len(an.Series[0].Points) != 4 || an.Series[0].Total.Links != 3 {
		t.Errorf("read: %+v", an.Series)
	}
	prev, ok, err := history.Previous(ctx(t), sa, "checkout")
	if err != nil || !ok || prev.Commit != sha(3) {
		t.Errorf("previous: %s %v %v, want %s", prev.Commit, ok, err, sha(3))
	}
}
