package scenario

import (
	"fmt"
	"sort"
)

// canonOp is the hashed form of a ws or grpc operation; an openapi workload is
// hashed as the HTTP it resolved to, plus the operationId.
type canonOp struct {
	Kind        string              `json:"kind"`
	Path        string              `json:"path,omitempty"`
	Headers     map[string]string   `json:"headers,omitempty"`
	Send        []string            `json:"send,omitempty"`
	Receive     int                 `json:"receive,omitempty"`
	Hold        int64               `json:"hold,omitempty"`
	Ping        int64               `json:"ping,omitempty"`
	Cancel      float64             `json:"cancel,omitempty"`
	Vars        map[string][]string `json:"vars,omitempty"`
	Method      string              `json:"method,omitempty"`
	Request     string              `json:"request,omitempty"`
	Descriptors string              `json:"descriptors,omitempty"` // "file" or "" (reflection): never the absolute path, which differs between checkouts
	Metadata    map[string]string   `json:"metadata,omitempty"`
	Codes       []string            `json:"codes,omitempty"`
	Operation   string              `json:"operation,omitempty"`
}

// canonicalOp is w's hashed operation, nil for http so that its hash is unchanged.
func canonicalOp(w Workload) *canonOp {
	switch {
	case w.WS != nil:
		x := w.WS
		return &canonOp{Kind: "ws", Path: x.Path, Headers: x.Headers, Send: x.Send, Receive: x.Receive,
			Hold: int64(x.Hold), Ping: int64(x.Ping), Cancel: x.Cancel, Vars: x.Vars}
	case w.GRPC != nil:
		g := w.GRPC
		c := &canonOp{Kind: "grpc", Method: g.Method, Request: g.Request, Metadata: g.Metadata}
		c.Codes = append([]string(nil), w.Expect.Codes...)
		sort.Strings(c.Codes)
		if g.Descriptors != "" {
			c.Descriptors = "file"
		}
		return c
	case w.OpenAPI != nil:
		return &canonOp{Kind: "openapi", Operation: w.OpenAPI.Operation}
	}
	return nil
}

// opEnvRefs lists a ws or grpc operation's ${NAME} references in a stable order.
func opEnvRefs(i int, w Workload) []envRef {
	var out []envRef
	add := func(field, text string) {
		for _, name := range envRefs(text) {
			out = append(out, envRef{name: name, field: field})
		}
	}
	sortedKeys := func(m map[string]string) []string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	switch {
	case w.WS != nil:
		base := fmt.Sprintf("workloads[%d].ws", i)
		add(base+".path", w.WS.Path)
		for _, k := range sortedKeys(w.WS.Headers) {
			add(base+".headers."+k, w.WS.Headers[k])
		}
		for j, m := range w.WS.Send {
			add(fmt.Sprintf("%s.send[%d]", base, j), m)
		}
	case w.GRPC != nil:
		base := fmt.Sprintf("workloads[%d].grpc", i)
		add(base+".request", w.GRPC.Request)
		for _, k := range sortedKeys(w.GRPC.Metadata) {
			add(base+".metadata."+k, w.GRPC.Metadata[k])
		}
	}
	return out
}
