package verdict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// The noise between runs, and where a comparison gets it when its own
// rounds cannot measure it.
//
// A comparison's interval needs the spread of the per-round log ratio
// r = ln(head/base) between runs (CPU frequency, neighbours, cache state).
// With R ≥ 2 independent pairs of rounds the gate measures it (the t
// interval). With one pair (a `compare` of two single runs, a stored
// baseline against one run), or when one result stands in several rounds
// (a stored baseline paired with every head round), the rounds cannot see
// it: then the spread comes from a calibration of this machine
// (baselines/<scenario>/noise.json, written by `loadgate calibrate`) when
// one matches, else from DefaultNoiseSD, a documented conservative bound.

// DefaultNoiseSD is the standard deviation of the log ratio ln(head/base)
// of one pair of runs assumed when no matching calibration exists and the
// rounds cannot measure it: 0.30, i.e. one run's log-sd 0.30/√2 ≈ 0.21 (a
// single run swinging ≈ ±23% at one sd).
//
// Why this number: on this 2-core machine, shared with other engineers'
// tests and benchmarks (1 December 2026), 10 consecutive 12 s runs of a
// 3 ms endpoint at 200/s (2 400 successes each) gave p95s of 3.40…6.37 ms:
// a log-sd of one run of 0.21 (so 0.29 for a pair of runs taken at
// different times, as a stored baseline and a later run are), and 0.12
// for pairs of back-to-back runs (which share the machine's state, as a
// gate's rounds do). The README's "shared runners swing 10–20% from run
// to run" puts a pair at 0.14–0.26. 0.30 is above all of them. At 95% a
// single pair's interval is then ×/÷ e^(1.96·0.30) = 1.80 wide: a 15×
// slowdown is a regression from one run each, anything below ≈ ×1.98
// (tolerance 10%) stays inconclusive, and the report says so and why.
//
// Its limit: on 1 December 2026, 21:22–21:47 UTC, the host of this virtual
// machine took 1–36% of each vCPU in steal and the demo stack's core ran
// 80–97% busy; paired duet rounds' log ratios then had an sd of 0.30–0.36
// (bench/gate-quality-duet-eq.md). On such a host the default is not
// conservative (at an sd of 0.36 one run each calls a false regression in
// ≈ 2.9% of A/A pairs instead of 1.1%, and a change at the tolerance in
// 5.1% instead of 2.5%); a calibration there measures the host's own noise, and
// the result's steal says when a host is like that.
const DefaultNoiseSD = 0.30

// NoiseSchema is the schema of noise.json.
const NoiseSchema = "loadgate/noise/v1"

// maxNoiseBytes bounds what DecodeNoise reads.
const maxNoiseBytes = 4 << 20

// Noise is a calibration: the noise between runs of one scenario on one
// machine and topology, measured from A/A pairs of rounds (both sides the
// same checkout, ABBA, as a gate runs them). It is the file
// baselines/<scenario>/noise.json.
type Noise struct {
	Schema string `json:"schema"`
	// Scenario and Hash: the load measured (result.Scenario's name and hash).
	Scenario string `json:"scenario"`
	Hash     string `json:"hash"`
	// Machine and Topology as the calibration's results recorded them.
	Machine  result.Machine  `json:"machine"`
	Topology result.Topology `json:"topology"`
	// Date: when the calibration finished.
	Date time.Time `json:"date"`
	// Pairs: the A/A pairs of rounds measured.
	Pairs int `json:"pairs"`
	// Entries: the noise of each workload, phase and metric.
	Entries []NoiseEntry `json:"entries"`
}

// NoiseEntry is the noise of one judged number: the sample standard
// deviation SD of the per-pair log ratio ln(head_i/base_i) of Metric (a
// latency percentile) over the calibration's pairs, with DF degrees of
// freedom (pairs − 1), and the fewest successes per round it stood on.
type NoiseEntry struct {
	Phase     string  `json:"phase"`
	Workload  string  `json:"workload"`
	Metric    string  `json:"metric"`
	SD        float64 `json:"sd"`
	DF        int     `json:"df"`
	Successes int64   `json:"successes"`
}

