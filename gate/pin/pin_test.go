package pin_test

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/loadgate/loadgate/gate/pin"
)

func TestParseFormat(t *testing.T) {
	cases := []struct{ in, out string }{
		{"", ""},
		{"0", "0"},
		{"0-1,3", "0-1,3"},
		{" 3,0-1 ", "0-1,3"},
		{"0,1,2,5,6,7,9", "0-2,5-7,9"},
		{"2-2", "2"},
		{"1,1,0", "0-1"},
	}
	for _, c := range cases {
		s, err := pin.Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		if got := s.String(); got != c.out {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, got, c.out)
		}
	}
	for _, bad := range []string{"a", "1-", "-1", "3-1", "1,,2", "0-7:2", "99999"} {
		if _, err := pin.Parse(bad); err == nil {
			t.Errorf("Parse(%q): want error", bad)
		}
	}
}

func TestJSON(t *testing.T) {
	b, err := json.Marshal(struct{ S pin.Set }{pin.MustParse("0-1,3")})
	if err != nil || string(b) != `{"S":"0-1,3"}` {
		t.Fatalf("marshal: %s %v", b, err)
	}
	var v struct{ S pin.Set }
	if err := json.Unmarshal(b, &v); err != nil || v.S.String() != "0-1,3" {
		t.Fatalf("unmarshal: %v %v", v.S, err)
	}
}

func TestSplitOverlap(t *testing.T) {
	cases := []struct {
		all, stack, load string
		overlap          bool
	}{
		{"", "", "", false},
		{"0", "0", "0", true},
		{"0-1", "0", "1", false},
		{"0-2", "0", "1-2", false},
		{"0-3", "0-1", "2-3", false},
		{"2,4,6,8,10", "2,4", "6,8,10", false},
	}
	for _, c := range cases {
		s, l := pin.Split(pin.MustParse(c.all))
		if s.String() != c.stack || l.String() != c.load {
			t.Errorf("Split(%s) = %s, %s; want %s, %s", c.all, s, l, c.stack, c.load)
		}
		if got := pin.Overlaps(s, l); got != c.overlap {
			t.Errorf("Overlaps(%s, %s) = %v", s, l, got)
		}
	}
	if !pin.Overlaps(pin.MustParse("0-3"), pin.MustParse("3-5")) || pin.Overlaps(pin.MustParse("0-2"), pin.MustParse("3-5")) {
		t.Error("Overlaps wrong")
	}
	if !pin.MustParse("1").SubsetOf(pin.MustParse("0-1")) || pin.MustParse("2").SubsetOf(pin.MustParse("0-1")) {
		t.Error("SubsetOf wrong")
	}
}

func TestPinProcessReadBack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("affinity is Linux-only")
	}
	avail, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	back, err := pin.ReadBack()
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(avail) {
		t.Fatalf("ReadBack %s != Available %s before pinning", back, avail)
	}
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		if err := pin.PinProcess(avail); err != nil {
			t.Errorf("restore: %v", err)
		}
		runtime.GOMAXPROCS(prev)
	})
	// Pin to the last available CPU (the "load" half on this machine).
	_, load := pin.Split(avail)
	target, _ := pin.Of(load.CPUs()[load.Len()-1])
	if err := pin.PinProcess(target); err != nil {
		t.Fatal(err)
	}
	if back, err = pin.ReadBack(); err != nil || !back.Equal(target) {
		t.Fatalf("ReadBack after PinProcess(%s) = %s, %v", target, back, err)
	}
	if got := runtime.GOMAXPROCS(0); got != target.Len() {
		t.Errorf("GOMAXPROCS = %d, want %d", got, target.Len())
	}
	sets, err := pin.ThreadSets()
	if err != nil {
		t.Fatal(err)
	}
	for tid, s := range sets {
		if !s.Equal(target) {
			t.Errorf("thread %d has affinity %s, want %s", tid, s, target)
		}
	}
	// A new goroutine locked to a (possibly new) thread keeps the mask.
	done := make(chan pin.Set)
	go func() {
		runtime.LockOSThread()
		s, _ := pin.Available()
		done <- s
	}()
	if s := <-done; !s.Equal(target) {
		t.Errorf("new thread affinity %s, want %s", s, target)
	}
	if err := pin.PinProcess(pin.MustParse("4095")); err == nil {
		t.Error("pinning to an unavailable cpu: want error")
	}
}
