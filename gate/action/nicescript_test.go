package action_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runNice runs scripts/loadgate-nice.sh with fake id, sudo and setpriv
// first on PATH: id says uid 1001, sudo exits sudoRC for "sudo -n true"
// and otherwise runs what follows "--", setpriv logs its arguments and
// runs what follows its "--". It returns the output, the exit code and
// setpriv's log.
func runNice(t *testing.T, sudoRC string) (string, int, string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "setpriv.log")
	fake := map[string]string{
		"id":      `echo 1001`,
		"sudo":    `if [ "$2" = true ]; then exit ` + sudoRC + `; fi; while [ "$1" != -- ]; do shift; done; shift; exec "$@"`,
		"setpriv": `echo "$@" > ` + log + `; while [ "$1" != -- ]; do shift; done; shift; exec "$@"`,
	}
	for name, body := range fake {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "loadgate-nice.sh"), "sh", "-c", `echo "arg=$0 token=[$INPUT_GITHUB_TOKEN] kept=$LG_KEPT"; exit 3`, "one two")
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "LG_KEPT=yes", "INPUT_GITHUB_TOKEN=")
	out, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	b, _ := os.ReadFile(log)
	return string(out), code, string(b)
}

// With sudo, the gate runs as the same user with CAP_SYS_NICE added, its
// arguments, environment and exit code kept, and the log says so.
func TestNiceScriptAddsSysNiceWithSudo(t *testing.T) {
	out, code, setpriv := runNice(t, "0")
	if code != 3 {
		t.Errorf("exit %d, want the gate's 3", code)
	}
	if !strings.Contains(out, "arg=one two token=[] kept=yes") {
		t.Errorf("the gate's arguments or environment changed: %q", out)
	}
	if !strings.Contains(out, "loadgate: the gate runs with CAP_SYS_NICE") {
		t.Errorf("the log does not say the capability was added: %q", out)
	}
	for _, want := range []string{"--reuid 1001", "--init-groups", "--ambient-caps +sys_nice"} {
		if !strings.Contains(setpriv, want) {
			t.Errorf("setpriv ran with %q, lacking %q", setpriv, want)
		}
	}
}

// Without sudo, the gate runs as it is: never refused for the capability.
func TestNiceScriptRunsPlainWithoutSudo(t *testing.T) {
	out, code, setpriv := runNice(t, "1")
	if code != 3 || !strings.Contains(out, "arg=one two token=[] kept=yes") {
		t.Errorf("exit %d, output %q; want the gate's 3 and its output", code, out)
	}
	if setpriv != "" || strings.Contains(out, "CAP_SYS_NICE") {
		t.Errorf("setpriv ran (%q) or the log claims the capability: %q", setpriv, out)
	}
}
