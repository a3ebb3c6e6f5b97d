package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/loadgate/loadgate/internal/testtier"
)

// README's install line works: `go install
// github.com/loadgate/loadgate/cmd/loadgate@latest` against a module proxy
// (here a GOPROXY=file:// directory serving this repository's committed
// tree as v1.99.N), and the binary it installs reports that version.
func TestGoInstallFromAModuleProxy(t *testing.T) {
	testtier.Require(t, testtier.E2E)
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	repo := strings.TrimSpace(string(root))
	// A version of its own each run: the go command takes a module version's
	// content as immutable and indexes it in the build cache.
	const path = "github.com/loadgate/loadgate"
	ver := fmt.Sprintf("v1.99.%d", time.Now().Unix())
	proxy := t.TempDir()
	dir := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, ver+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	// The committed tree, as a user's go install fetches it.
	if err := modzip.CreateFromVCS(zf, module.Version{Path: path, Version: ver}, repo, "HEAD", ""); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := exec.Command("git", "-C", repo, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": ver, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, b := range map[string][]byte{ver + ".mod": mod, ver + ".info": info, "list": []byte(ver + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "install", path+"/cmd/loadgate@latest")
	cmd.Dir = t.TempDir() // outside any module
	// Offline: loadgate from the file proxy, its dependencies from the module
	// cache the build already filled and checked against loadgate's go.sum.
	// Outside a module go install asks the checksum database for each
	// dependency the local sumdb cache lacks, and this machine cannot reach
	// it: GOSUMDB is off (a user's install keeps it). The fake version leaves
	// the cache after.
	modcache := goEnv(t, "GOMODCACHE")
	forget := func() {
		for _, p := range []string{filepath.Join(modcache, path+"@"+ver), filepath.Join(modcache, "cache", "download", path, "@v")} {
			_ = filepath.WalkDir(p, func(p string, _ os.DirEntry, _ error) error { _ = os.Chmod(p, 0o755); return nil })
			_ = os.RemoveAll(p)
		}
	}
	forget()
	t.Cleanup(forget)
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy)+",off", "GOSUMDB=off",
		"GOFLAGS=-modcacherw", "GOBIN="+bin, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "loadgate"), "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "loadgate "+ver {
		t.Errorf("loadgate version: %q, %v; want \"loadgate %s\"", out, err, ver)
	}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
