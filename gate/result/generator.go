package result

// Limits of a generator on schedule (design rule 19, "say when the generator
// is part of the measurement"). Past either one the generator itself was a
// bottleneck: latency measured from the due time then carries the
// generator's own delay, and a difference between two runs may be the
// generator's, not the server's.
const (
	// LateShareLimit: at most this fraction of the measured phases' offered
	// requests may be late (sent more than late_after after their due time).
	LateShareLimit = 0.01
	// LatenessP99LimitMS: the lateness p99 (send time minus due time, over
	// every sent measured request) may be at most this many milliseconds.
	LatenessP99LimitMS = 5.0
)

// Generator is result.json's "generator" object: present only when the
// generator fell behind its own schedule beyond LateShareLimit or
// LatenessP99LimitMS (absent means on schedule, so results of a generator
// on schedule encode exactly as before the field existed).
//
// It is derived, never measured on its own: GeneratorBehind computes it
// from late, offered and lateness_ms.p99, and Encode and Decode set it from
// them (a value set by hand, or read from a file, is replaced), so it always
// agrees with the numbers it stands beside.
//
// It holds numbers only; gate/report words them (report.GeneratorWhy).
type Generator struct {
	BehindSchedule     bool    `json:"behind_schedule"`       // always true when present
	Late               int64   `json:"late"`                  // = result late
	Offered            int64   `json:"offered"`               // = result offered (measured phases)
	LateShare          float64 `json:"late_share"`            // late / offered, 0 when nothing was offered
	LatenessP99MS      float64 `json:"lateness_p99_ms"`       // = lateness_ms.p99
	LatenessCount      int64   `json:"lateness_count"`        // = lateness_ms.count, the samples the p99 stands on
	LateShareLimit     float64 `json:"late_share_limit"`      // LateShareLimit
	LatenessP99LimitMS float64 `json:"lateness_p99_limit_ms"` // LatenessP99LimitMS
	// StealShare = steal.load.share: the share of the generator's cores
	// that their hypervisor ran something else on over the measured
	// window, one cause of a generator behind that nothing inside the
	// machine shows (absent when steal was not read).
	StealShare *float64 `json:"steal_share,omitempty"`
	// Reason is the warning in words, filled only by gate/report
	// (report.Explain, for a gate's verdict.json). A result never sets it:
	// result.json no longer carries it, and a file written before that
	// still reads (the words it held are dropped with the rest of a
	// decoded value, as GeneratorBehind recomputes it).
	Reason string `json:"reason,omitempty"`
}

// GeneratorBehind says whether the generator fell behind its own schedule:
// more than LateShareLimit of the measured phases' offered requests late, or
// a lateness p99 above LatenessP99LimitMS. It returns nil when the generator
// kept its schedule (or nothing was offered and nothing was sent), and
// otherwise the warning with its numbers and their limits (the issue 8
// run: 342 of 600 late, share 0.57, lateness p99 833.2 ms over n=600).
//
// It is the one place this fact is decided: the result's "generator"
// field, the reports' warning and the gate's refusal to call a regression
// on such a round all come from it. It reads r and never modifies it.
func (r *Result) GeneratorBehind() *Generator {
	if r == nil {
		return nil
	}
	share := 0.0
	if r.Offered > 0 {
		share = float64(r.Late) / float64(r.Offered)
	}
	p99 := r.LatenessMS.P99
	if share <= LateShareLimit && p99 <= LatenessP99LimitMS {
		return nil
	}
	var steal *float64
	if r.Steal != nil {
		s := r.Steal.Load.Share
		steal = &s
	}
	return &Generator{
		StealShare:         steal,
		BehindSchedule:     true,
		Late:               r.Late,
		Offered:            r.Offered,
		LateShare:          share,
		LatenessP99MS:      p99,
		LatenessCount:      r.LatenessMS.Count,
		LateShareLimit:     LateShareLimit,
		LatenessP99LimitMS: LatenessP99LimitMS,
	}
}