// Entry returns the entry for phase, workload and metric, nil when there is none.
func (n *Noise) Entry(phase, workload, metric string) *NoiseEntry {
	if n == nil {
		return nil
	}
	for i := range n.Entries {
		e := &n.Entries[i]
		if e.Phase == phase && e.Workload == workload && e.Metric == metric {
			return e
		}
	}
	return nil
}

// DecodeNoise reads a noise.json: the schema must be NoiseSchema, no field
// unknown, every entry named, with a finite SD ≥ 0 and DF ≥ 1, no entry
// twice. It reads at most 4 MiB.
func DecodeNoise(rd io.Reader) (*Noise, error) {
	b, err := io.ReadAll(io.LimitReader(rd, maxNoiseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	if len(b) > maxNoiseBytes {
		return nil, fmt.Errorf("noise: larger than %d bytes", maxNoiseBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var n Noise
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("noise: %w", err)
	}
	if dec.More() {
		return nil, errors.New("noise: data after the object")
	}
	if n.Schema != NoiseSchema {
		return nil, fmt.Errorf("noise: schema %q, want %q", n.Schema, NoiseSchema)
	}
	if n.Hash == "" {
		return nil, errors.New("noise: no scenario hash")
	}
	if n.Pairs < 2 {
		return nil, fmt.Errorf("noise: %d pair(s): at least 2 measure a spread", n.Pairs)
	}
	seen := map[[3]string]bool{}
	for i, e := range n.Entries {
		if e.Phase == "" || e.Workload == "" {
			return nil, fmt.Errorf("noise: entries[%d]: phase and workload must be named", i)
		}
		switch e.Metric {
		case MetricP50, MetricP90, MetricP95, MetricP99, MetricP999:
		default:
			return nil, fmt.Errorf("noise: entries[%d]: metric %q: want p50, p90, p95, p99 or p99.9", i, e.Metric)
		}
		if !(e.SD >= 0) || math.IsInf(e.SD, 0) || e.SD > 10 {
			return nil, fmt.Errorf("noise: entries[%d]: sd %v: want a log-ratio sd in [0, 10]", i, e.SD)
		}
		if e.DF < 1 || e.DF > n.Pairs-1 {
			return nil, fmt.Errorf("noise: entries[%d]: df %d: want 1 … pairs−1 (%d)", i, e.DF, n.Pairs-1)
		}
		if e.Successes < 0 {
			return nil, fmt.Errorf("noise: entries[%d]: successes %d < 0", i, e.Successes)
		}
		k := [3]string{e.Phase, e.Workload, e.Metric}
		if seen[k] {
			return nil, fmt.Errorf("noise: entries[%d]: %s/%s %s twice", i, e.Phase, e.Workload, e.Metric)
		}
		seen[k] = true
	}
	if n.Entries == nil {
		n.Entries = []NoiseEntry{}
	}
	return &n, nil
}

// Encode writes n as indented JSON (what DecodeNoise reads).
func (n *Noise) Encode(w io.Writer) error {
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Why a calibration was not used (NoiseUse.Rejected).
const (
	NoiseOtherScenario = "scenario_hash" // measured on another load
	NoiseOtherMachine  = "machine"       // measured on another machine
	NoiseOtherTopology = "topology"      // measured with the stack or generator on other cores, or another target path
	// NoiseDuet: the result ran in a duet round; a calibration measured
	// one-side-at-a-time rounds (loadgate calibrate), whose noise is
	// another quantity than a duet's.
	NoiseDuet = "duet"
)

// MachineKey is what must be equal for a calibration to be of the same
// machine: host name, processor model, CPU count, OS and architecture (not
// the kernel or Go version: a runner image update keeps the machine). The
// processor is part of it because virtual machines of one host name and
// size are handed out on different processors, and their noise can differ
// (README.md, "Measured a fourth time": a round's sd ±3–8% on this
// development machine's Intel Xeon VM, ±9–40% on its AMD EPYC VM, other
// differences between the two days not ruled out); a calibration that does
// not name its processor (an older loadgate's) is therefore not taken for
// a result that does: calibrate again.
func MachineKey(m result.Machine) string {
	return fmt.Sprintf("%s|%s|%d|%s|%s", m.Host, m.CPUModel, m.CPUs, m.OS, m.Arch)
}

// TopologyKey is what must be equal for a calibration to be of the same
// topology: the stack's and the generator's cores, whether they were
// pinned, the path to the target and the generator's scheduling (a
// generator raised to real time is late less often than one that is not:
// its rounds' noise is another).
func TopologyKey(t result.Topology) string {
	return fmt.Sprintf("%s|%s|%t|%s|%s", t.StackCPUs, t.LoadCPUs, t.Pinned, t.TargetPath, t.Scheduling())
}

// Match says why the calibration n cannot stand for the noise of r's runs
// ("" when it can): same scenario hash, same machine (MachineKey), same
// topology (TopologyKey), not a duet round (NoiseDuet), checked in that
// order.
func (n *Noise) Match(r *result.Result) string {
	switch {
	case n.Hash != r.Scenario.Hash:
		return NoiseOtherScenario
	case MachineKey(n.Machine) != MachineKey(r.Machine):
		return NoiseOtherMachine
	case TopologyKey(n.Topology) != TopologyKey(r.Topology):
		return NoiseOtherTopology
	case isDuet(r):
		return NoiseDuet
	}
	return ""
}

// NoiseUse says which noise bound a verdict's comparisons used where their
// rounds could not measure the noise between runs (Verdict.Noise).
type NoiseUse struct {
	// Source: NoiseDefault or NoiseCalibration.
	Source string `json:"source"`
	// SD: the pair log-ratio sd of the default bound (Source default).
	SD float64 `json:"sd,omitempty"`
	// Date, Pairs: the calibration's (Source calibration, or the rejected one).
	Date  time.Time `json:"date,omitzero"`
	Pairs int       `json:"pairs,omitempty"`
	// Rejected: a calibration was given but not used, and why
	// (NoiseOtherScenario, NoiseOtherMachine, NoiseOtherTopology,
	// NoiseDuet); Here (the result that differs) and There (the
	// calibration) hold what differs, Here.Side and Here.Round name the
	// duet result (package report words it).
	Rejected string       `json:"rejected,omitempty"`
	Here     NoiseSetting `json:"here,omitzero"`
	There    NoiseSetting `json:"there,omitzero"`
}

// NoiseSetting is what a calibration must share with the results it is
// used for: the scenario hash, the machine, the topology.
type NoiseSetting struct {
	// Side and Round (NoiseDuet): the result, "base" or "head", 1-based.
	Side     string          `json:"side,omitempty"`
	Round    int             `json:"round,omitempty"`
	Hash     string          `json:"hash,omitempty"`
	Machine  result.Machine  `json:"machine,omitzero"`
	Topology result.Topology `json:"topology,omitzero"`
}

// Noise sources.
const (
	NoiseDefault     = "default"     // DefaultNoiseSD
	NoiseCalibration = "calibration" // a matching noise.json
)

// noiseFor picks the calibration a comparison of base and head may use:
// opt.Noise when it matches every result of both sides, else none, with
// the use it records (nil when no bound is needed: that is decided later).
func noiseFor(n *Noise, base, head []*result.Result) (*Noise, NoiseUse) {
	if n == nil {
		return nil, NoiseUse{Source: NoiseDefault, SD: DefaultNoiseSD}
	}
	for s, rs := range [][]*result.Result{base, head} {
		for i, r := range rs {
			if why := n.Match(r); why != "" {
				u := NoiseUse{Source: NoiseDefault, SD: DefaultNoiseSD, Date: n.Date, Pairs: n.Pairs, Rejected: why}
				switch why {
				case NoiseOtherScenario:
					u.Here.Hash, u.There.Hash = r.Scenario.Hash, n.Hash
				case NoiseOtherMachine:
					u.Here.Machine, u.There.Machine = r.Machine, n.Machine
				case NoiseOtherTopology:
					u.Here.Topology, u.There.Topology = r.Topology, n.Topology
				case NoiseDuet:
					u.Here.Side, u.Here.Round = [2]string{"base", "head"}[s], i+1
				}
				return nil, u
			}
		}
	}
	return n, NoiseUse{Source: NoiseCalibration, Date: n.Date, Pairs: n.Pairs}
}
