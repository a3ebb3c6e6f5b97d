package soak_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/soak"
)

func TestParseLeakThreshold(t *testing.T) {
	for in, want := range map[string]float64{"32MiB": 32 << 20, "32MiB/h": 32 << 20, "1GiB": 1 << 30} {
		if got, err := soak.ParseLeakThreshold(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1MiB", "fast"} {
		if _, err := soak.ParseLeakThreshold(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// NewConfig refuses, as usage errors, a soak without a scenario or a
// duration, or a leak threshold that is not a size per hour.
func TestNewConfigRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	yaml := "name: x\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    soak.Options
		want string
	}{
		{soak.Options{Duration: 1}, "--scenario is required"},
		{soak.Options{Scenario: path}, "--duration is required"},
		{soak.Options{Scenario: path, Duration: 1, Leak: "fast"}, "--leak-threshold"},
	} {
		if _, err := soak.NewConfig(c.o); !errors.Is(err, session.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error saying %q", c.o, err, c.want)
		}
	}
}
