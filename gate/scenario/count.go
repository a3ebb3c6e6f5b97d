package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Count names a Prometheus counter on a stack service whose increase over each
// phase is compared with what was sent. It is not part of the hash.
type Count struct {
	Service string   // a service of the stack (checked once the stack is up)
	Port    int      // TCP port of its metrics endpoint
	Path    string   // default DefaultCountPath
	Metric  Selector // the counter: a name and label values it must have

	Line  int    // line of the count: mapping (0 in memory)
	Field string // its field path: "count" or "workloads[2].count"
}

const DefaultCountPath = "/metrics"

const MaxSelectorLen = 512

// Selector picks the series named Name whose labels include all of Labels; the
// picked series are summed.
type Selector struct {
	Name   string
	Labels []Label
}

type Label struct{ Name, Value string }

var ErrSelector = errors.New("invalid metric selector")

var (
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	serviceRE    = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$`)
)

// ParseSelector reads a PromQL selector with equality matchers only, each label once.
func ParseSelector(s string) (Selector, error) {
	bad := func(format string, a ...any) (Selector, error) {
		return Selector{}, fmt.Errorf("%w %q: %s", ErrSelector, clip(s), fmt.Sprintf(format, a...))
	}
	if len(s) > MaxSelectorLen {
		return bad("longer than %d bytes", MaxSelectorLen)
	}
	name, rest, braces := strings.Cut(strings.TrimSpace(s), "{")
	name = strings.TrimSpace(name)
	if !metricNameRE.MatchString(name) {
		return bad("the metric name must match %s", metricNameRE)
	}
	sel := Selector{Name: name}
	if !braces {
		return sel, nil
	}
	seen := map[string]bool{}
	for {
		rest = strings.TrimLeft(rest, " ")
		if strings.HasPrefix(rest, "}") {
			break
		}
		ln, after, ok := strings.Cut(rest, "=")
		if !ok {
			return bad(`expected label="value"`)
		}
		ln = strings.TrimSpace(ln)
		if !labelNameRE.MatchString(ln) {
			return bad("label name %q must match %s", clip(ln), labelNameRE)
		}
		if seen[ln] {
			return bad("label %s given twice", ln)
		}
		seen[ln] = true
		after = strings.TrimLeft(after, " ")
		if after == "" || after[0] != '"' {
			return bad("the value of %s must be double-quoted (only = is supported)", ln)
		}
		val, n, err := unquoteLabel(after)
		if err != nil {
			return bad("label %s: %v", ln, err)
		}
		sel.Labels = append(sel.Labels, Label{Name: ln, Value: val})
		rest = strings.TrimLeft(after[n:], " ")
		if strings.HasPrefix(rest, ",") {
			rest = rest[1:]
			continue
		}
		if !strings.HasPrefix(rest, "}") {
			return bad(`expected "," or "}" after the value of %s`, ln)
		}
		break
	}
	if strings.TrimSpace(rest[1:]) != "" {
		return bad(`unexpected text after "}"`)
	}
	return sel, nil
}

// unquoteLabel reads the double-quoted value starting s and the bytes it took.
func unquoteLabel(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i == len(s) {
				return "", 0, errors.New("unterminated escape")
			}
			switch s[i] {
			case '\\', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf(`unknown escape \%c (\\, \" or \n)`, s[i])
			}
		case '\n':
			return "", 0, errors.New("a line break in a value (write \\n)")
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated value")
}

// String is the selector in ParseSelector's syntax, so that it round-trips.
func (s Selector) String() string {
	if len(s.Labels) == 0 {
		return s.Name
	}
	parts := make([]string, len(s.Labels))
	for i, l := range s.Labels {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(l.Value)
		parts[i] = l.Name + `="` + v + `"`
	}
	return s.Name + "{" + strings.Join(parts, ",") + "}"
}

var countKeys = []string{"service", "port", "path", "metric"}

func (d *decoder) count(n *yaml.Node, path string) *Count {
	if n == nil {
		return nil
	}
	f := d.mapping(n, path, countKeys)
	c := &Count{Line: f.line, Field: path, Path: DefaultCountPath}
	if v := d.require(f, "service"); v != nil {
		c.Service = d.str(v, f.sub("service"))
		d.check(serviceRE.MatchString(c.Service), v, f.sub("service"), "%q is not a compose service name", clip(c.Service))
	}
	if v := d.require(f, "port"); v != nil {
		c.Port = d.integer(v, f.sub("port"))
		d.check(c.Port >= 1 && c.Port <= 65535, v, f.sub("port"), "must be a TCP port in [1, 65535], not %d", c.Port)
	}
	if v := f.get("path"); v != nil {
		c.Path = d.str(v, f.sub("path"))
		d.check(strings.HasPrefix(c.Path, "/") && len(c.Path) <= 1024 && !strings.ContainsFunc(c.Path, isSpaceOrControl), v, f.sub("path"),
			"must start with \"/\", hold no spaces or control characters and be at most 1024 bytes, not %q", clip(c.Path))
	}
	if v := d.require(f, "metric"); v != nil {
		text := d.str(v, f.sub("metric"))
		if d.ok() {
			sel, err := ParseSelector(text)
			d.check(err == nil, v, f.sub("metric"), "%v", err)
			c.Metric = sel
		}
	}
	return c
}

// Counts lists the scenario's count, then the workloads' with their names.
func (s *Scenario) Counts() (workloads []string, counts []*Count) {
	if s.Count != nil {
		workloads, counts = append(workloads, ""), append(counts, s.Count)
	}
	for _, w := range s.Workloads {
		if w.Count != nil {
			workloads, counts = append(workloads, w.Name), append(counts, w.Count)
		}
	}
	return workloads, counts
}

// CountError is an error about c found after parsing, located like a parse error.
func (s *Scenario) CountError(c *Count, format string, a ...any) error {
	return &Error{File: s.File, Line: c.Line, Field: c.Field, Msg: fmt.Sprintf(format, a...)}
}
