package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/session"
)

// LoadTarget: a URL is plain, else a service:port of the stack; every
// refusal is a usage error naming the command.
func TestLoadTarget(t *testing.T) {
	plain := scen(t, plainYAML)
	if files, isPlain, target, err := session.LoadTarget("run", plain, "http://127.0.0.1:1", session.StackOptions{}); err != nil || !isPlain || files != nil || target != "http://127.0.0.1:1" {
		t.Errorf("plain URL: %v %v %q %v", files, isPlain, target, err)
	}
	files, isPlain, target, err := session.LoadTarget("run", plain, "api:80", session.StackOptions{Compose: []string{"c.yaml"}})
	if err != nil || isPlain || len(files) != 1 || target != "api:80" {
		t.Errorf("--compose with service:port: %v %v %q %v", files, isPlain, target, err)
	}
	for _, c := range []struct {
		raw     string
		compose []string
		want    string
	}{
		{"http://127.0.0.1:1", []string{"c.yaml"}, "is a URL, but --compose"},
		{"", nil, "--target is required"},
		{"api:80", nil, "is not a URL"},
		{"", []string{"c.yaml"}, "names no target"},
	} {
		_, _, _, err := session.LoadTarget("sweep", plain, c.raw, session.StackOptions{Compose: c.compose})
		if !errors.Is(err, session.ErrUsage) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "sweep: ") {
			t.Errorf("%q %v: %v, want a usage error saying %q", c.raw, c.compose, err, c.want)
		}
	}
}

// PlanLoad refuses --watch-pid with a stack, and names the default
// results directory after the scenario and the command.
func TestPlanLoad(t *testing.T) {
	sc := scen(t, plainYAML)
	_, err := session.PlanLoad(context.Background(), sc, session.LoadOptions{Cmd: "soak", Target: "api:80", Watch: []int{1}, Stack: session.StackOptions{Compose: []string{"c.yaml"}}})
	if !errors.Is(err, session.ErrUsage) || !strings.Contains(err.Error(), "--watch-pid is for plain mode") {
		t.Errorf("--watch-pid with a stack: %v", err)
	}
	p, err := session.PlanLoad(context.Background(), sc, session.LoadOptions{Cmd: "soak", Target: "api:80", Stack: session.StackOptions{Compose: []string{"c.yaml"}}})
	if err != nil || !strings.HasPrefix(p.Out, "loadgate-out/x-soak-") || p.Plain {
		t.Errorf("plan: %+v %v", p, err)
	}
}
