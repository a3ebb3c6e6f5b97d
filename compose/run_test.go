package compose_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/procstat"
)

// A stack.prepare that fails stops the bring-up before any Docker call,
// saying so, with the command's own output in the log. (Every case exits
// non-zero: no test here reaches the engine.)
func TestStartPrepareFailsFirst(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	_, err := compose.Start(context.Background(), compose.Spec{
		Files: []string{"compose.yaml"}, Target: "api:8080",
		Prepare: []string{"sh", "-c", "echo building the fixtures; exit 3"}, PrepareDir: dir,
		PrepareEnv: []string{"PATH=" + os.Getenv("PATH")}, Log: &log,
	})
	var pe *compose.PrepareError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "stack.prepare: sh -c") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Start: %v, want a *PrepareError naming the command and its exit status", err)
	}
	if !strings.Contains(log.String(), "building the fixtures") {
		t.Errorf("the prepare command's output is not in the log: %q", log.String())
	}
}

// The prepare command (the checkout's own script) runs in its directory
// with the environment it is given and nothing else of this process's: a
// runner credential the caller left out does not reach it. A ./ command is
// the directory's.
func TestStartPrepareGetsOnlyItsEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LOADGATE_TEST_SECRET", "s3cr3t")
	script := "#!/bin/sh\necho \"[$LOADGATE_TEST_SECRET][$KEPT][$(pwd)]\" > seen\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "prep.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := compose.Start(context.Background(), compose.Spec{
		Prepare: []string{"./prep.sh"}, PrepareDir: dir,
		PrepareEnv: []string{"KEPT=yes", "PATH=" + os.Getenv("PATH")},
	})
	var pe *compose.PrepareError
	if !errors.As(err, &pe) {
		t.Fatalf("Start: %v, want the prepare's failure", err)
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	if err != nil {
		t.Fatalf("./prep.sh did not run in its directory: %v", err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if got, want := strings.TrimSpace(string(seen)), "[][yes]["+real+"]"; got != want && got != "[][yes]["+dir+"]" {
		t.Errorf("prepare saw %s, want %s (no secret, the given variable, its directory)", got, want)
	}
}

// Every sampler's lines go to stats.jsonl whole, however many write at
// once, and to the tee; the generator's are service "loadgate", a watched
// process's named by its pid and name.
func TestStatsFileLines(t *testing.T) {
	dir := t.TempDir()
	var tee bytes.Buffer
	sf, err := compose.CreateStats(dir, &tee)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				sf.Emit(procstat.Sample{PID: 4242, Name: "api", Time: at, Interval: time.Second, CPUPct: 12.5, MemBytes: 1 << 20, CPUTime: 3 * time.Second}, i%2 == 0)
			}
		}(i)
	}
	b, _ := json.Marshal(compose.Sample{Time: at, Service: "db", Container: "c1", IntervalS: 1})
	sf.Writer().Write(append(b, '\n'))
	wg.Wait()
	if err := sf.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "stats.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, tee.Bytes()) {
		t.Error("the tee did not get the file's lines")
	}
	count := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var s compose.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("a torn line %q: %v", sc.Text(), err)
		}
		count[s.Service]++
		if s.Service != "db" && (s.Container != "pid 4242" || s.CPUUsageNS != uint64(3*time.Second) || s.MemBytes != 1<<20) {
			t.Errorf("line %+v", s)
		}
	}
	if want := map[string]int{"loadgate": 200, "pid 4242 (api)": 200, "db": 1}; len(count) != 3 || count["loadgate"] != want["loadgate"] || count["pid 4242 (api)"] != want["pid 4242 (api)"] || count["db"] != 1 {
		t.Errorf("lines per service %v, want %v", count, want)
	}
}
