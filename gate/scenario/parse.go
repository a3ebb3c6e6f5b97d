package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Options change how a scenario is loaded.
type Options struct {
	// Scale shortens the run (--scale, 0 < Scale <= 1): durations multiplied, rates
	// kept. 0 is no scaling unless ScaleSet, which refuses it.
	Scale    float64
	ScaleSet bool
}

// Defaults applied to keys the file leaves out.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxInFlight = 512
	// DefaultLateAfter suits a shared 2-core runner: on a quiet one 1–3% of
	// wake-ups come 1–2.5 ms late (docs/measurement.md, "late_after"), which
	// a 1 ms default counted as the generator falling behind.
	DefaultLateAfter         = 5 * time.Millisecond
	DefaultHTTPVersion       = "1.1"
	DefaultMethod            = "GET"
	DefaultStatus            = 200
	DefaultShare             = 1.0
	DefaultMaxBody     int64 = 16 << 20
	// DefaultErrorRate is the error_rate threshold when thresholds leave it out.
	DefaultErrorRate = 0.01
)

// DefaultCeilings returns the ceilings of a file without ceilings: (drain
// follows a given timeout).
func DefaultCeilings() Ceilings {
	return Ceilings{
		Rate: 10000, Duration: time.Hour, InFlight: 10000, MaxBody: 1 << 30,
		Timeout: time.Minute, Drain: time.Minute,
	}
}

// Load reads and parses the scenario file at path, refusing one above MaxFileBytes.
func Load(path string, opts Options) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileBytes {
		return nil, fileTooLarge(path, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fileTooLarge(path, -1)
	}
	return Parse(data, path, opts)
}

// Parse decodes, validates and normalizes a scenario; file names it in errors
// and anchors relative paths. Errors are *Error.
func Parse(data []byte, file string, opts Options) (*Scenario, error) {
	if len(data) > MaxFileBytes {
		return nil, fileTooLarge(file, int64(len(data)))
	}
	scale, err := checkScale(opts, file)
	if err != nil {
		return nil, err
	}
	root, err := parseYAML(data, file)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file, lines: map[string]int{}}
	s := d.scenario(root)
	if err := d.result(); err != nil {
		return nil, err
	}
	s.File, s.lines = file, d.lines
	if err := s.checkCells(); err != nil {
		return nil, err
	}
	if err := s.checkShares(); err != nil {
		return nil, err
	}
	if err := s.resolveComposePaths(); err != nil {
		return nil, err
	}
	if err := s.applyScale(scale); err != nil {
		return nil, err
	}
	if err := s.checkFaults(); err != nil { // faults.go
		return nil, err
	}
	s.Hash = s.ComputeHash()
	if err := s.CheckCeilings(); err != nil {
		return nil, err
	}
	return s, nil
}

func checkScale(opts Options, file string) (float64, error) {
	f := opts.Scale
	if f == 0 && !opts.ScaleSet {
		return 1, nil
	}
	if !(f > 0 && f <= 1) {
		return 0, &Error{File: file, Field: "--scale", Msg: fmt.Sprintf("must be > 0 and <= 1, not %v", f)}
	}
	return f, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseYAML(data []byte, file string) (root *yaml.Node, err error) {
	defer func() { // yaml.v3 is not our code; never let it panic through Parse
		if r := recover(); r != nil {
			root, err = nil, &Error{File: file, Msg: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "empty scenario file"}
		}
		return nil, yamlError(err, file)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, &Error{File: file, Line: next.Line, Msg: "more than one YAML document; a scenario is one document"}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, &Error{File: file, Msg: "empty scenario file"}
	}
	return doc.Content[0], nil
}

func yamlError(err error, file string) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: "invalid YAML: " + m[2], Err: err}
	}
	return &Error{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: "), Err: err}
}

var topKeys = []string{"name", "stack", "warmup", "timeout", "max_in_flight", "late_after", "drain", "http_version", "max_body", "ceilings", "gate", "tolerance", "tolerance_floor", "phases", "workloads", "openapi", "count"}

