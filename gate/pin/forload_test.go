package pin_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/pin"
)

// Under normal the generator is never raised: nothing to lower, and why
// is stated.
func TestForLoadNormal(t *testing.T) {
	l, err := pin.ForLoad(pin.ModeNormal, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Lower(); got != "" {
		t.Errorf("Lower = %q, want nothing dropped", got)
	}
	if l.Why == "" {
		t.Error("no reason stated for not raising")
	}
	var none *pin.Load
	if none.Lower() != "" {
		t.Error("a nil Load lowered something")
	}
}
