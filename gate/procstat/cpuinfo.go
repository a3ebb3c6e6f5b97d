package procstat

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// CPUModel is the processor ROOT/cpuinfo names ("" if unread): VMs alike in
// host, cores and kernel may differ in it, and so in noise.
func (r Reader) CPUModel() string {
	b, err := os.ReadFile(filepath.Join(r.root(), "cpuinfo"))
	if err != nil {
		return ""
	}
	return ParseCPUModel(b)
}

// ParseCPUModel returns the first "model name" of a /proc/cpuinfo text, or "".
func ParseCPUModel(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(val), " ")
		}
	}
	return ""
}
