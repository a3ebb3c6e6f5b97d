package scenario

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var (
	workloadKeys  = []string{"name", "share", "http", "ws", "grpc", "openapi", "expect", "thresholds", "count"}
	httpKeys      = []string{"method", "path", "headers", "body", "vars"}
	expectKeys    = []string{"status", "code"}
	thresholdKeys = append([]string{"p50", "p90", "p95", "p99", "p999", "error_rate"}, sessionThresholdKeys()...)
	methods       = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"}
)

func (d *decoder) workloads(f *fields) []Workload {
	items := d.list(d.require(f, "workloads"), "workloads")
	if d.ok() && len(items) == 0 {
		d.failf(f.vals["workloads"].Line, "workloads", "must list at least one workload")
	}
	var out []Workload
	seen := map[string]bool{}
	for i, item := range items {
		var w Workload
		d.scoped(func() {
			w = d.workload(item, index("workloads", i))
			if d.ok() && seen[w.Name] {
				d.failf(w.Line, index("workloads", i)+".name", "duplicate workload name %q", w.Name)
			}
		})
		seen[w.Name] = true
		out = append(out, w)
	}
	return out
}

func (d *decoder) workload(n *yaml.Node, path string) Workload {
	f := d.mapping(n, path, workloadKeys)
	w := Workload{Line: f.line, Share: DefaultShare, Expect: Expect{Status: []int{DefaultStatus}}}
	w.Name = d.name(f, "name")
	if v := f.get("share"); v != nil {
		w.Share = d.number(v, f.sub("share"))
		d.check(w.Share > 0, v, f.sub("share"), "must be > 0")
		d.check(w.Share >= MinShare && w.Share <= MaxShare, v, f.sub("share"), "must be between %g and %g, not %v", MinShare, MaxShare, w.Share)
	}
	d.operation(f, &w) // http, ws, grpc or openapi: exactly one (protocols.go)
	if v := f.get("expect"); v != nil {
		w.Expect = d.expect(v, f.sub("expect"))
	}
	w.Thresholds = Thresholds{ErrorRate: DefaultErrorRate, ErrorRateDefault: true}
	if v := f.get("thresholds"); v != nil {
		w.Thresholds = d.thresholds(v, f.sub("thresholds"))
	}
	d.checkExpectKind(f, &w) // protocols.go
	w.Count = d.count(f.get("count"), f.sub("count"))
	return w
}

func (d *decoder) http(n *yaml.Node, path string) *HTTP {
	if n == nil {
		return nil
	}
	f := d.mapping(n, path, httpKeys)
	h := &HTTP{Method: DefaultMethod}
	if v := f.get("method"); v != nil {
		h.Method = d.str(v, f.sub("method"))
		d.check(slices.Contains(methods, h.Method), v, f.sub("method"),
			"unknown method %q (known: %s)", clip(h.Method), strings.Join(methods, ", "))
	}
	h.Path = d.path(d.require(f, "path"), f.sub("path"))
	h.Headers = d.headers(f.get("headers"), f.sub("headers"))
	if v := f.get("body"); v != nil {
		h.Body = d.str(v, f.sub("body"))
		d.checkEnvRefs(v, f.sub("body"), h.Body)
	}
	h.Vars = d.vars(f.get("vars"), f.sub("vars"))
	d.checkVars(f, h)
	return h
}

