package result

import "strings"

// ShortHash shortens a hash to 12 hex digits, keeping an algorithm prefix:
// "sha256:<hex>" → "sha256:9f86d081884c", a git commit → its first 12
// digits. "" stays "" (the caller says what is unknown).
func ShortHash(h string) string {
	algo, hex, ok := strings.Cut(h, ":")
	if !ok {
		algo, hex = "", h
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if algo == "" {
		return hex
	}
	return algo + ":" + hex
}

// DuetGeneratorNotMeasured is the not_measured line of a duet round's
// result: one loadgate process ran both sides' engines.
const DuetGeneratorNotMeasured = "the generator's own CPU and memory (stack.generator) are not one side's: one loadgate process ran both duet sides' engines, so they are both sides' together"
