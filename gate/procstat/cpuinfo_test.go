package procstat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/procstat"
)

func TestParseCPUModel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"the first of several cpus", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n", "AMD EPYC"},
		{"inner spaces kept single", "model name\t:   Intel(R)  Xeon(R) Processor  \n", "Intel(R) Xeon(R) Processor"},
		{"no model name (arm64's cpuinfo)", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", ""},
		{"a key that only contains the words", "my model name x\t: no\n", ""},
		{"empty", "", ""},
	} {
		if got := procstat.ParseCPUModel([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCPUModelReadsRootCPUInfo(t *testing.T) {
	dir := t.TempDir()
	if got := (procstat.Reader{Root: dir}).CPUModel(); got != "" {
		t.Errorf("no cpuinfo: %q, want \"\"", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpuinfo"), []byte("model name\t: AMD EPYC\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (procstat.Reader{Root: dir}).CPUModel(); got != "AMD EPYC" {
		t.Errorf("CPUModel %q, want AMD EPYC", got)
	}
}

// Whatever /proc/cpuinfo holds, the model is one line of single-spaced
// words that the text contains, and reading it again finds it again.
func FuzzParseCPUModel(f *testing.F) {
	f.Add([]byte("processor\t: 0\nmodel name\t: AMD EPYC\n"))
	f.Add([]byte("model name:\n"))
	f.Add([]byte("model name\t:  a \t b  \r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := procstat.ParseCPUModel(b)
		if m == "" {
			return
		}
		if m != strings.Join(strings.Fields(m), " ") {
			t.Fatalf("model %q is not single-spaced words", m)
		}
		if again := procstat.ParseCPUModel([]byte("model name\t: " + m + "\n")); again != m {
			t.Fatalf("%q read back as %q", m, again)
		}
	})
}
