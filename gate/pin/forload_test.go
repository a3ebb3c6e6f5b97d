package pin_test

import (
	"fmt"
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

// The report says by what right a user other than root raised the
// generator: the capability the Action's gate step adds, or an rtprio limit.
func ExampleGrantedBy() {
	fmt.Println(pin.GrantedBy(1001, "Name:\tloadgate\nCapEff:\t0000000000800000\n"))
	fmt.Println(pin.GrantedBy(1001, "CapEff:\t0000000000000000\n"))
	fmt.Printf("%q\n", pin.GrantedBy(0, "CapEff:\t000001ffffffffff\n"))
	// Output:
	// raised as uid 1001 through CAP_SYS_NICE
	// raised as uid 1001 through RLIMIT_RTPRIO
	// ""
}
