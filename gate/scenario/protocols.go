package scenario

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// WS is a WebSocket session template: handshake, Send in turn, await Receive
// messages, then hold the socket for Hold with a ping every Ping.
type WS struct {
	Path    string            // template like HTTP.Path; ws:// for an http target, wss:// for https
	Headers map[string]string // handshake headers; values may hold ${ENV}
	Send    []string          // templates like HTTP.Body
	Receive int               // messages awaited after the last send (>= 0)
	Hold    time.Duration     // keep the socket open this long after them (live views)
	Ping    time.Duration     // during Hold, a WebSocket ping this often (0: none)
	// Cancel is the share of sessions closed right after their first message.
	Cancel float64
	Vars   map[string][]string
}

// Cancels reports whether session k (from 0) is one Cancel closes part-way:
// floor((k+1)·Cancel) > floor(k·Cancel).
func (w *WS) Cancels(k int64) bool {
	if w.Cancel <= 0 {
		return false
	}
	p := int64(w.Cancel*1e6 + 0.5) // exact for percents with up to 4 decimals
	return (k+1)*p/1e6 > k*p/1e6
}

// GRPC is a gRPC unary call template.
type GRPC struct {
	Method string // "package.Service/Method"
	// Request is protojson, keys sorted; string values may hold {n} and ${ENV}.
	Request     string
	Descriptors string            // FileDescriptorSet path; "": ask the server by reflection
	Metadata    map[string]string // values may hold ${ENV}
}

func (g *GRPC) Service() string    { s, _, _ := strings.Cut(g.Method, "/"); return s }
func (g *GRPC) MethodName() string { _, m, _ := strings.Cut(g.Method, "/"); return m }

// OpenAPIRef is an openapi: workload as written; the workload's HTTP holds it resolved.
type OpenAPIRef struct {
	Operation string              // operationId
	Params    map[string][]string // by parameter name; values in turn; templates
	Body      string              // "" : the request body's example, if any
	Headers   map[string]string   // sent besides the header parameters (Authorization: ...)
}

// SessionThresholds limit a WebSocket session's first message or connect time.
type SessionThresholds struct {
	P50, P90, P95, P99, P999 time.Duration
}

func (t SessionThresholds) Set() bool { return t != SessionThresholds{} }

