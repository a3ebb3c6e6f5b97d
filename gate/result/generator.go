package result

// Limits of a generator on schedule: past either, latency from the due time
// carries the generator's own delay.
const (
	LateShareLimit     = 0.01 // of the measured offered requests sent late
	LatenessP99LimitMS = 5.0  // p99 of send time minus due time
)

// Generator is result.json's "generator", present only when the generator fell
// behind its schedule: numbers only, derived by GeneratorBehind on Encode and Decode.
type Generator struct {
	BehindSchedule     bool    `json:"behind_schedule"`       // always true when present
	Late               int64   `json:"late"`                  // = result late
	Offered            int64   `json:"offered"`               // = result offered (measured phases)
	LateShare          float64 `json:"late_share"`            // late / offered, 0 when nothing was offered
	LatenessP99MS      float64 `json:"lateness_p99_ms"`       // = lateness_ms.p99
	LatenessCount      int64   `json:"lateness_count"`        // = lateness_ms.count, the samples the p99 stands on
	LateShareLimit     float64 `json:"late_share_limit"`      // LateShareLimit
	LatenessP99LimitMS float64 `json:"lateness_p99_limit_ms"` // LatenessP99LimitMS
	// StealShare = steal.load.share, a cause of lateness nothing inside the machine shows.
	StealShare *float64 `json:"steal_share,omitempty"`
	// Reason is set only by gate/report, in a gate's verdict.json.
	Reason string `json:"reason,omitempty"`
}

// GeneratorBehind returns the warning when either limit was passed, else nil;
// it is the one place this is decided.
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
