package verdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/strictjson"
)

// DefaultNoiseSD is the pair log-ratio sd assumed when the rounds cannot
// measure the noise and no calibration matches: a conservative bound for a
// shared machine (calibrate a host with heavy steal).
const DefaultNoiseSD = 0.30

// NoiseSchema is the schema of noise.json.
const NoiseSchema = "loadgate/noise/v1"

const maxNoiseBytes = 4 << 20

// Noise is a calibration (baselines/<scenario>/noise.json): the noise between
// runs of one scenario on one machine and topology, from A/A pairs of rounds.
type Noise struct {
	Schema   string          `json:"schema"`
	Scenario string          `json:"scenario"`
	Hash     string          `json:"hash"`
	Machine  result.Machine  `json:"machine"`
	Topology result.Topology `json:"topology"`
	Date     time.Time       `json:"date"` // when the calibration finished
	Pairs    int             `json:"pairs"`
	Entries  []NoiseEntry    `json:"entries"`
}

// NoiseEntry is the sample sd of the per-pair log ratio of one latency
// Metric, with DF = pairs − 1, and the fewest successes per round.
type NoiseEntry struct {
	Phase     string  `json:"phase"`
	Workload  string  `json:"workload"`
	Metric    string  `json:"metric"`
	SD        float64 `json:"sd"`
	DF        int     `json:"df"`
	Successes int64   `json:"successes"`
}

// Entry returns the entry for phase, workload and metric, or nil.
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

// DecodeNoise reads a noise.json of at most 4 MiB: NoiseSchema, no
// unknown field, every entry named once with a finite SD ≥ 0 and DF ≥ 1.
func DecodeNoise(rd io.Reader) (*Noise, error) {
	var n Noise
	if err := strictjson.Decode(rd, maxNoiseBytes, &n); err != nil {
		return nil, fmt.Errorf("noise: %w", err)
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
	NoiseDuet          = "duet"          // a duet round's noise, which a one-side calibration does not measure
)

// MachineKey is what must be equal for a calibration to be of the same
// machine. The processor model counts: VMs of one name land on processors
// of different noise.
func MachineKey(m result.Machine) string {
	return fmt.Sprintf("%s|%s|%d|%s|%s", m.Host, m.CPUModel, m.CPUs, m.OS, m.Arch)
}

// TopologyKey is what must be equal for a calibration to be of the same topology.
func TopologyKey(t result.Topology) string {
	return fmt.Sprintf("%s|%s|%t|%s|%s", t.StackCPUs, t.LoadCPUs, t.Pinned, t.TargetPath, t.Scheduling())
}

// Match says why n cannot stand for the noise of r's runs ("" when it can).
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

// NoiseUse says which noise bound a verdict's comparisons used.
type NoiseUse struct {
	Source string    `json:"source"`        // NoiseDefault or NoiseCalibration
	SD     float64   `json:"sd,omitempty"`  // the default bound's
	Date   time.Time `json:"date,omitzero"` // the calibration's, used or rejected
	Pairs  int       `json:"pairs,omitempty"`
	// Rejected: why a given calibration was not used; Here and There hold
	// what differs.
	Rejected string       `json:"rejected,omitempty"`
	Here     NoiseSetting `json:"here,omitzero"`
	There    NoiseSetting `json:"there,omitzero"`
}

// NoiseSetting is what a calibration must share with its results.
type NoiseSetting struct {
	Side     string          `json:"side,omitempty"` // with Round: a duet result
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

// noiseFor picks the calibration that matches every result, and its use.
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
