package procstat

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// CPUModel is the machine's processor as ROOT/cpuinfo names it (the first
// "model name", e.g. "AMD EPYC" or "Intel(R) Xeon(R) Processor"), "" when
// it cannot be read. Two virtual machines alike in host name, cores and
// kernel can run on different processors, and their noise can differ
// with them: a calibration or a baseline of one is not taken for the
// other's (result.Machine.CPUModel, verdict.MachineKey).
func (r Reader) CPUModel() string {
	b, err := os.ReadFile(filepath.Join(r.root(), "cpuinfo"))
	if err != nil {
		return ""
	}
	return ParseCPUModel(b)
}

// ParseCPUModel returns the value of the first "model name" line of a
// /proc/cpuinfo text, spaces trimmed, "" when there is none (some
// architectures name the processor otherwise).
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
