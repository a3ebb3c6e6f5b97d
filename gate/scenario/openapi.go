package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// An openapi: workload names an operationId of the top-level openapi: document;
// Parse resolves it into an HTTP template, so the hash covers it as resolved.

const MaxOpenAPIBytes = 16 << 20

func (d *decoder) openapi(f *fields, s *Scenario) {
	if !d.ok() {
		return
	}
	v := f.get("openapi")
	first := slices.IndexFunc(s.Workloads, func(w Workload) bool { return w.OpenAPI != nil })
	if first < 0 {
		return
	}
	if v == nil {
		field := index("workloads", first) + ".openapi"
		d.failf(d.lines[field], field, "an openapi workload needs the scenario's top-level openapi: document")
		return
	}
	p := d.str(v, "openapi")
	if !d.ok() {
		return
	}
	if !filepath.IsAbs(p) {
		dir, err := filepath.Abs(filepath.Dir(d.file))
		if err != nil {
			d.failf(v.Line, "openapi", "cannot resolve the scenario directory: %v", err)
			return
		}
		p = filepath.Join(dir, p)
	}
	doc, err := LoadOpenAPI(p)
	if err != nil {
		d.failf(v.Line, "openapi", "%v", err)
		return
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.OpenAPI == nil {
			continue
		}
		base := index("workloads", i) + ".openapi"
		h, status, oerr := ResolveOperation(doc, w.OpenAPI)
		if oerr != nil {
			field := join(base, oerr.Field)
			line := d.lines[field]
			if line == 0 {
				line = d.lines[base]
			}
			d.failf(line, field, "%s", oerr.Msg)
			return
		}
		h.Headers = mergeHeaders(w.OpenAPI.Headers, h.Headers)
		w.HTTP = h
		if d.lines[index("workloads", i)+".expect.status"] == 0 && d.lines[index("workloads", i)+".expect"] == 0 {
			w.Expect.Status = status
		}
	}
}

func mergeHeaders(extra, h map[string]string) map[string]string {
	if len(extra) == 0 {
		return h
	}
	out := map[string]string{}
	maps.Copy(out, extra)
	maps.Copy(out, h)
	return out
}

// LoadOpenAPI reads an OpenAPI 3.0 or 3.1 document. References to other files or
// URLs are refused: loading a document never reaches the network.
func LoadOpenAPI(path string) (*openapi3.T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the OpenAPI document: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxOpenAPIBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the OpenAPI document: %w", err)
	}
	if len(data) > MaxOpenAPIBytes {
		return nil, fmt.Errorf("the OpenAPI document %s is above %d MiB", filepath.Base(path), MaxOpenAPIBytes>>20)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI document %s: %v", filepath.Base(path), err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, fmt.Errorf("the OpenAPI document %s is version %q; 3.0 and 3.1 are supported", filepath.Base(path), doc.OpenAPI)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, fmt.Errorf("the OpenAPI document %s has no paths", filepath.Base(path))
	}
	return doc, nil
}

// OpenAPIError is an operation that does not resolve; Field is relative to the
// workload's openapi: ("operation", "params.petId", "body").
type OpenAPIError struct{ Field, Msg string }

func (e *OpenAPIError) Error() string { return e.Field + ": " + e.Msg }

type docOp struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// ResolveOperation turns ref into its HTTP template in doc, with the documented
// 2xx codes (default [200]).
func ResolveOperation(doc *openapi3.T, ref *OpenAPIRef) (*HTTP, []int, *OpenAPIError) {
	o, oerr := findOperation(doc, ref)
	if oerr != nil {
		return nil, nil, oerr
	}
	params := operationParams(o)
	if oerr := checkParamNames(ref, params); oerr != nil {
		return nil, nil, oerr
	}
	b := &binder{h: &HTTP{Method: o.method}, path: o.path, vars: map[string][]string{}}
	for _, p := range params {
		if oerr := b.bind(p, o, ref); oerr != nil {
			return nil, nil, oerr
		}
	}
	if strings.ContainsAny(b.path, "{}") {
		for _, name := range templateVars(b.path) {
			if _, ok := b.vars[name]; !ok && name != "n" {
				return nil, nil, &OpenAPIError{"operation", fmt.Sprintf("the path %s has {%s}, which no parameter of %s defines", o.path, name, ref.Operation)}
			}
		}
	}
	h := b.h
	h.Path = serverPath(doc) + b.path
	if len(b.query) > 0 {
		h.Path += "?" + strings.Join(b.query, "&")
	}
	if len(b.vars) > 0 {
		h.Vars = b.vars
	}
	if !strings.HasPrefix(h.Path, "/") || strings.ContainsFunc(h.Path, isSpaceOrControl) {
		return nil, nil, &OpenAPIError{"operation", fmt.Sprintf("the resolved path %q is not a request path", clip(h.Path))}
	}
	if err := requestBody(o.op, ref, h); err != nil {
		return nil, nil, err
	}
	return h, documentedStatus(o.op), nil
}