var (
	wsKeys        = []string{"path", "headers", "send", "receive", "hold", "ping", "cancel", "vars"}
	grpcKeys      = []string{"method", "request", "descriptors", "metadata"}
	oapiKeys      = []string{"operation", "params", "body", "headers"}
	opKinds       = []string{"http", "ws", "grpc", "openapi"}
	grpcCodeNames = []string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
		"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted",
		"OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}
	grpcMethodRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/[A-Za-z_][A-Za-z0-9_]*$`)
)

// MaxWSMessages bounds send and receive: a session is a conversation, not a stream.
const MaxWSMessages = 1000

func (w Workload) Kind() string {
	switch {
	case w.OpenAPI != nil:
		return "openapi"
	case w.WS != nil:
		return "ws"
	case w.GRPC != nil:
		return "grpc"
	}
	return "http"
}

// operation decodes the workload's one operation: http, ws, grpc or openapi.
func (d *decoder) operation(f *fields, w *Workload) {
	var given []string
	for _, k := range opKinds {
		if f.get(k) != nil {
			given = append(given, k)
		}
	}
	switch {
	case !d.ok():
		return
	case len(given) == 0:
		d.failf(f.line, f.sub("http"), "is required: a workload has exactly one of %s", strings.Join(opKinds, ", "))
		return
	case len(given) > 1:
		d.failf(f.keys[given[1]].Line, f.sub(given[1]), "a workload has exactly one of %s, not both %s and %s",
			strings.Join(opKinds, ", "), given[0], given[1])
		return
	}
	switch k := given[0]; k {
	case "http":
		w.HTTP = d.http(f.get(k), f.sub(k))
	case "ws":
		w.WS = d.ws(f.get(k), f.sub(k))
	case "grpc":
		w.GRPC = d.grpc(f.get(k), f.sub(k))
	case "openapi":
		w.OpenAPI = d.openapiRef(f.get(k), f.sub(k))
	}
}

func (d *decoder) ws(n *yaml.Node, path string) *WS {
	f := d.mapping(n, path, wsKeys)
	w := &WS{}
	w.Path = d.path(d.require(f, "path"), f.sub("path"))
	w.Headers = d.headers(f.get("headers"), f.sub("headers"))
	if v := f.get("send"); v != nil {
		items := d.list(v, f.sub("send"))
		d.check(len(items) <= MaxWSMessages, v, f.sub("send"), "at most %d messages", MaxWSMessages)
		for i, item := range items {
			m := d.str(item, index(f.sub("send"), i))
			d.checkEnvRefs(item, index(f.sub("send"), i), m)
			w.Send = append(w.Send, m)
		}
	}
	if v := f.get("receive"); v != nil {
		w.Receive = d.integer(v, f.sub("receive"))
		d.check(w.Receive >= 0 && w.Receive <= MaxWSMessages, v, f.sub("receive"), "must be between 0 and %d", MaxWSMessages)
	}
	if v := f.get("hold"); v != nil {
		w.Hold = d.duration(v, f.sub("hold"))
		d.check(w.Hold >= 0, v, f.sub("hold"), "must be >= 0")
	}
	if v := f.get("ping"); v != nil {
		w.Ping = d.duration(v, f.sub("ping"))
		d.check(w.Ping >= 0, v, f.sub("ping"), "must be >= 0")
		d.check(w.Ping == 0 || w.Hold > 0, v, f.sub("ping"), "pings are sent while the socket is held: set hold too")
	}
	if v := f.get("cancel"); v != nil {
		w.Cancel = d.errorRate(v, f.sub("cancel"))
		d.check(w.Cancel >= 0, v, f.sub("cancel"), `must be a percent such as "20%%" or a fraction in [0,1]`)
		d.check(w.Cancel == 0 || w.Receive > 0, v, f.sub("cancel"), "sessions are cancelled after their first message: set receive >= 1")
	}
	if d.ok() && len(w.Send) == 0 && w.Receive == 0 && w.Hold == 0 {
		d.failf(f.line, path, "a session needs something to do: send, receive or hold")
	}
	w.Vars = d.vars(f.get("vars"), f.sub("vars"))
	texts := map[string]string{"path": w.Path}
	for i, m := range w.Send {
		texts[index("send", i)] = m
	}
	d.checkVarsUsed(f, texts, w.Vars)
	return w
}

func (d *decoder) checkVarsUsed(f *fields, texts map[string]string, vars map[string][]string) {
	if !d.ok() {
		return
	}
	keys := make([]string, 0, len(texts))
	for k := range texts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	used := map[string]bool{}
	for _, key := range keys {
		for _, v := range templateVars(texts[key]) {
			used[v] = true
			if _, ok := vars[v]; !ok && v != "n" {
				d.failf(f.line, f.sub(key), "{%s} has no entry in vars", v)
				return
			}
		}
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !used[name] {
			d.failf(d.lines[join(f.sub("vars"), name)], join(f.sub("vars"), name), "not used in path or send")
			return
		}
	}
}

func (d *decoder) grpc(n *yaml.Node, path string) *GRPC {
	f := d.mapping(n, path, grpcKeys)
	g := &GRPC{}
	mn := d.require(f, "method")
	g.Method = d.str(mn, f.sub("method"))
	if mn != nil && d.ok() {
		d.check(grpcMethodRE.MatchString(g.Method), mn, f.sub("method"),
			"must be package.Service/Method, such as grpc.health.v1.Health/Check, not %q", clip(g.Method))
	}
	g.Request = "{}"
	if v := f.get("request"); v != nil {
		g.Request = d.jsonObject(v, f.sub("request"))
	}
	if v := f.get("descriptors"); v != nil {
		p := d.str(v, f.sub("descriptors"))
		d.check(p != "", v, f.sub("descriptors"), "must name a FileDescriptorSet file")
		if p != "" && !filepath.IsAbs(p) {
			if dir, err := filepath.Abs(filepath.Dir(d.file)); err == nil {
				p = filepath.Join(dir, p)
			}
		}
		g.Descriptors = p
	}
	if v := f.get("metadata"); v != nil {
		g.Metadata = d.headers(v, f.sub("metadata"))
		for k := range g.Metadata {
			if d.ok() && (strings.HasPrefix(strings.ToLower(k), "grpc-") || strings.HasPrefix(k, ":")) {
				d.failf(f.keys["metadata"].Line, join(f.sub("metadata"), k), "reserved gRPC metadata key")
			}
		}
	}
	return g
}

// jsonObject turns a YAML mapping into JSON object text, keys sorted for the hash.
func (d *decoder) jsonObject(n *yaml.Node, field string) string {
	if n = deref(n); n == nil || !d.ok() {
		return "{}"
	}
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, field, "a mapping (the request message as protojson)")
		return "{}"
	}
	var v any
	if err := n.Decode(&v); err != nil {
		d.failf(n.Line, field, "cannot read as JSON: %v", err)
		return "{}"
	}
	if bad := checkJSONStrings(v); bad != "" {
		d.failf(n.Line, field, "%s", bad)
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.failf(n.Line, field, "cannot write as JSON: %v", err)
		return "{}"
	}
	return string(b)
}

// checkJSONStrings checks a decoded YAML value's ${ENV} references and keys;
// only {n} is a template here.
func checkJSONStrings(v any) string {
	switch x := v.(type) {
	case string:
		if bad := badEnvRef(x); bad != "" {
			return fmt.Sprintf("malformed environment reference %q: write ${NAME} with letters, digits and '_'", clip(bad))
		}
		for _, name := range templateVars(x) {
			if name != "n" {
				return fmt.Sprintf("{%s}: only {n} is a template in a gRPC request", name)
			}
		}
	case map[string]any:
		for _, e := range x {
			if msg := checkJSONStrings(e); msg != "" {
				return msg
			}
		}
	case []any:
		for _, e := range x {
			if msg := checkJSONStrings(e); msg != "" {
				return msg
			}
		}
	case map[any]any:
		return "keys must be strings"
	}
	return ""
}

func (d *decoder) openapiRef(n *yaml.Node, path string) *OpenAPIRef {
	f := d.mapping(n, path, oapiKeys)
	o := &OpenAPIRef{}
	o.Operation = d.str(d.require(f, "operation"), f.sub("operation"))
	if v := f.get("params"); v != nil {
		o.Params = map[string][]string{}
		for _, p := range d.pairs(v, f.sub("params")) {
			field := join(f.sub("params"), p.key.Value)
			d.lines[field] = p.key.Line
			var vals []string
			if deref(p.val).Kind == yaml.SequenceNode {
				for i, item := range d.list(p.val, field) {
					vals = append(vals, d.str(item, index(field, i)))
				}
			} else {
				vals = []string{d.str(p.val, field)}
			}
			if d.ok() && len(vals) == 0 {
				d.failf(p.val.Line, field, "must list at least one value")
			}
			for i, s := range vals {
				d.checkEnvRefs(p.val, field, s)
				for _, name := range templateVars(s) {
					if name != "n" && d.ok() {
						d.failf(p.val.Line, index(field, i), "{%s}: only {n} is a template in a parameter value", name)
					}
				}
			}
			o.Params[p.key.Value] = vals
		}
	}
	if v := f.get("body"); v != nil {
		o.Body = d.str(v, f.sub("body"))
		d.checkEnvRefs(v, f.sub("body"), o.Body)
	}
	o.Headers = d.headers(f.get("headers"), f.sub("headers"))
	return o
}

func (d *decoder) grpcCodes(f *fields) []string {
	v := f.get("code")
	if v == nil {
		return nil
	}
	items := d.list(v, f.sub("code"))
	if d.ok() && len(items) == 0 {
		d.failf(v.Line, f.sub("code"), "must list at least one status code")
	}
	var out []string
	for i, item := range items {
		field := index(f.sub("code"), i)
		name := d.str(item, field)
		canon := canonicalCode(name)
		d.check(canon != "", item, field, "unknown gRPC status code %q%s (known: %s)", clip(name),
			suggest(name, grpcCodeNames), strings.Join(grpcCodeNames, ", "))
		d.check(!slices.Contains(out, canon), item, field, "status code %s listed twice", canon)
		out = append(out, canon)
	}
	return out
}

// canonicalCode accepts "NotFound", "NOT_FOUND" or the number; "" when unknown.
func canonicalCode(s string) string {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n < len(grpcCodeNames) {
			return grpcCodeNames[n]
		}
		return ""
	}
	flat := strings.ReplaceAll(strings.ToLower(s), "_", "")
	if flat == "cancelled" {
		flat = "canceled"
	}
	for _, c := range grpcCodeNames {
		if strings.ToLower(c) == flat {
			return c
		}
	}
	return ""
}

func GRPCCodeNames() []string { return slices.Clone(grpcCodeNames) }

// checkExpectKind: status codes are HTTP's, code is gRPC's, and a WebSocket
// session takes neither (it succeeds when its messages arrive).
func (d *decoder) checkExpectKind(f *fields, w *Workload) {
	if !d.ok() {
		return
	}
	var ef *fields
	if v := f.get("expect"); v != nil {
		ef = &fields{path: f.sub("expect")}
		for _, p := range d.pairs(v, f.sub("expect")) {
			if ef.vals == nil {
				ef.vals, ef.keys = map[string]*yaml.Node{}, map[string]*yaml.Node{}
			}
			ef.keys[p.key.Value], ef.vals[p.key.Value] = p.key, p.val
		}
	}
	has := func(k string) *yaml.Node {
		if ef == nil {
			return nil
		}
		return ef.keys[k]
	}
	switch w.Kind() {
	case "grpc":
		if k := has("status"); k != nil {
			d.failf(k.Line, ef.sub("status"), "a gRPC workload expects status codes by name: use expect.code, such as [OK]")
		}
		if len(w.Expect.Codes) == 0 {
			w.Expect.Codes = []string{"OK"}
		}
	case "ws":
		for _, key := range []string{"status", "code"} {
			if k := has(key); k != nil {
				d.failf(k.Line, ef.sub(key), "a WebSocket session succeeds when its handshake is done and its messages arrive: expect does not apply")
			}
		}
	default:
		if k := has("code"); k != nil {
			d.failf(k.Line, ef.sub("code"), "expect.code is for gRPC workloads; an HTTP workload uses expect.status")
		}
	}
	if w.Kind() != "ws" && (w.Thresholds.FirstMessage.Set() || w.Thresholds.Connect.Set()) {
		for _, key := range sessionThresholdKeys() {
			if ln := d.lines[join(f.sub("thresholds"), key)]; ln > 0 {
				d.failf(ln, join(f.sub("thresholds"), key), "first_message and connect thresholds are for WebSocket (ws) workloads")
				return
			}
		}
	}
}

var sessionPercentiles = []string{"p50", "p90", "p95", "p99", "p999"}

func sessionThresholdKeys() []string {
	var out []string
	for _, m := range []string{"first_message_", "connect_"} {
		for _, p := range sessionPercentiles {
			out = append(out, m+p)
		}
	}
	return out
}

func (t *SessionThresholds) at(p string) *time.Duration {
	switch p {
	case "p50":
		return &t.P50
	case "p90":
		return &t.P90
	case "p95":
		return &t.P95
	case "p99":
		return &t.P99
	}
	return &t.P999
}

func (d *decoder) sessionThresholds(f *fields, t *Thresholds) {
	for _, p := range sessionPercentiles {
		if v := f.get("first_message_" + p); v != nil {
			*t.FirstMessage.at(p) = d.positiveDuration(v, f.sub("first_message_"+p))
		}
		if v := f.get("connect_" + p); v != nil {
			*t.Connect.at(p) = d.positiveDuration(v, f.sub("connect_"+p))
		}
	}
}
