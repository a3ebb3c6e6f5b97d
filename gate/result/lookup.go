package result

import "github.com/HdrHistogram/hdrhistogram-go"

// JudgedPhase returns the first phase marked judged, nil if none.
func (r *Result) JudgedPhase() *Phase {
	for i := range r.Phases {
		if r.Phases[i].Judged {
			return &r.Phases[i]
		}
	}
	return nil
}

func (r *Result) RecoverPhase() *Phase {
	for i := range r.Phases {
		if r.Phases[i].Recover {
			return &r.Phases[i]
		}
	}
	return nil
}

func (r *Result) PhaseNamed(name string) *Phase {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// Workload returns the workload called name in p, nil if none (or p is nil).
func (p *Phase) Workload(name string) *Workload {
	if p == nil {
		return nil
	}
	for i := range p.Workloads {
		if p.Workloads[i].Name == name {
			return &p.Workloads[i]
		}
	}
	return nil
}

// ErrorRate returns failed / (succeeded + failed) and that n; n == 0 means not measured.
func (w *Workload) ErrorRate() (rate float64, n int64) {
	n = w.Succeeded + w.Failed
	if n <= 0 {
		return 0, n
	}
	return float64(w.Failed) / float64(n), n
}

func (w *Workload) LatencyHistogram() (*hdrhistogram.Histogram, error) {
	return DecodeHistogram(w.Histogram)
}

func (w *Workload) ServiceHistogram() (*hdrhistogram.Histogram, error) {
	return DecodeHistogram(w.ServiceH)
}