func findOperation(doc *openapi3.T, ref *OpenAPIRef) (docOp, *OpenAPIError) {
	ops := map[string]docOp{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op != nil && op.OperationID != "" {
				ops[op.OperationID] = docOp{strings.ToUpper(method), path, item, op}
			}
		}
	}
	o, ok := ops[ref.Operation]
	if !ok {
		return o, &OpenAPIError{"operation", fmt.Sprintf("unknown operationId %q%s", clip(ref.Operation), closest(ref.Operation, ops))}
	}
	if !slices.Contains(methods, o.method) {
		return o, &OpenAPIError{"operation", fmt.Sprintf("%s is a %s operation; supported methods: %s", ref.Operation, o.method, strings.Join(methods, ", "))}
	}
	return o, nil
}

// operationParams is the path item's parameters, overridden by the operation's.
func operationParams(o docOp) []*openapi3.Parameter {
	var params []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{o.item.Parameters, o.op.Parameters} {
		for _, pr := range list {
			if pr == nil || pr.Value == nil {
				continue
			}
			p := pr.Value
			if i := slices.IndexFunc(params, func(q *openapi3.Parameter) bool { return q.Name == p.Name && q.In == p.In }); i >= 0 {
				params[i] = p
			} else {
				params = append(params, p)
			}
		}
	}
	return params
}

func checkParamNames(ref *OpenAPIRef, params []*openapi3.Parameter) *OpenAPIError {
	for name := range ref.Params {
		if !slices.ContainsFunc(params, func(p *openapi3.Parameter) bool { return p.Name == name }) {
			var names []string
			for _, p := range params {
				names = append(names, p.Name)
			}
			has := "it has none"
			if len(names) > 0 {
				has = "it has: " + strings.Join(names, ", ")
			}
			return &OpenAPIError{"params." + name, fmt.Sprintf("%s has no parameter %q (%s)", ref.Operation, clip(name), has)}
		}
	}
	return nil
}

type binder struct {
	h     *HTTP
	path  string
	query []string
	vars  map[string][]string
}

// bind puts p's value, else the document's example for a required one, in place.
func (b *binder) bind(p *openapi3.Parameter, o docOp, ref *OpenAPIRef) *OpenAPIError {
	vals, given := ref.Params[p.Name]
	field := "params." + p.Name
	if !given {
		if !p.Required {
			return nil
		}
		v, ok := paramExample(p)
		if !ok {
			return &OpenAPIError{field, fmt.Sprintf("required %s parameter %q of %s has no value: give one in params (the document has no example, default or enum for it)", p.In, p.Name, ref.Operation)}
		}
		vals = []string{v}
	}
	var esc func(string) string
	switch p.In {
	case openapi3.ParameterInPath:
		esc = url.PathEscape
	case openapi3.ParameterInQuery:
		esc = url.QueryEscape
	case openapi3.ParameterInHeader:
		return b.header(p, vals, field)
	default:
		return &OpenAPIError{field, fmt.Sprintf("%s parameters are not supported (path, query and header are)", p.In)}
	}
	value := escapeTemplate(vals[0], esc)
	if len(vals) > 1 {
		name := "oa" + strconv.Itoa(len(b.vars))
		for _, v := range vals {
			if len(templateVars(v)) > 0 || len(envRefs(v)) > 0 {
				return &OpenAPIError{field, "{n} and ${ENV} may appear only in a single value, not in a list of values taken in turn"}
			}
			b.vars[name] = append(b.vars[name], esc(v))
		}
		value = "{" + name + "}"
	}
	if p.In == openapi3.ParameterInQuery {
		b.query = append(b.query, url.QueryEscape(p.Name)+"="+value)
		return nil
	}
	ph := "{" + p.Name + "}"
	if !strings.Contains(b.path, ph) {
		return &OpenAPIError{field, fmt.Sprintf("path parameter %q is not in the path %s", p.Name, o.path)}
	}
	b.path = strings.ReplaceAll(b.path, ph, value)
	return nil
}

func (b *binder) header(p *openapi3.Parameter, vals []string, field string) *OpenAPIError {
	if len(vals) > 1 {
		return &OpenAPIError{field, "a header parameter takes one value"}
	}
	if strings.ContainsAny(vals[0], "\r\n\x00") {
		return &OpenAPIError{field, "must not contain CR, LF or NUL"}
	}
	if b.h.Headers == nil {
		b.h.Headers = map[string]string{}
	}
	b.h.Headers[p.Name] = vals[0]
	return nil
}

