package load_test

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/load"
)

// cmsg builds one control message in the kernel's native layout.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	if unsafe.Sizeof(uintptr(0)) == 8 {
		binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(unix.CmsgLen(len(data))))
	}
	h := unix.SizeofCmsghdr
	binary.NativeEndian.PutUint32(b[h-8:], uint32(level))
	binary.NativeEndian.PutUint32(b[h-4:], uint32(typ))
	copy(b[h:], data)
	return b
}

func timespec64(sec, nsec int64) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint64(b, uint64(sec))
	binary.NativeEndian.PutUint64(b[8:], uint64(nsec))
	return b
}

func TestParseRxTimestamp(t *testing.T) {
	const sec, nsec = 1_796_000_000, 123_456_789
	want := int64(sec)*1e9 + nsec
	ts := timespec64(sec, nsec)
	other := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{1, 2, 3, 4})
	cases := []struct {
		name string
		oob  []byte
		want int64
		ok   bool
	}{
		{"new layout", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, ts), want, true},
		{"old layout", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, ts), want, unsafe.Sizeof(uintptr(0)) == 8},
		{"after another message", append(append([]byte{}, other...), cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, ts)...), want, true},
		{"empty", nil, 0, false},
		{"another level", cmsg(unix.IPPROTO_IP, unix.SO_TIMESTAMPNS_NEW, ts), 0, false},
		{"only another message", other, 0, false},
		{"short data", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, ts[:8]), 0, false},
		{"nanoseconds out of range", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec64(sec, 1e9)), 0, false},
		{"zero time", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec64(0, 0)), 0, false},
		{"truncated header", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, ts)[:unix.SizeofCmsghdr-1], 0, false},
		{"length past the buffer", cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, ts)[:unix.SizeofCmsghdr+8], 0, false},
	}
	for _, c := range cases {
		got, ok := load.ParseRxTimestamp(c.oob)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseRxTimestamp(f *testing.F) {
	f.Add(cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_NEW, timespec64(1_796_000_000, 5)))
	f.Add(append(cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{1, 2, 3, 4}), cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS_OLD, timespec64(1, 2))...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		ns, ok := load.ParseRxTimestamp(oob) // never panics
		if ok && ns <= 0 {
			t.Fatalf("ok with %d", ns)
		}
		if !ok && ns != 0 {
			t.Fatalf("not ok but %d", ns)
		}
	})
}
