package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// hashVersion starts the encoding; bump it when the encoding changes meaning.
const hashVersion = "loadgate/scenario/v1"

// ComputeHash returns "sha256:<hex>" of what decides which requests are sent and
// when, after defaults and --scale; ${ENV} references are hashed unresolved.
// Hash is not updated on change: call ComputeHash again; thresholds, ceilings,
// the stack and count are left out. Results are compared only when their
// hashes match.
func (s *Scenario) ComputeHash() string {
	data, err := json.Marshal(s.canonical())
	if err != nil { // cannot happen: plain strings, numbers and maps
		panic("scenario: canonical encoding: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The encoding is JSON of these structs: fixed field order, durations in ns.

type canonScenario struct {
	Version     string          `json:"v"`
	Name        string          `json:"name"`
	Warmup      int64           `json:"warmup"`
	Timeout     int64           `json:"timeout"`
	MaxInFlight int             `json:"max_in_flight"`
	LateAfter   int64           `json:"late_after"`
	Drain       int64           `json:"drain"`
	HTTPVersion string          `json:"http_version"`
	MaxBody     int64           `json:"max_body"`
	Phases      []canonPhase    `json:"phases"`
	Workloads   []canonWorkload `json:"workloads"`
}

type canonPhase struct {
	Name     string       `json:"name"`
	Pattern  string       `json:"pattern"`
	Duration int64        `json:"duration"`
	Judged   bool         `json:"judged"`
	Rate     float64      `json:"rate,omitempty"`
	From     float64      `json:"from,omitempty"`
	To       float64      `json:"to,omitempty"`
	Rates    []float64    `json:"rates,omitempty"`
	Hold     int64        `json:"hold,omitempty"`
	Peak     float64      `json:"peak,omitempty"`
	Every    int64        `json:"every,omitempty"`
	For      int64        `json:"for,omitempty"`
	Faults   []canonFault `json:"faults,omitempty"` // faults.go
}

type canonWorkload struct {
	Name    string              `json:"name"`
	Share   float64             `json:"share"`
	Method  string              `json:"method,omitempty"`
	Path    string              `json:"path,omitempty"`
	Headers map[string]string   `json:"headers,omitempty"`
	Body    string              `json:"body,omitempty"`
	Vars    map[string][]string `json:"vars,omitempty"`
	Status  []int               `json:"status"`
	Op      *canonOp            `json:"op,omitempty"` // ws, grpc, openapi (protocols_hash.go); nil for http
}

func (s *Scenario) canonical() canonScenario {
	c := canonScenario{
		Version: hashVersion, Name: s.Name,
		Warmup: int64(s.Warmup), Timeout: int64(s.Timeout), MaxInFlight: s.MaxInFlight,
		LateAfter: int64(s.LateAfter), Drain: int64(s.Drain), HTTPVersion: s.HTTPVersion, MaxBody: s.MaxBody,
	}
	for _, p := range s.Phases {
		c.Phases = append(c.Phases, canonPhase{
			Name: p.Name, Pattern: p.Pattern, Duration: int64(p.Duration), Judged: p.Judged,
			Rate: p.Rate, From: p.From, To: p.To, Rates: p.Rates, Hold: int64(p.Hold),
			Peak: p.Peak, Every: int64(p.Every), For: int64(p.For),
			Faults: canonicalFaults(p),
		})
	}
	for _, w := range s.Workloads {
		cw := canonWorkload{Name: w.Name, Share: w.Share, Status: slices.Sorted(slices.Values(w.Expect.Status))}
		if h := w.HTTP; h != nil {
			cw.Method, cw.Path, cw.Headers, cw.Body, cw.Vars = h.Method, h.Path, h.Headers, h.Body, h.Vars
		}
		cw.Op = canonicalOp(w)
		c.Workloads = append(c.Workloads, cw)
	}
	return c
}
