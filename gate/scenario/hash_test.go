package scenario_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

const hashBase = `name: api
warmup: 10s
ceilings: {rate: 5000, duration: 30m, in_flight: 4096}
stack: {compose: [compose.yaml], target: api:8080}
phases:
  - {name: sustain, rate: 12, duration: 180s}
workloads:
  - name: read
    share: 45
    http: {path: "/items?page={n}", headers: {Authorization: "Bearer ${API_TOKEN}"}}
    thresholds: {p95: 300ms, error_rate: 0.1%}
`

func hashOf(t *testing.T, src string, opts scenario.Options) string {
	t.Helper()
	return mustParse(t, src, opts).Hash
}

func TestHashIgnoresFormatting(t *testing.T) {
	base := hashOf(t, hashBase, scenario.Options{})
	same := map[string]string{
		"block style, reordered keys, comments, explicit defaults": `# the same load, written differently
workloads:
  - http:
      headers:
        Authorization: Bearer ${API_TOKEN}   # unresolved: no secret in the hash
      path: /items?page={n}
      method: GET
    name: read
    expect: {status: [200]}
    share: 45.0
phases:
  - duration: 3m
    rate: 12
    name: sustain
    pattern: constant
name: api
timeout: 5s
warmup: 10000ms
`,
		"threshold changed":  strings.Replace(hashBase, "p95: 300ms", "p95: 250ms", 1),
		"threshold removed":  strings.Replace(hashBase, "    thresholds: {p95: 300ms, error_rate: 0.1%}\n", "", 1),
		"ceilings changed":   strings.Replace(hashBase, "rate: 5000", "rate: 6000", 1),
		"stack changed":      strings.Replace(hashBase, "target: api:8080", "target: web:80", 1),
		"x- extension added": hashBase + "x-note: {anything: here}\n",
	}
	for name, src := range same {
		if got := hashOf(t, src, scenario.Options{}); got != base {
			t.Errorf("%s: hash changed", name)
		}
	}
	s := mustParse(t, hashBase, scenario.Options{})
	if s.ComputeHash() != s.Hash {
		t.Error("ComputeHash differs from Hash")
	}
}

func TestHashTracksTheLoad(t *testing.T) {
	base := hashOf(t, hashBase, scenario.Options{})
	changed := map[string]string{
		"rate":     strings.Replace(hashBase, "rate: 12", "rate: 13", 1),
		"duration": strings.Replace(hashBase, "180s", "181s", 1),
		"share":    strings.Replace(hashBase, "share: 45", "share: 46", 1),
		"path":     strings.Replace(hashBase, "/items?page={n}", "/items?p={n}", 1),
		"header":   strings.Replace(hashBase, "Bearer ${API_TOKEN}", "Bearer ${OTHER_TOKEN}", 1),
		"name":     strings.Replace(hashBase, "name: api", "name: api2", 1),
		"warmup":   strings.Replace(hashBase, "warmup: 10s", "warmup: 20s", 1),
		"timeout":  hashBase + "timeout: 2s\n",
		"status":   hashBase + "    expect: {status: [200, 204]}\n",
	}
	for name, src := range changed {
		if got := hashOf(t, src, scenario.Options{}); got == base {
			t.Errorf("changing %s kept the hash", name)
		}
	}
	if got := hashOf(t, hashBase, scenario.Options{Scale: 0.5}); got == base {
		t.Error("--scale 0.5 kept the hash")
	}
}
