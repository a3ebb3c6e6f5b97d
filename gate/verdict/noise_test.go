package verdict_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

var (
	calMachine  = result.Machine{Host: "runner-1", CPUs: 2, Kernel: "6.18", Go: "go1.26", OS: "linux", Arch: "amd64"}
	calTopology = result.Topology{StackCPUs: "0", LoadCPUs: "1", Pinned: true, TargetPath: "container-network"}
)

// onePair is one base and one head run of 2 400 successes each (issue 14's
// case), head's latencies ratio × base's, with machine and topology set.
func onePair(t *testing.T, baseMedUS, ratio float64) (base, head []*result.Result) {
	b := mkRound(t, hashA, nil, []wlData{{name: "api", lat: spreadSigma(2400, baseMedUS, 1, 0.3)}}, nil)
	h := mkRound(t, hashA, nil, []wlData{{name: "api", lat: spreadSigma(2400, baseMedUS, ratio, 0.3)}}, nil)
	for _, r := range []*result.Result{b, h} {
		r.Machine, r.Topology = calMachine, calTopology
	}
	return []*result.Result{b}, []*result.Result{h}
}

// spreadSigma is spread with a log-sd of sigma.
func spreadSigma(n int, med, factor, sigma float64) []int64 {
	out := make([]int64, n)
	for i := range out {
		z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
		out[i] = max(int64(med*factor*math.Exp(sigma*z)), 1)
	}
	return out
}

func calibration(sd float64, df int) *verdict.Noise {
	return &verdict.Noise{Schema: verdict.NoiseSchema, Scenario: "demo", Hash: hashA, Machine: calMachine, Topology: calTopology,
		Date: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Pairs: df + 1,
		Entries: []verdict.NoiseEntry{{Phase: "sustain", Workload: "api", Metric: "p95", SD: sd, DF: df, Successes: 2400}}}
}

// One run each: a 15× slower p95 (0.21 ms → 3.2 ms) is a regression
// under the default noise bound; +20% stays inconclusive, saying that the
// noise between runs was assumed, the smallest change it could call, and
// that a calibration would replace the bound.
func TestOneRoundDecides(t *testing.T) {
	base, head := onePair(t, 130, 15)
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, "p95")
	if c.Value != verdict.Regression || c.Interval != verdict.IntervalNoise || c.NoiseSD != verdict.DefaultNoiseSD {
		t.Errorf("15×: %s (%s), interval %q sd %v; want a regression on the default noise bound", c.Value, c.Reason, c.Interval, c.NoiseSD)
	}
	if v.Noise == nil || v.Noise.Source != verdict.NoiseDefault || v.Noise.Rejected != "" {
		t.Errorf("noise use %+v", v.Noise)
	}
	// The interval is the bound's: ±1.96·0.30 (the sampling part is smaller).
	if got := math.Log(c.CIHigh/c.CILow) / 2; math.Abs(got-1.959964*verdict.DefaultNoiseSD) > 1e-3 {
		t.Errorf("half-width %v, want %v", got, 1.959964*verdict.DefaultNoiseSD)
	}

	base, head = onePair(t, 130, 1.2)
	v, _ = verdict.Compare(base, head, verdict.CompareOptions{})
	c = comparison(t, v, "p95")
	if c.Value != verdict.Inconclusive || c.Reason != verdict.ReasonStraddles || c.Needs == nil || !c.Needs.Calibrate || c.Needs.Rounds < 3 {
		t.Errorf("+20%%: %s (%s) needs %+v; want inconclusive, asking for rounds or a calibration", c.Value, c.Reason, c.Needs)
	}
	if c.Detectable < 1.9 || c.Detectable > 2.1 {
		t.Errorf("+20%%: detectable %v, want ≈ exp(ln 1.1 + 1.96·0.3) = 1.98", c.Detectable)
	}
}

