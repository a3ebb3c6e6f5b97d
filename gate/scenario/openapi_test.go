package scenario

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// render is the engine's template for request k (tests only): {n}, vars
// in turn, ${ENV} from env.
func render(s string, vars map[string][]string, k int) string {
	s = ExpandEnv(s, map[string]string{"API_KEY": "k3y"})
	for name, vals := range vars {
		s = strings.ReplaceAll(s, "{"+name+"}", vals[k%len(vals)])
	}
	return strings.ReplaceAll(s, "{n}", strconv.Itoa(k))
}

// validate checks the k-th request of h against doc, as the service's own
// request validation would (kin-openapi's openapi3filter).
func validate(t *testing.T, doc *openapi3.T, h *HTTP, k int) {
	t.Helper()
	const origin = "http://loadgate.test"
	vdoc := *doc
	vdoc.Servers = openapi3.Servers{{URL: origin + serverPath(doc)}}
	router, err := legacy.NewRouter(&vdoc)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(h.Method, origin+render(h.Path, h.Vars, k), strings.NewReader(render(h.Body, nil, k)))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range h.Headers {
		req.Header.Set(name, render(v, nil, k))
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: no route in the document: %v", req.Method, req.URL, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		t.Errorf("%s %s is not valid against the document: %v", req.Method, req.URL, err)
	}
}

func loadDoc(t *testing.T, name string) *openapi3.T {
	t.Helper()
	doc, err := LoadOpenAPI("testdata/openapi/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestResolvePetstore(t *testing.T) {
	doc := loadDoc(t, "petstore3.yaml")
	for _, tc := range []struct {
		name   string
		ref    OpenAPIRef
		want   HTTP
		status []int
	}{
		{"path param in turn", OpenAPIRef{Operation: "getPetById", Params: map[string][]string{"petId": {"{n}"}}},
			HTTP{Method: "GET", Path: "/v3/pet/{n}"}, []int{200}},
		{"optional query left out", OpenAPIRef{Operation: "findPetsByStatus"},
			HTTP{Method: "GET", Path: "/v3/pet/findByStatus"}, []int{200}},
		{"query values in turn", OpenAPIRef{Operation: "findPetsByStatus", Params: map[string][]string{"status": {"available", "sold"}}},
			HTTP{Method: "GET", Path: "/v3/pet/findByStatus?status={oa0}", Vars: map[string][]string{"oa0": {"available", "sold"}}}, []int{200}},
		{"body given", OpenAPIRef{Operation: "addPet", Body: `{"name":"load-{n}","photoUrls":[]}`},
			HTTP{Method: "POST", Path: "/v3/pet", Body: `{"name":"load-{n}","photoUrls":[]}`, Headers: map[string]string{"Content-Type": "application/json"}}, []int{200}},
		{"optional body without example", OpenAPIRef{Operation: "placeOrder"},
			HTTP{Method: "POST", Path: "/v3/store/order"}, []int{200}},
		{"header param, no 2xx documented", OpenAPIRef{Operation: "deletePet", Params: map[string][]string{"petId": {"{n}"}, "api_key": {"${API_KEY}"}}},
			HTTP{Method: "DELETE", Path: "/v3/pet/{n}", Headers: map[string]string{"api_key": "${API_KEY}"}}, []int{200}},
		{"escaped query values", OpenAPIRef{Operation: "loginUser", Params: map[string][]string{"username": {"a b&c-{n}"}}},
			HTTP{Method: "GET", Path: "/v3/user/login?username=a+b%26c-{n}"}, []int{200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, status, err := ResolveOperation(doc, &tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*h, tc.want) || !reflect.DeepEqual(status, tc.status) {
				t.Errorf("got %+v %v\nwant %+v %v", *h, status, tc.want, tc.status)
			}
			for k := range 3 {
				validate(t, doc, h, k)
			}
		})
	}
}

func TestResolveOpenAPI31(t *testing.T) {
	doc := loadDoc(t, "items31.yaml")
	h, status, err := ResolveOperation(doc, &OpenAPIRef{Operation: "putItem", Params: map[string][]string{"itemId": {"i-{n}"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := HTTP{Method: "PUT", Path: "/api/v2/items/i-{n}?page=3", Body: `{"title":"example item"}`,
		Headers: map[string]string{"X-Tenant": "blue", "Content-Type": "application/json"}}
	if !reflect.DeepEqual(*h, want) || !reflect.DeepEqual(status, []int{201}) {
		t.Errorf("got %+v %v\nwant %+v [201]", *h, status, want)
	}
	for k := range 3 {
		validate(t, doc, h, k)
	}
}

func TestResolveRefusals(t *testing.T) {
	pet, items := loadDoc(t, "petstore3.yaml"), loadDoc(t, "items31.yaml")
	for _, tc := range []struct {
		doc         *openapi3.T
		ref         OpenAPIRef
		field, want string
	}{
		{pet, OpenAPIRef{Operation: "getPetByID"}, "operation", `unknown operationId "getPetByID"; closest: getPetById, addPet, deletePet`},
		{pet, OpenAPIRef{Operation: "getPetById"}, "params.petId", `required path parameter "petId" of getPetById has no value`},
		{pet, OpenAPIRef{Operation: "getPetById", Params: map[string][]string{"id": {"1"}}}, "params.id", `getPetById has no parameter "id" (it has: petId)`},
		{pet, OpenAPIRef{Operation: "addPet"}, "body", "addPet requires a request body (application/json) and the document has no example"},
		{pet, OpenAPIRef{Operation: "findPetsByStatus", Params: map[string][]string{"status": {"a-{n}", "b"}}}, "params.status", "only in a single value"},
		{items, OpenAPIRef{Operation: "listItems"}, "params.cursor", `required query parameter "cursor" of listItems has no value`},
		{items, OpenAPIRef{Operation: "listItems", Params: map[string][]string{"cursor": {"c"}}, Body: "{}"}, "body", "listItems takes no request body"},
	} {
		_, _, err := ResolveOperation(tc.doc, &tc.ref)
		if err == nil || err.Field != tc.field || !strings.Contains(err.Msg, tc.want) {
			t.Errorf("%+v:\n got %v\nwant %s: ...%s...", tc.ref, err, tc.field, tc.want)
		} else {
			t.Logf("refused: %s: %s", err.Field, err.Msg)
		}
	}
}
