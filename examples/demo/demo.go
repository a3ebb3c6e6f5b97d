// Package demo holds loadgate's demo stack and builds its binaries.
package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the demo's binaries under dir (examples/demo) for its FROM scratch images.
func Build(ctx context.Context, dir string) error {
	out := filepath.Join(dir, "service", "bin", "service")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = filepath.Join(dir, "service")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("demo: build service: %v\n%s", err, b)
	}
	// The backend is `loadgate stub`: loadgate itself, into stub/bin.
	cmd = exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "stub", "bin", "loadgate"), "../../cmd/loadgate")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("demo: build the stub (loadgate): %v\n%s", err, b)
	}
	return nil
}