// A matching calibration replaces the default bound; one from another
// machine, topology or load is not used, and the verdict says why.
func TestCalibrationMatch(t *testing.T) {
	base, head := onePair(t, 130, 1.2)
	// A quiet, calibrated machine (pair sd 0.03 over 10 pairs) decides +20% from one run each.
	v, err := verdict.Compare(base, head, verdict.CompareOptions{Noise: calibration(0.03, 9)})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, "p95")
	if c.Value != verdict.Regression || c.Interval != verdict.IntervalCalibration || v.Noise.Source != verdict.NoiseCalibration {
		t.Errorf("calibrated: %s (%s) interval %q noise %+v", c.Value, c.Reason, c.Interval, v.Noise)
	}
	// A noisier calibration keeps it inconclusive, and asks for no calibration.
	v, _ = verdict.Compare(base, head, verdict.CompareOptions{Noise: calibration(0.1, 9)})
	if c = comparison(t, v, "p95"); c.Value != verdict.Inconclusive || c.Needs == nil || c.Needs.Calibrate {
		t.Errorf("noisy calibration: %s needs %+v", c.Value, c.Needs)
	}
	for _, tt := range []struct {
		name   string
		change func(n *verdict.Noise)
		want   string
	}{
		{"machine", func(n *verdict.Noise) { n.Machine.Host = "laptop" }, verdict.NoiseOtherMachine},
		{"cpus", func(n *verdict.Noise) { n.Machine.CPUs = 8 }, verdict.NoiseOtherMachine},
		// Regression: two sessions' VMs were both "vm", 2 CPUs, linux/amd64,
		// one on an Intel Xeon, one on an AMD EPYC, and MachineKey took one
		// for the other.
		{"processor", func(n *verdict.Noise) { n.Machine.CPUModel = "Intel(R) Xeon(R) Processor" }, verdict.NoiseOtherMachine},
		{"topology", func(n *verdict.Noise) { n.Topology.LoadCPUs = "2-3" }, verdict.NoiseOtherTopology},
		// A calibration of a generator raised to real time is not one of a
		// generator that was not (the results here state none: SCHED_OTHER).
		{"scheduling", func(n *verdict.Noise) { n.Topology.LoadScheduling = "SCHED_RR 1" }, verdict.NoiseOtherTopology},
		{"scenario", func(n *verdict.Noise) { n.Hash = "sha256:bbbb" }, verdict.NoiseOtherScenario},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := calibration(0.03, 9)
			tt.change(n)
			v, err := verdict.Compare(base, head, verdict.CompareOptions{Noise: n})
			if err != nil {
				t.Fatal(err)
			}
			c := comparison(t, v, "p95")
			if c.Value != verdict.Inconclusive || c.Interval != verdict.IntervalNoise {
				t.Errorf("%s (%q): want the default bound's inconclusive", c.Value, c.Interval)
			}
			if v.Noise == nil || v.Noise.Rejected != tt.want || reflect.DeepEqual(v.Noise.Here, v.Noise.There) {
				t.Errorf("noise use %+v, want rejected for %s", v.Noise, tt.want)
			}
		})
	}
	// A calibration that states SCHED_OTHER is one of an older loadgate's
	// results, which state no scheduling: the generator ran SCHED_OTHER.
	n := calibration(0.03, 9)
	n.Topology.LoadScheduling = "SCHED_OTHER"
	if why := n.Match(head[0]); why != "" {
		t.Errorf("SCHED_OTHER stated against none stated: %q", why)
	}
	// The kernel or Go version is not the machine.
	n = calibration(0.03, 9)
	n.Machine.Kernel, n.Machine.Go = "6.19", "go1.27"
	if why := n.Match(head[0]); why != "" {
		t.Errorf("kernel update: %q", why)
	}
}

// With rounds, a calibration with more degrees of freedom than the rounds
// narrows the interval of a quiet gate (the t quantile of 2 rounds is
// 12.7) but never below the rounds' own spread.
func TestCalibrationFewRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var base, head []*result.Result
	for _, j := range []float64{0.04, -0.04} {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 3000, 20000, 0.5, 1)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 3000, 20000, 0.5, 1.3*(1+j))}}, nil))
	}
	for _, r := range append(base, head...) {
		r.Machine, r.Topology = calMachine, calTopology
	}
	v, _ := verdict.Compare(base, head, verdict.CompareOptions{})
	if c := comparison(t, v, "p95"); c.Value != verdict.Inconclusive || c.Interval != verdict.IntervalRounds {
		t.Errorf("2 rounds alone: %s (%q) %v…%v %v", c.Value, c.Interval, c.CILow, c.CIHigh, c.RoundRatios)
	}
	v, _ = verdict.Compare(base, head, verdict.CompareOptions{Noise: calibration(0.04, 19)})
	if c := comparison(t, v, "p95"); c.Value != verdict.Regression || c.Interval != verdict.IntervalCalibration {
		t.Errorf("2 rounds with a calibration: %s (%q) CI %v…%v", c.Value, c.Interval, c.CILow, c.CIHigh)
	}
}

