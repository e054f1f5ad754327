package http_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway/gatewaytest"
	gwhttp "github.com/storeprint/storeprint/gateway/http"
	"github.com/storeprint/storeprint/internal/openapitest"
	"github.com/storeprint/storeprint/printerdrivers/printersim"
)

// TestOpenAPI_Words: the document is valid OpenAPI 3.1, and its enums, id
// rules and limits are package storeprint's.
func TestOpenAPI_Words(t *testing.T) {
	t.Parallel()
	c, err := openapitest.New("gateway", gwhttp.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if c.Doc.OpenAPI != "3.1.0" {
		t.Fatalf("got openapi %q, want 3.1.0", c.Doc.OpenAPI)
	}
	schema := func(name string) *openapi3.Schema {
		t.Helper()
		ref := c.Doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Fatalf("no schema %s", name)
		}
		return ref.Value
	}
	for _, tc := range []struct {
		schema string
		want   []string
	}{
		{"Status", strs(storeprint.Statuses)},
		{"Reason", strs(storeprint.Reasons)},
		{"Source", strs(storeprint.Sources)},
		{"ReceiptState", strs(storeprint.ReceiptStates)},
		{"PrinterState", strs(storeprint.PrinterStates)},
		{"Role", strs(storeprint.Roles)},
		{"AuditAction", strs(storeprint.GatewayActions)},
		{"Word", words()},
		{"Confirm", strs(storeprint.Confirms)},
	} {
		var got []string
		for _, v := range schema(tc.schema).Enum {
			got = append(got, v.(string))
		}
		if tc.schema == "Word" {
			slices.Sort(got)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got enum %q, want %q", tc.schema, got, tc.want)
		}
	}
	if id := schema("ID"); id.Pattern != storeprint.IDPattern || *id.MaxLength != storeprint.MaxIDLen {
		t.Errorf("ID: got pattern %q max %d, want %q max %d", id.Pattern, *id.MaxLength, storeprint.IDPattern, storeprint.MaxIDLen)
	}
	if no := schema("TaskNo"); no.Pattern != storeprint.TaskNoPattern || *no.MaxLength != storeprint.MaxTaskNoLen {
		t.Errorf("TaskNo: got pattern %q max %d", no.Pattern, *no.MaxLength)
	}
	order, item := schema("Order"), schema("Item")
	for _, tc := range []struct {
		name      string
		got, want uint64
	}{
		{"Order.items maxItems", *order.Properties["items"].Value.MaxItems, storeprint.MaxItems},
		{"Order.table maxLength", *order.Properties["table"].Value.MaxLength, storeprint.MaxTableLen},
		{"Order.note maxLength", *order.Properties["note"].Value.MaxLength, storeprint.MaxNoteLen},
		{"Item.name maxLength", *item.Properties["name"].Value.MaxLength, storeprint.MaxNameLen},
		{"Item.note maxLength", *item.Properties["note"].Value.MaxLength, storeprint.MaxNoteLen},
		{"Item.qty maximum", uint64(*item.Properties["qty"].Value.Max), storeprint.MaxQty},
		{"Operator maxLength", *schema("Operator").MaxLength, storeprint.MaxOperatorLen},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if ap := order.AdditionalProperties.Has; ap == nil || *ap {
		t.Error("Order: unknown fields must be refused (additionalProperties: false)")
	}
}

func strs[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// words lists the catalogue's words in a stable order.
func words() []string {
	var out []string
	for w := range storeprint.Catalogue {
		out = append(out, string(w))
	}
	slices.Sort(out)
	return out
}

// TestOpenAPI_Routes: every route the gateway answers is in its OpenAPI
// document with the role it needs, the document lists nothing the
// gateway does not serve, and the gateway serves the document without a
// token.
func TestOpenAPI_Routes(t *testing.T) {
	t.Parallel()
	hot := gatewaytest.StartSim(t, printersim.FaultNone)
	cfg := gatewaytest.Config(t, t.TempDir(), []gatewaytest.PrinterConf{{ID: "hot-1", Addr: hot.Addr}}, []gatewaytest.StationConf{{Name: "hot", Printer: "hot-1"}})
	m, base := runGateway(t, cfg)

	undocumented, unserved := gatewaytest.API.Missing(m.HTTP.Routes())
	for _, r := range undocumented {
		t.Errorf("the gateway answers %s, the OpenAPI document lacks it", r)
	}
	for _, op := range unserved {
		t.Errorf("the OpenAPI document lists %s, the gateway does not serve it", op)
	}
	for _, r := range m.HTTP.Routes() {
		op := gatewaytest.API.Operation(r)
		if op == nil {
			continue
		}
		want := string(m.HTTP.RouteRole(r))
		if want == "" {
			want = "none"
		}
		if got, _ := op.Extensions["x-storeprint-role"].(string); got != want {
			t.Errorf("%s: the document says role %q, the gateway needs %q", r, got, want)
		}
	}

	var doc map[string]any
	if code := gatewaytest.CallToken(t, "", "GET", base+"/openapi.json", nil, &doc); code != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("GET /openapi.json without a token: got %d %v", code, doc["openapi"])
	}
	served, _ := json.Marshal(doc)
	var embedded map[string]any
	if err := json.Unmarshal(gwhttp.OpenAPI, &embedded); err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(embedded); string(served) != string(want) {
		t.Fatal("the served document differs from the embedded one")
	}
}
