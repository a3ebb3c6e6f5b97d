package actrunner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Snapshot is the Docker objects labelled io.loadgate.run at one moment:
// "kind id" → owner, the "<host>:<pid>" that started them.
type Snapshot map[string]string

// TakeSnapshot lists them through the docker CLI.
func TakeSnapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{}
	for _, kind := range []struct{ cmd, id string }{
		{"ps -a", "{{.ID}}"}, {"network ls", "{{.ID}}"}, {"volume ls", "{{.Name}}"},
	} {
		args := append(strings.Fields(kind.cmd), "--filter", "label=io.loadgate.run",
			"--format", kind.id+` {{.Label "io.loadgate.owner"}}`)
		out, err := exec.CommandContext(ctx, "docker", args...).Output()
		if err != nil {
			return nil, fmt.Errorf("actrunner: docker %s: %w", kind.cmd, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if id, owner, ok := strings.Cut(l, " "); ok {
				s[strings.Fields(kind.cmd)[0]+" "+id] = owner
			}
		}
	}
	return s, nil
}

// Left is what now has and before had not, unless its owner is a live process on this host:
// what a finished run left behind.
func (before Snapshot) Left(now Snapshot) []string {
	host, _ := os.Hostname()
	var out []string
	for k, owner := range now {
		if _, ok := before[k]; ok {
			continue
		}
		h, p, _ := strings.Cut(owner, ":")
		if pid, err := strconv.Atoi(p); err == nil && h == host && alive(pid) {
			continue
		}
		out = append(out, k+" (owner "+owner+")")
	}
	return out
}

func alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
