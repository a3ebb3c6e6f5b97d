package result

// Limits of a generator on schedule. Past either, latency from the due
// time carries the generator's own delay.
const (
	// LateShareLimit: at most this fraction of the measured phases' offered
	// requests may be late (sent more than late_after after their due time).
	LateShareLimit = 0.01
	// LatenessP99LimitMS: the lateness p99 (send time minus due time, over
	// every sent measured request) may be at most this many milliseconds.
	LatenessP99LimitMS = 5.0
)

// Generator is result.json's "generator": present only when the generator
// fell behind its schedule. It is derived by GeneratorBehind (Encode and
// Decode replace any value set), and holds numbers only; gate/report words
// them.
type Generator struct {
	BehindSchedule     bool    `json:"behind_schedule"`       // always true when present
	Late               int64   `json:"late"`                  // = result late
	Offered            int64   `json:"offered"`               // = result offered (measured phases)
	LateShare          float64 `json:"late_share"`            // late / offered, 0 when nothing was offered
	LatenessP99MS      float64 `json:"lateness_p99_ms"`       // = lateness_ms.p99
	LatenessCount      int64   `json:"lateness_count"`        // = lateness_ms.count, the samples the p99 stands on
	LateShareLimit     float64 `json:"late_share_limit"`      // LateShareLimit
	LatenessP99LimitMS float64 `json:"lateness_p99_limit_ms"` // LatenessP99LimitMS
	// StealShare = steal.load.share, one cause of lateness nothing inside the
	// machine shows (absent when steal was not read).
	StealShare *float64 `json:"steal_share,omitempty"`
	// Reason is the warning in words, filled only by gate/report for a gate's
	// verdict.json; a result never sets it.
	Reason string `json:"reason,omitempty"`
}

// GeneratorBehind returns the warning when more than LateShareLimit of the
// measured offered requests were late or the lateness p99 was above
// LatenessP99LimitMS, else nil. It is the one place this is decided and
// never modifies r.
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
