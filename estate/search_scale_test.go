package estate_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Floors of the relevance sets' Google requests on the whole googleapis
// catalog (issue 22), a little under what TestSearchRelevanceAtScale
// measured (google.tsv: top-1 58%, top-5 83%; the second set: 48% and
// 80%; docs/scale.md), so that a regression of the ranking at that size
// fails. The second set is held to a floor here only as a guard: it is
// still never read to tune the ranking.
const (
	scaleMinTop1           = 0.56
	scaleMinTop5           = 0.81
	scaleValidationMinTop1 = 0.46
	scaleValidationMinTop5 = 0.77
)

// TestSearchRelevanceAtScale ranks the Google requests of the relevance
// sets (google.tsv, and validation.tsv less its Temporal lines) against
// the whole googleapis catalog (every .proto file of the npm package that
// defines a service: 1,872 services, over 13,000 tools, the estate's APIs
// among them in every version googleapis has), built once, and against
// the estate with the same comments, on the same requests: issue 22's
// question of whether the ranking holds at 9 times the size, with alpha
// and beta versions and many services sharing names (Instances,
// Operations, Locations). Temporal's requests are left out: Temporal's
// APIs are not in googleapis, so none of their labels has a tool there.
//
// The labels name the estate's tools, which in the big catalog may be
// named otherwise; see scaleLabels for how they are carried over. The big
// catalog is held to floors; the estate's figures are logged beside it,
// and the big catalog's again with each request scoped to its product
// (search_tools' scope), which tells the requests lost to another
// product's tool from those the ranking gets wrong anyway. Skipped with
// -short and -race (the catalog takes ~1 GB and 40 s to build on an idle
// 2-core machine), and without the npm package unless REQUIRE_GOOGLEAPIS
// is set.
//
//	cd estate && go test -run TestSearchRelevanceAtScale -v .
func TestSearchRelevanceAtScale(t *testing.T) {
	b, nfiles := googleapisBackend(t)
	start := time.Now()
	// Compiling ~6,000 files from source takes 40 s on an idle 2-core
	// machine and minutes on a loaded one: the test is about ranking, not
	// the default --discovery-timeout.
	big := startGateway(t, []gateway.Backend{b}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Catalog: gateway.CatalogOptions{DiscoveryTimeout: 15 * time.Minute}})
	t.Logf("googleapis catalog: %d files, ready in %v", nfiles, time.Since(start).Round(time.Millisecond))
	estateGateway := commentedEstateGateway(t)

	var validation []relevanceCase
	for _, c := range loadRelevance(t, "validation.tsv") {
		if !strings.HasPrefix(c.api, "temporal") {
			validation = append(validation, c)
		}
	}
	for _, run := range []struct {
		name       string
		cases      []relevanceCase
		top1, top5 float64
	}{
		{"google", loadRelevance(t, "google.tsv"), scaleMinTop1, scaleMinTop5},
		{"second set, google", validation, scaleValidationMinTop1, scaleValidationMinTop5},
	} {
		t.Run(run.name, func(t *testing.T) {
			estateCases, bigCases := scaleLabels(t, big, run.cases)
			e := rankRelevance(t, estateGateway, estateCases)
			r := rankRelevance(t, big, bigCases)
			t.Logf("%s, the estate (googleapis comments overlaid):\n%s", run.name, e)
			t.Logf("%s, the googleapis catalog:\n%s\nnot first:\n%s", run.name, r, strings.Join(r.misses, "\n"))
			t.Logf("%s, the googleapis catalog, each request scoped to its product:\n  all      %s", run.name, rankScoped(t, big, bigCases))
			n := float64(r.all.n)
			if top1, top5 := float64(r.all.top1)/n, float64(r.all.top5)/n; top1 < run.top1 || top5 < run.top5 {
				t.Errorf("top-1 %.3f, top-5 %.3f: under the floors %.3f and %.3f", top1, top5, run.top1, run.top5)
			}
		})
	}
}

