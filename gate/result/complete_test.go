package result_test

import (
	"errors"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// Complete is the one step after the load: the stack's samples, up and
// teardown times, and a teardown that failed making the result unusable.
func TestCompleteRecordsWhatIsKnownAfterTheLoad(t *testing.T) {
	r := &result.Result{Usable: true}
	r.Complete(result.After{Stack: &result.Stack{Services: []result.Service{{Name: "api", Samples: 3}}},
		Up: 1500 * time.Millisecond, Teardown: 2 * time.Second})
	if r.Stack == nil || len(r.Stack.Services) != 1 || r.Stack.UpS != 1.5 || r.Stack.TeardownS != 2 || !r.Usable {
		t.Errorf("after Complete: stack %+v usable %v", r.Stack, r.Usable)
	}
	r.Complete(result.After{TeardownErr: errors.New("container api: removal timed out")})
	if r.Usable || len(r.Unusable) != 1 || r.Unusable[0] != "the stack was not torn down cleanly: container api: removal timed out" {
		t.Errorf("a failed teardown: usable %v, %q", r.Usable, r.Unusable)
	}
	if r.Stack == nil || r.Stack.UpS != 1.5 {
		t.Error("Complete without a stack dropped the stack figures")
	}
}