func (d *decoder) scenario(root *yaml.Node) *Scenario {
	if root = deref(root); root.Kind != yaml.MappingNode {
		d.failf(root.Line, "", "a scenario must be a mapping with keys such as name, phases and workloads, not %s", describe(root))
		return &Scenario{}
	}
	var f *fields
	d.scoped(func() { f = d.mapping(root, "", topKeys) })
	s := &Scenario{
		Timeout:     DefaultTimeout,
		MaxInFlight: DefaultMaxInFlight,
		LateAfter:   DefaultLateAfter,
		HTTPVersion: DefaultHTTPVersion,
		MaxBody:     DefaultMaxBody,
		Ceilings:    DefaultCeilings(),
		Scale:       1,
	}
	d.scoped(func() { s.Name = d.name(f, "name") })
	if n := f.get("stack"); n != nil {
		d.scoped(func() { s.Stack = d.stack(n, "stack") })
	}
	d.scoped(func() { d.settings(f, s) })
	d.scoped(func() { d.gateBar(f, s) })
	if n := f.get("ceilings"); n != nil {
		d.scoped(func() { d.ceilings(n, "ceilings", &s.Ceilings) })
	}
	d.scoped(func() { s.Phases = d.phases(f) })
	d.scoped(func() { s.Workloads = d.workloads(f) })
	if len(d.errs) > 0 {
		return s // what follows reads the workloads: their errors first
	}
	d.openapi(f, s) // openapi workloads resolved against the document: openapi.go
	s.Count = d.count(f.get("count"), "count")
	return s
}

func (d *decoder) settings(f *fields, s *Scenario) {
	if n := f.get("warmup"); n != nil {
		s.Warmup = d.duration(n, "warmup")
		d.check(s.Warmup >= 0, n, "warmup", "must be >= 0")
	}
	if n := f.get("timeout"); n != nil {
		s.Timeout = d.positiveDuration(n, "timeout")
	}
	s.Drain = s.Timeout
	if n := f.get("drain"); n != nil {
		s.Drain = d.duration(n, "drain")
		d.check(s.Drain >= 0, n, "drain", "must be >= 0")
	}
	if n := f.get("late_after"); n != nil {
		s.LateAfter = d.positiveDuration(n, "late_after")
	}
	if n := f.get("max_in_flight"); n != nil {
		s.MaxInFlight = d.integer(n, "max_in_flight")
		d.check(s.MaxInFlight > 0, n, "max_in_flight", "must be > 0")
	}
	if n := f.get("http_version"); n != nil {
		s.HTTPVersion = d.str(n, "http_version")
		d.check(s.HTTPVersion == "1.1" || s.HTTPVersion == "2", n, "http_version", `must be "1.1" or "2", not %q`, clip(s.HTTPVersion))
	}
	if n := f.get("max_body"); n != nil {
		s.MaxBody = d.byteSize(n, "max_body")
	}
}

// gateKeys are the keys of the `gate:` block: the gate's bar, read from base's
// file like the thresholds.
var gateKeys = []string{"tolerance", "tolerance_floor"}

// gateBar reads gate.tolerance and gate.tolerance_floor, or their deprecated
// top-level spellings (noted in OldSpellings); a key in both places is an error.
func (d *decoder) gateBar(f *fields, s *Scenario) {
	src := f
	if n := f.get("gate"); n != nil {
		src = d.mapping(n, "gate", gateKeys)
	}
	for _, k := range gateKeys {
		old, ok := f.keys[k]
		switch {
		case !ok:
		case src != f:
			if g := src.keys[k]; g != nil {
				d.failf(old.Line, k, "given twice, here and as gate.%s (line %d): keep gate.%s; the top-level key is its deprecated spelling", k, g.Line, k)
			} else {
				d.failf(old.Line, k, "a deprecated top-level key beside a gate: block: move it into the block, as gate.%s", k)
			}
			return
		default:
			s.OldSpellings = append(s.OldSpellings, &Error{File: d.file, Line: old.Line, Field: k,
				Msg: fmt.Sprintf("a top-level key is deprecated: write it as gate: {%s: …}", k)})
		}
	}
	if n := src.get("tolerance"); n != nil {
		s.Tolerance = d.fraction(n, src.sub("tolerance"))
	}
	if n := src.get("tolerance_floor"); n != nil {
		s.ToleranceFloor, s.ToleranceFloorSet = d.duration(n, src.sub("tolerance_floor")), true
		d.check(s.ToleranceFloor >= 0 && s.ToleranceFloor <= MaxToleranceFloor, n, src.sub("tolerance_floor"), "must be from 0 to %s", MaxToleranceFloor)
	}
}

// MaxToleranceFloor bounds tolerance_floor (verdict.MaxToleranceFloor).
const MaxToleranceFloor = time.Second

