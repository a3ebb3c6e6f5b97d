package result

import "strings"

// ShortHash shortens a hash to 12 hex digits, keeping an algorithm prefix.
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

// DuetGeneratorNotMeasured: one loadgate process ran both sides' engines.
const DuetGeneratorNotMeasured = "the generator's own CPU and memory (stack.generator) are not one side's: one loadgate process ran both duet sides' engines, so they are both sides' together"