// requestBody sets the body and its Content-Type, else the document's example.
func requestBody(op *openapi3.Operation, ref *OpenAPIRef, h *HTTP) *OpenAPIError {
	if op.RequestBody == nil || op.RequestBody.Value == nil || len(op.RequestBody.Value.Content) == 0 {
		if ref.Body != "" {
			return &OpenAPIError{"body", fmt.Sprintf("%s takes no request body", ref.Operation)}
		}
		return nil
	}
	rb := op.RequestBody.Value
	var types []string
	for t := range rb.Content {
		types = append(types, t)
	}
	sort.Strings(types)
	mt := types[0]
	for _, t := range types {
		if t == "application/json" || strings.HasSuffix(t, "+json") {
			mt = t
			break
		}
	}
	body := ref.Body
	if body == "" {
		if ex, ok := mediaExample(rb.Content[mt]); ok {
			if s, isStr := ex.(string); isStr && !strings.Contains(mt, "json") {
				body = s
			} else if b, err := json.Marshal(ex); err == nil {
				body = string(b)
			}
		}
	}
	if body == "" {
		if rb.Required {
			return &OpenAPIError{"body", fmt.Sprintf("%s requires a request body (%s) and the document has no example: give body", ref.Operation, mt)}
		}
		return nil
	}
	h.Body = body
	if h.Headers == nil {
		h.Headers = map[string]string{}
	}
	h.Headers["Content-Type"] = mt
	return nil
}

func mediaExample(m *openapi3.MediaType) (any, bool) {
	if m == nil {
		return nil, false
	}
	if m.Example != nil {
		return m.Example, true
	}
	if ex, ok := firstExample(m.Examples); ok {
		return ex, true
	}
	if m.Schema != nil && m.Schema.Value != nil && m.Schema.Value.Example != nil {
		return m.Schema.Value.Example, true
	}
	return nil, false
}

func firstExample(exs openapi3.Examples) (any, bool) {
	keys := make([]string, 0, len(exs))
	for k := range exs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if e := exs[k]; e != nil && e.Value != nil && e.Value.Value != nil {
			return e.Value.Value, true
		}
	}
	return nil, false
}

func paramExample(p *openapi3.Parameter) (string, bool) {
	if p.Example != nil {
		return scalarString(p.Example)
	}
	if ex, ok := firstExample(p.Examples); ok {
		return scalarString(ex)
	}
	if p.Schema != nil && p.Schema.Value != nil {
		s := p.Schema.Value
		switch {
		case s.Example != nil:
			return scalarString(s.Example)
		case s.Default != nil:
			return scalarString(s.Default)
		case len(s.Enum) > 0:
			return scalarString(s.Enum[0])
		}
	}
	return "", false
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool, float64, float32, int, int64, json.Number:
		b, _ := json.Marshal(x)
		return string(b), true
	}
	return "", false
}

// escapeTemplate escapes a template value's literal text, keeping {n} and ${ENV}.
func escapeTemplate(v string, esc func(string) string) string {
	toks, bad := tokens(v)
	if bad != "" {
		return esc(v)
	}
	var b strings.Builder
	for _, t := range toks {
		switch t.kind {
		case '{':
			b.WriteString("{" + t.text + "}")
		case '$':
			b.WriteString("${" + t.text + "}")
		default:
			b.WriteString(esc(t.text))
		}
	}
	return b.String()
}

// serverPath is the path of the first server URL, its host never used.
func serverPath(doc *openapi3.T) string {
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return ""
	}
	s := doc.Servers[0]
	raw := s.URL
	for name, v := range s.Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.EscapedPath(), "/")
}

// documentedStatus lists the documented 2xx codes ("2XX": 200-299), else [200].
func documentedStatus(op *openapi3.Operation) []int {
	var out []int
	if op.Responses != nil {
		for code := range op.Responses.Map() {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n <= 299 {
				out = append(out, n)
			} else if strings.EqualFold(code, "2XX") {
				for n := 200; n <= 299; n++ {
					out = append(out, n)
				}
			}
		}
	}
	if len(out) == 0 {
		return []int{DefaultStatus}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func closest(name string, ops map[string]docOp) string {
	ids := make([]string, 0, len(ops))
	for id := range ops {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return "; the document has no operationId"
	}
	lname := strings.ToLower(name)
	sort.Slice(ids, func(i, j int) bool {
		ci, cj := strings.Contains(strings.ToLower(ids[i]), lname), strings.Contains(strings.ToLower(ids[j]), lname)
		if ci != cj {
			return ci // a name that holds what was written first
		}
		di, dj := editDistance(lname, strings.ToLower(ids[i])), editDistance(lname, strings.ToLower(ids[j]))
		if di != dj {
			return di < dj
		}
		return ids[i] < ids[j]
	})
	if len(ids) > 3 {
		ids = ids[:3]
	}
	return "; closest: " + strings.Join(ids, ", ")
}
