package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var phaseKeys = []string{"name", "pattern", "duration", "judged", "rate", "from", "to", "rates", "hold", "peak", "every", "for", "inject", "recovery"}

// patternKeys lists each pattern's own keys; another pattern's is an error.
var patternKeys = map[string][]string{
	Constant: {"rate"},
	Ramp:     {"from", "to"},
	Step:     {"rates", "hold"},
	Burst:    {"rate", "peak", "every", "for"},
}

var patterns = []string{Constant, Ramp, Step, Burst}

func (d *decoder) phases(f *fields) []Phase {
	items := d.list(d.require(f, "phases"), "phases")
	if d.ok() && len(items) == 0 {
		d.failf(f.vals["phases"].Line, "phases", "must list at least one phase")
	}
	var out []Phase
	var explicit []*yaml.Node // judged: value node per phase (nil when unset)
	seen := map[string]bool{}
	clean := true
	for i, item := range items {
		var p Phase
		var judged *yaml.Node
		clean = d.scoped(func() {
			p, judged = d.phase(item, index("phases", i))
			if d.ok() && seen[p.Name] {
				d.failf(p.Line, index("phases", i)+".name", "duplicate phase name %q", p.Name)
			}
		}) && clean
		seen[p.Name] = true
		out = append(out, p)
		explicit = append(explicit, judged)
	}
	if d.ok() && clean {
		d.markJudged(out, explicit, f.keys["phases"].Line)
	}
	return out
}

// markJudged sets Judged on exactly one phase: judged: true, else the one named
// "sustain", else the longest constant phase; an explicit judged: false is
// never chosen.
func (d *decoder) markJudged(ps []Phase, explicit []*yaml.Node, line int) {
	chosen := -1
	for i, n := range explicit {
		if n == nil || !ps[i].Judged {
			continue
		}
		if chosen >= 0 {
			d.failf(n.Line, index("phases", i)+".judged", "only one phase may be judged; phase %s already is", ps[chosen].Name)
			return
		}
		chosen = i
	}
	if chosen < 0 {
		chosen = defaultJudged(ps, explicit)
	}
	if chosen < 0 {
		d.failf(line, "phases", "no judged phase: mark one with judged: true, name one sustain, or add a constant phase")
		return
	}
	ps[chosen].Judged = true
}

func defaultJudged(ps []Phase, explicit []*yaml.Node) int {
	for i, p := range ps {
		if p.Name == "sustain" && explicit[i] == nil {
			return i
		}
	}
	best := -1
	for i, p := range ps {
		if p.Pattern == Constant && explicit[i] == nil && (best < 0 || p.Duration > ps[best].Duration) {
			best = i
		}
	}
	return best
}

func (d *decoder) phase(n *yaml.Node, path string) (Phase, *yaml.Node) {
	f := d.mapping(n, path, phaseKeys)
	p := Phase{Line: f.line, Pattern: Constant}
	p.Name = d.name(f, "name")
	if v := f.get("pattern"); v != nil {
		p.Pattern = d.str(v, f.sub("pattern"))
		d.check(slices.Contains(patterns, p.Pattern), v, f.sub("pattern"),
			"unknown pattern %q (known: %s)", clip(p.Pattern), strings.Join(patterns, ", "))
	}
	d.checkPatternKeys(f, p.Pattern)
	switch p.Pattern {
	case Constant:
		d.constant(f, &p)
	case Ramp:
		d.ramp(f, &p)
	case Step:
		d.step(f, &p)
	case Burst:
		d.burst(f, &p)
	}
	judged := f.get("judged")
	if judged != nil {
		p.Judged = d.boolean(judged, f.sub("judged"))
	}
	d.faults(f, &p) // inject:, recovery: (faults.go)
	return p, judged
}

func (d *decoder) checkPatternKeys(f *fields, pattern string) {
	own, ok := patternKeys[pattern]
	if !ok || !d.ok() {
		return
	}
	for _, key := range f.order {
		if slices.Contains(own, key) || !isPatternKey(key) {
			continue
		}
		d.failf(f.keys[key].Line, f.sub(key), "not used by a %s phase (%s uses %s; %s belongs to pattern: %s)",
			pattern, pattern, strings.Join(own, ", "), key, patternOf(key))
		return
	}
}

func isPatternKey(key string) bool { return patternOf(key) != "" }

func patternOf(key string) string {
	for _, p := range patterns {
		if slices.Contains(patternKeys[p], key) {
			return p
		}
	}
	return ""
}

// rate decodes a required rate: > 0 when strict, else >= 0.
func (d *decoder) rate(f *fields, key string, strict bool) float64 {
	n := d.require(f, key)
	v := d.number(n, f.sub(key))
	if n != nil && d.ok() {
		if strict {
			d.check(v > 0, n, f.sub(key), "must be > 0")
		} else {
			d.check(v >= 0, n, f.sub(key), "must be >= 0")
		}
	}
	return v
}

func (d *decoder) requiredDuration(f *fields, key string) time.Duration {
	return d.positiveDuration(d.require(f, key), f.sub(key))
}

func (d *decoder) constant(f *fields, p *Phase) {
	p.Rate = d.rate(f, "rate", true)
	p.Duration = d.requiredDuration(f, "duration")
}

func (d *decoder) ramp(f *fields, p *Phase) {
	p.From = d.rate(f, "from", false)
	p.To = d.rate(f, "to", false)
	if d.ok() {
		d.check(p.From > 0 || p.To > 0, f.vals["to"], f.sub("to"), "from and to cannot both be 0")
	}
	p.Duration = d.requiredDuration(f, "duration")
}

// step: duration defaults to len(rates)*hold and, if given, must equal it.
func (d *decoder) step(f *fields, p *Phase) {
	items := d.list(d.require(f, "rates"), f.sub("rates"))
	if d.ok() && len(items) == 0 {
		d.failf(f.vals["rates"].Line, f.sub("rates"), "must list at least one rate")
	}
	for i, item := range items {
		r := d.number(item, index(f.sub("rates"), i))
		d.check(r > 0, item, index(f.sub("rates"), i), "must be > 0")
		p.Rates = append(p.Rates, r)
	}
	p.Hold = d.requiredDuration(f, "hold")
	if !d.ok() {
		return
	}
	if p.Hold > math.MaxInt64/time.Duration(len(p.Rates)) {
		d.failf(f.vals["hold"].Line, f.sub("hold"), "too long")
		return
	}
	want := time.Duration(len(p.Rates)) * p.Hold
	p.Duration = want
	if n := f.get("duration"); n != nil {
		got := d.positiveDuration(n, f.sub("duration"))
		d.check(got == want, n, f.sub("duration"), "must equal len(rates) × hold = %v, not %v (or leave it out)", want, got)
	}
}

// burst: in each period `every`, the first `for` runs at peak, the rest at rate.
func (d *decoder) burst(f *fields, p *Phase) {
	p.Rate = d.rate(f, "rate", false)
	p.Peak = d.rate(f, "peak", true)
	if d.ok() {
		d.check(p.Peak > p.Rate, f.vals["peak"], f.sub("peak"), "must be above rate (%s)", formatRate(p.Rate))
	}
	p.Every = d.requiredDuration(f, "every")
	p.For = d.requiredDuration(f, "for")
	if d.ok() {
		d.check(p.For < p.Every, f.vals["for"], f.sub("for"), "must be shorter than every (%v)", p.Every)
	}
	p.Duration = d.requiredDuration(f, "duration")
}

func formatRate(r float64) string { return fmt.Sprint(r) }