// scaleLabels carries cases' labels over to the googleapis catalog. A
// label is an estate tool name, which is Service_Method (the service's
// simple name): the estate has no two such names alike (checked here),
// so the label names one method of estate.Services(). In the big catalog
// the same method may be named otherwise: where the simple names collide
// across its 1,872 services, the gateway's naming rule (gateway/internal/toolname)
// qualifies them with package segments from the right
// (v1_Instances_Stop, compute_v1_Instances_Stop), so the name still ends
// in _Service_Method. The method's tool is then the one tool of its own
// service, found with search_tools' scope (package.Service), whose name
// is the label or ends in "_" + label. A method the npm package's sources
// do not define (they are not the Go modules' version) has no tool there:
// its label is dropped, and a request left without a label is dropped
// from both runs, so that they rank the same requests. It returns the
// cases kept, with the estate's labels and with the big catalog's.
func scaleLabels(tb testing.TB, big *gateway.Gateway, cases []relevanceCase) (estateCases, bigCases []relevanceCase) {
	tb.Helper()
	services := map[string]string{} // an estate tool name: its service's full name
	for _, s := range estate.Services() {
		for i := range s.Methods().Len() {
			name := string(s.Name()) + "_" + string(s.Methods().Get(i).Name())
			if _, dup := services[name]; dup {
				services[name] = "" // ambiguous: no label can name it
				continue
			}
			services[name] = string(s.FullName())
		}
	}
	mapped := map[string]string{}
	for _, c := range cases {
		var want, kept []string
		for _, label := range c.want {
			name, ok := mapped[label]
			if !ok {
				svc, known := services[label]
				if !known || svc == "" {
					tb.Fatalf("%q accepts %s, which names no one method of the estate", c.query, label)
				}
				name = scopedTool(tb, big, svc, label)
				mapped[label] = name
				if name == "" {
					tb.Logf("%s (%s) has no tool in the googleapis catalog: dropped from the labels", label, svc)
				}
			}
			if name != "" {
				kept = append(kept, label)
				want = append(want, name)
			}
		}
		if len(want) == 0 {
			tb.Logf("%q: no label has a tool in the googleapis catalog; left out of both runs", c.query)
			continue
		}
		estateCases = append(estateCases, relevanceCase{api: c.api, query: c.query, want: kept})
		bigCases = append(bigCases, relevanceCase{api: c.api, query: c.query, want: want})
	}
	return estateCases, bigCases
}

// scopedTool returns the tool of service svc (a full name) in g whose
// name is label or ends in "_" + label, "" when it has none.
func scopedTool(tb testing.TB, g *gateway.Gateway, svc, label string) string {
	tb.Helper()
	for _, name := range searchWith(tb, g, map[string]any{"query": label, "scope": svc, "limit": gateway.MaxSearchLimit}) {
		if name == label || strings.HasSuffix(name, "_"+label) {
			return name
		}
	}
	return ""
}

// productScopes are the package prefixes of the products the sets' api
// column names: the scope an agent that knows the product would give
// search_tools (every version of the product's APIs, so the copies
// still compete).
var productScopes = map[string]string{
	"compute": "google.cloud.compute",
	"pubsub":  "google.pubsub",
	"spanner": "google.spanner",
	"storage": "google.storage",
	"vertex":  "google.cloud.aiplatform",
}

// rankScoped ranks cases on g with each request scoped to its product.
func rankScoped(tb testing.TB, g *gateway.Gateway, cases []relevanceCase) rankStats {
	tb.Helper()
	var s rankStats
	for _, c := range cases {
		scope, ok := productScopes[c.api]
		if !ok {
			tb.Fatalf("%q: no product scope for api %q", c.query, c.api)
		}
		got := searchWith(tb, g, map[string]any{"query": c.query, "scope": scope, "limit": 10})
		s.add(slices.IndexFunc(got, func(n string) bool { return slices.Contains(c.want, n) }))
	}
	return s
}

// searchWith asks g's search_tools with args (without schemas) and
// returns the names it answers with, best first; none for an answer that
// is an error (a scope the catalog does not have).
func searchWith(tb testing.TB, g *gateway.Gateway, args map[string]any) []string {
	tb.Helper()
	args["schemas"] = false
	raw, _ := json.Marshal(args)
	res, err := g.CallTool(context.Background(), &mcp.CallToolRequest{Name: gateway.SearchToolsName, Arguments: raw})
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError {
		return nil
	}
	var answer struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(res.Content[0].Text), &answer); err != nil {
		tb.Fatal(err)
	}
	names := make([]string, len(answer.Tools))
	for i, t := range answer.Tools {
		names[i] = t.Name
	}
	return names
}