func TestDecodeNoise(t *testing.T) {
	n := calibration(0.05, 9)
	var b bytes.Buffer
	if err := n.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, err := verdict.DecodeNoise(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, n) {
		t.Errorf("round trip:\n%+v\n%+v", got, n)
	}
	good := func() string {
		var b bytes.Buffer
		n.Encode(&b)
		return b.String()
	}()
	for _, tt := range []struct{ name, in, want string }{
		{"schema", strings.Replace(good, verdict.NoiseSchema, "loadgate/noise/v0", 1), "schema"},
		{"unknown field", strings.Replace(good, `"pairs"`, `"extra": 1, "pairs"`, 1), "unknown field"},
		{"negative sd", strings.Replace(good, `"sd": 0.05`, `"sd": -1`, 1), "sd"},
		{"df beyond pairs", strings.Replace(good, `"df": 9`, `"df": 10`, 1), "df"},
		{"metric", strings.Replace(good, `"metric": "p95"`, `"metric": "p42"`, 1), "metric"},
		{"trailing", good + "{}", "after"},
		{"no hash", strings.Replace(good, `"hash": "sha256:aaaa"`, `"hash": ""`, 1), "hash"},
	} {
		if _, err := verdict.DecodeNoise(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
}

// FuzzDecodeNoise: DecodeNoise never panics, and what it accepts encodes
// and decodes back deeply equal, with every entry within its documented
// ranges.
func FuzzDecodeNoise(f *testing.F) {
	var b bytes.Buffer
	calibration(0.05, 9).Encode(&b)
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema":"loadgate/noise/v1","hash":"h","pairs":2,"entries":[]}`))
	f.Add([]byte(`{"schema":"loadgate/noise/v1","hash":"h","pairs":3,"entries":[{"phase":"p","workload":"w","metric":"p99.9","sd":1e-300,"df":2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := verdict.DecodeNoise(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, e := range n.Entries {
			if !(e.SD >= 0 && e.SD <= 10) || e.DF < 1 || e.DF >= n.Pairs {
				t.Fatalf("accepted entry %+v of %d pairs", e, n.Pairs)
			}
		}
		var out bytes.Buffer
		if err := n.Encode(&out); err != nil {
			t.Fatal(err)
		}
		n2, err := verdict.DecodeNoise(&out)
		if err != nil {
			t.Fatalf("decode of an encoded calibration: %v\n%s", err, out.Bytes())
		}
		if !reflect.DeepEqual(n, n2) {
			t.Fatalf("round trip differs:\n%+v\n%+v", n, n2)
		}
	})
}

// Calibrate measures the spread of A/A pairs per workload and percentile,
// and a gate of more rounds detects smaller changes.
func TestCalibrate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var base, head []*result.Result
	for range 10 {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 2000, 20000, 0.5, math.Exp(0.05*rng.NormFloat64()))}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 2000, 20000, 0.5, math.Exp(0.05*rng.NormFloat64()))}}, nil))
	}
	for _, r := range append(base, head...) {
		r.Machine, r.Topology = calMachine, calTopology
	}
	n, err := verdict.Calibrate(base, head, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	e := n.Entry("sustain", "api", "p95")
	if e == nil || e.DF != 9 || e.SD < 0.03 || e.SD > 0.15 || n.Pairs != 10 || n.Match(head[0]) != "" {
		t.Fatalf("calibration %+v, p95 entry %+v (want sd ≈ 0.05·√2 plus sampling)", n, e)
	}
	if e := n.Entry("sustain", "api", "p99.9"); e != nil {
		t.Errorf("p99.9 of 2 000 samples has no bound, yet an entry %+v", e)
	}
	var b bytes.Buffer
	if err := n.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := verdict.DecodeNoise(&b); err != nil {
		t.Fatalf("Calibrate's output does not decode: %v", err)
	}
	d3, d10 := e.Detectable(3, 0.1, 0.95, 0.8), e.Detectable(10, 0.1, 0.95, 0.8)
	if !(d10 < d3 && d10 > 1.1) {
		t.Errorf("detectable 3 rounds %v, 10 rounds %v", d3, d10)
	}
	head[3].Machine.Host = "other"
	if _, err := verdict.Calibrate(base, head, time.Now()); err == nil {
		t.Error("a calibration of mixed machines")
	}
}

// A calibration of rounds that cannot be used says why as a verdict does:
// notes naming the side and round (package report words them).
func TestCalibrateUnusableRoundsAreNotes(t *testing.T) {
	base, head := sides(t, 1, []float64{0, 0, 0}, 100, 0, 0)
	head[1].Usable, head[1].Unusable = false, []string{"stack exited"}
	_, err := verdict.Calibrate(base, head, time.Now())
	ue, ok := errors.AsType[*verdict.UnusableError](err)
	if !ok {
		t.Fatalf("err %v, want an UnusableError", err)
	}
	if !hasNote(ue.Notes, verdict.Note{Code: verdict.NoteResult, Side: "head", Round: 2, Detail: "stack exited"}) {
		t.Errorf("notes %+v, want head round 2's own reason", ue.Notes)
	}
}
