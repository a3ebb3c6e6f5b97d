// Package demo holds loadgate's demo stack (compose.yaml, scenario.yaml and
// the service's source in service/) and builds the service's binary.
package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the demo service as a static Linux binary into
// dir/service/bin/service, the Docker build context of compose.yaml's
// FROM scratch images. dir is the examples/demo directory.
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
