// Package enginetest holds what the tests against the real Docker engine
// share: skipping loudly without an engine (failing under
// LOADGATE_REQUIRE_DOCKER=1, as CI sets), and listing what a stack left.
package enginetest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/loadgate/loadgate/compose"
)

// Require skips t, loudly, when no Docker engine answers, or fails it under
// LOADGATE_REQUIRE_DOCKER=1. what names the tests that would not run.
func Require(t testing.TB, what string) {
	t.Helper()
	if err := compose.Available(context.Background()); err != nil {
		msg := fmt.Sprintf("!!! NO DOCKER ENGINE: %v — %s NOT RUN (set LOADGATE_REQUIRE_DOCKER=1 to fail instead)", err, what)
		if os.Getenv("LOADGATE_REQUIRE_DOCKER") == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
}

// Leftovers lists the containers, networks, volumes and images carrying
// label ("key=value"), failing t when the engine cannot be asked.
func Leftovers(t testing.TB, label string) []string {
	t.Helper()
	left, err := compose.Labelled(context.Background(), label)
	if err != nil {
		t.Fatal(err)
	}
	return left
}