// fraction reads "10%" or 0.1 as 0.1, in (0, 1).
func (d *decoder) fraction(n *yaml.Node, field string) float64 {
	v := d.scalar(n, field, "a percentage such as 10% or a fraction such as 0.1")
	if v == nil {
		return 0
	}
	num, pct := strings.CutSuffix(strings.TrimSpace(v.Value), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if pct {
		f /= 100
	}
	d.check(err == nil && f > 0 && f < 1, n, field, "want a percentage such as 10%% or a fraction such as 0.1 (above 0, below 100%%), not %q", clip(v.Value))
	return f
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

const NameRule = "up to 64 letters, digits, '_', '-' or '.', starting with a letter or digit, without '..'"

// ValidName reports whether s is safe as a path element, in logs and Markdown;
// names read back from a result must be checked again.
func ValidName(s string) bool {
	return nameRE.MatchString(s) && !strings.Contains(s, "..")
}

func (d *decoder) name(f *fields, key string) string {
	n := d.require(f, key)
	v := d.str(n, f.sub(key))
	if n != nil && d.ok() {
		d.check(ValidName(v), n, f.sub(key), "invalid name %q: use %s", clip(v), NameRule)
	}
	return v
}

var stackKeys = []string{"compose", "prepare", "target", "allow"}

func (d *decoder) stack(n *yaml.Node, path string) *Stack {
	f := d.mapping(n, path, stackKeys)
	st := &Stack{}
	items := d.list(d.require(f, "compose"), f.sub("compose"))
	if d.ok() && len(items) == 0 {
		d.failf(f.vals["compose"].Line, f.sub("compose"), "must list at least one compose file")
	}
	for i, item := range items {
		p := d.str(item, index(f.sub("compose"), i))
		d.check(p != "", item, index(f.sub("compose"), i), "must not be empty")
		st.Compose = append(st.Compose, p)
	}
	if pn := f.get("prepare"); pn != nil {
		for i, item := range d.list(pn, f.sub("prepare")) {
			a := d.str(item, index(f.sub("prepare"), i))
			d.check(a != "", item, index(f.sub("prepare"), i), "must not be empty")
			st.Prepare = append(st.Prepare, a)
		}
		if d.ok() && len(st.Prepare) == 0 {
			d.failf(pn.Line, f.sub("prepare"), "must name a command, such as [./build.sh]")
		}
	}
	if an := f.get("allow"); an != nil {
		for i, item := range d.list(an, f.sub("allow")) {
			k := d.str(item, index(f.sub("allow"), i))
			d.check(slices.Contains(HostKeys, k), item, index(f.sub("allow"), i), "%q is not a compose setting loadgate refuses: name one of docs/security.md's allow-list (privileged, bind, cap_add, environment, build.context, …)", k)
			st.Allow = append(st.Allow, k)
		}
	}
	tn := d.require(f, "target")
	st.Target = d.str(tn, f.sub("target"))
	if tn != nil && d.ok() {
		if err := CheckServiceTarget(st.Target); err != nil {
			d.failf(tn.Line, f.sub("target"), "%v", err)
		}
	}
	return st
}

var ceilingKeys = []string{"rate", "duration", "in_flight", "max_body", "timeout", "drain"}

func (d *decoder) ceilings(n *yaml.Node, path string, c *Ceilings) {
	f := d.mapping(n, path, ceilingKeys)
	if v := f.get("rate"); v != nil {
		c.Rate = d.number(v, f.sub("rate"))
		d.check(c.Rate > 0, v, f.sub("rate"), "must be > 0")
	}
	if v := f.get("duration"); v != nil {
		c.Duration = d.positiveDuration(v, f.sub("duration"))
	}
	if v := f.get("in_flight"); v != nil {
		c.InFlight = d.integer(v, f.sub("in_flight"))
		d.check(c.InFlight > 0, v, f.sub("in_flight"), "must be > 0")
	}
	if v := f.get("max_body"); v != nil {
		c.MaxBody = d.byteSize(v, f.sub("max_body"))
	}
	if v := f.get("timeout"); v != nil {
		c.Timeout = d.positiveDuration(v, f.sub("timeout"))
		c.Drain = c.Timeout // ceilings.drain follows ceilings.timeout unless given
	}
	if v := f.get("drain"); v != nil {
		c.Drain = d.positiveDuration(v, f.sub("drain"))
	}
}

func (s *Scenario) resolveComposePaths() error {
	if s.Stack == nil {
		return nil
	}
	dir, err := filepath.Abs(filepath.Dir(s.File))
	if err != nil {
		return &Error{File: s.File, Field: "stack.compose", Msg: "cannot resolve the scenario directory", Err: err}
	}
	for i, p := range s.Stack.Compose {
		if !filepath.IsAbs(p) {
			s.Stack.Compose[i] = filepath.Join(dir, p)
		}
	}
	s.Stack.Dir = dir
	return nil
}