func (d *decoder) path(n *yaml.Node, field string) string {
	p := d.str(n, field)
	if n == nil || !d.ok() {
		return p
	}
	d.check(strings.HasPrefix(p, "/"), n, field, "must start with \"/\", not %q", clip(p))
	d.check(!strings.ContainsFunc(p, isSpaceOrControl), n, field, "must not contain spaces or control characters")
	d.checkEnvRefs(n, field, p)
	return p
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (d *decoder) headers(n *yaml.Node, path string) map[string]string {
	if n == nil {
		return nil
	}
	out := map[string]string{}
	lower := map[string]string{}
	for _, p := range d.pairs(n, path) {
		name, field := p.key.Value, join(path, p.key.Value)
		d.check(validHeaderName(name), p.key, field, "invalid header name")
		if prev, dup := lower[strings.ToLower(name)]; dup && d.ok() {
			d.failf(p.key.Line, field, "same header as %s (header names ignore case)", prev)
		}
		lower[strings.ToLower(name)] = name
		v := d.str(p.val, field)
		d.check(!strings.ContainsAny(v, "\r\n\x00"), p.val, field, "must not contain CR, LF or NUL")
		d.checkEnvRefs(p.val, field, v)
		out[name] = v
	}
	return out
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func (d *decoder) vars(n *yaml.Node, path string) map[string][]string {
	if n == nil {
		return nil
	}
	out := map[string][]string{}
	for _, p := range d.pairs(n, path) {
		name, field := p.key.Value, join(path, p.key.Value)
		d.lines[field] = p.key.Line
		d.check(isIdent(name), p.key, field, "invalid variable name: use letters, digits and '_'")
		d.check(name != "n", p.key, field, "{n} is the built-in sequence number; pick another name")
		items := d.list(p.val, field)
		if d.ok() && len(items) == 0 {
			d.failf(p.val.Line, field, "must list at least one value")
		}
		values := []string{}
		for i, item := range items {
			values = append(values, d.str(item, index(field, i)))
		}
		out[name] = values
	}
	return out
}

// checkVars requires every {var} but {n} declared and every declared var used.
func (d *decoder) checkVars(f *fields, h *HTTP) {
	if !d.ok() {
		return
	}
	used := map[string]bool{}
	for _, key := range []string{"path", "body"} {
		text := h.Path
		if key == "body" {
			text = h.Body
		}
		for _, v := range templateVars(text) {
			used[v] = true
			if _, ok := h.Vars[v]; !ok && v != "n" {
				d.failf(f.vals[key].Line, f.sub(key), "{%s} has no entry in vars", v)
				return
			}
		}
	}
	names := make([]string, 0, len(h.Vars))
	for name := range h.Vars {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !used[name] {
			d.failf(d.lines[join(f.sub("vars"), name)], join(f.sub("vars"), name), "not used in path or body")
			return
		}
	}
}

func (d *decoder) checkEnvRefs(n *yaml.Node, field, text string) {
	if !d.ok() {
		return
	}
	if bad := badEnvRef(text); bad != "" {
		d.failf(n.Line, field, "malformed environment reference %q: write ${NAME} with letters, digits and '_'", clip(bad))
	}
}

func (d *decoder) expect(n *yaml.Node, path string) Expect {
	f := d.mapping(n, path, expectKeys)
	e := Expect{Status: []int{DefaultStatus}}
	e.Codes = d.grpcCodes(f) // protocols.go
	v := f.get("status")
	if v == nil {
		return e
	}
	items := d.list(v, f.sub("status"))
	if d.ok() && len(items) == 0 {
		d.failf(v.Line, f.sub("status"), "must list at least one status code")
	}
	e.Status = nil
	for i, item := range items {
		field := index(f.sub("status"), i)
		code := d.integer(item, field)
		d.check(code >= 100 && code <= 599, item, field, "status code %d is outside 100-599", code)
		d.check(!slices.Contains(e.Status, code), item, field, "status code %d listed twice", code)
		e.Status = append(e.Status, code)
	}
	return e
}

func (d *decoder) thresholds(n *yaml.Node, path string) Thresholds {
	f := d.mapping(n, path, thresholdKeys)
	t := Thresholds{ErrorRate: DefaultErrorRate, ErrorRateDefault: true}
	percentiles := []struct {
		key string
		dst *time.Duration
	}{{"p50", &t.P50}, {"p90", &t.P90}, {"p95", &t.P95}, {"p99", &t.P99}, {"p999", &t.P999}}
	for _, p := range percentiles {
		if v := f.get(p.key); v != nil {
			*p.dst = d.positiveDuration(v, f.sub(p.key))
		}
	}
	if v := f.get("error_rate"); v != nil {
		t.ErrorRate, t.ErrorRateDefault = d.errorRate(v, f.sub("error_rate")), false
	}
	d.sessionThresholds(f, &t)
	return t
}

// errorRate accepts a percent ("0.1%"), a fraction in [0,1], or none (-1).
func (d *decoder) errorRate(n *yaml.Node, field string) float64 {
	const want = `must be a percent such as "0.1%", a fraction in [0,1], or none`
	s := d.scalar(n, field, "a percent")
	if s == nil {
		return -1
	}
	if s.ShortTag() == "!!str" && strings.TrimSpace(s.Value) == "none" {
		return -1
	}
	if pct, ok := strings.CutSuffix(strings.TrimSpace(s.Value), "%"); ok && s.ShortTag() == "!!str" {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || !(v >= 0 && v <= 100) {
			d.failf(s.Line, field, "%s, not %q", want, clip(s.Value))
			return -1
		}
		return v / 100
	}
	var v float64
	if tag := s.ShortTag(); (tag != "!!int" && tag != "!!float") || s.Decode(&v) != nil {
		d.failf(s.Line, field, "%s, not %s", want, describe(s))
		return -1
	}
	if !(v >= 0 && v <= 1) {
		d.failf(s.Line, field, "%s, not %s", want, clip(s.Value))
		return -1
	}
	return v
}
