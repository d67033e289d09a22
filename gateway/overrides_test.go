package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

func boolp(b bool) *bool { return &b }

// zooOverrides correct the zoo as an operator would: ListAnimals renamed,
// described again and fixed to one enclosure with a default page size;
// CreateAnimal's animal_id hidden; each stream fixed to one animal.
func zooOverrides() []gateway.ToolOverride {
	return []gateway.ToolOverride{
		{Match: "zoo.v1.ZooService/ListAnimals", Name: "list_savanna_animals", Title: "Savanna animals",
			Description: "Lists the animals that live on the savanna, the big cats and the tall grazers.", ReadOnlyHint: boolp(true),
			Arguments: map[string]gateway.ArgumentOverride{"enclosure_id": {Fixed: json.RawMessage(`"savanna"`)}, "pageSize": {Default: json.RawMessage(`2`)}}},
		{Match: "zoo.v1.ZooService/CreateAnimal", DescriptionAppend: "Ask the head keeper before admitting one.",
			Arguments: map[string]gateway.ArgumentOverride{"animal_id": {Hidden: true}}},
		{Match: "zoo.v1.ZooService/WatchFeedings", Arguments: map[string]gateway.ArgumentOverride{"animal_id": {Fixed: json.RawMessage(`"ellie"`)}}},
		{Match: "zoo.v1.ZooService/RecordObservations", Arguments: map[string]gateway.ArgumentOverride{"observation.animal_id": {Fixed: json.RawMessage(`"ruby"`)}}},
	}
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// savannaOnly checks a list_savanna_animals result: two animals (the
// default page size), both of the savanna.
func savannaOnly(t *testing.T, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("list_savanna_animals failed: %s", resultText(res))
	}
	var out struct {
		Animals []struct {
			ID          string `json:"id"`
			EnclosureID string `json:"enclosureId"`
		} `json:"animals"`
		NextPageToken string `json:"nextPageToken"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.StructuredContent == nil {
		raw = []byte(res.Content[0].(*sdk.TextContent).Text) // a revision without structuredContent
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Animals) != 2 || out.NextPageToken == "" {
		t.Fatalf("want a page of 2 animals (the default page size) and a next page, got %s", raw)
	}
	for _, a := range out.Animals {
		if a.EnclosureID != "savanna" {
			t.Fatalf("the fixed enclosure was not applied: %s", raw)
		}
	}
}

// refused checks that a call was refused naming the argument and why,
// as a tool error the model reads.
func refused(t *testing.T, res *sdk.CallToolResult, arg, why string) {
	t.Helper()
	txt := resultText(res)
	if !res.IsError || !strings.Contains(txt, arg) || !strings.Contains(txt, why) {
		t.Fatalf("want the call refused at %s (%q), got isError=%v %s", arg, why, res.IsError, txt)
	}
}

const (
	fixedWhy  = "set by the gateway's configuration"
	hiddenWhy = "not an argument of this tool"
)

func TestOverridesTyped(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{Tools: zooOverrides()}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	cs := connect(t, url, "2025-11-25")
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	if _, ok := tools["ZooService_ListAnimals"]; ok {
		t.Fatal("the renamed tool is listed under its old name too")
	}
	la := tools["list_savanna_animals"]
	if la == nil {
		t.Fatalf("no list_savanna_animals in %v", testkit.ToolNames(t, ctx, cs))
	}
	if la.Title != "Savanna animals" || !strings.HasPrefix(la.Description, "Lists the animals that live on the savanna") || la.Annotations == nil || !la.Annotations.ReadOnlyHint {
		t.Fatalf("list_savanna_animals: title %q, description %q, annotations %+v", la.Title, la.Description, la.Annotations)
	}
	schema, _ := json.Marshal(la.InputSchema)
	var in struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(schema, &in); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Properties["enclosureId"]; ok {
		t.Fatalf("the fixed argument is in the schema: %s", schema)
	}
	if d := in.Properties["pageSize"]["default"]; d != float64(2) {
		t.Fatalf("pageSize's default is %v, want 2: %s", d, schema)
	}
	if _, err := compileSchema(schema); err != nil {
		t.Fatalf("the rewritten schema does not compile: %v", err)
	}
	ca := tools["ZooService_CreateAnimal"]
	cschema, _ := json.Marshal(ca.InputSchema)
	if strings.Contains(string(cschema), `"animalId"`) {
		t.Fatalf("the hidden argument is in the schema: %s", cschema)
	}
	if !strings.Contains(ca.Description, "Ask the head keeper before admitting one.") {
		t.Fatalf("CreateAnimal's description lacks the added sentence: %q", ca.Description)
	}

	savannaOnly(t, call(t, cs, "list_savanna_animals", map[string]any{}))
	refused(t, call(t, cs, "list_savanna_animals", map[string]any{"enclosureId": "coast"}), "enclosureId", fixedWhy)
	// The proto name is the same field: refused alike.
	refused(t, call(t, cs, "list_savanna_animals", map[string]any{"enclosure_id": "coast"}), "enclosureId", fixedWhy)
	refused(t, call(t, cs, "ZooService_CreateAnimal", map[string]any{"animalId": "x", "animal": map[string]any{"displayName": "X", "species": "SPECIES_LION"}}), "animalId", hiddenWhy)

	// Streams: a server stream's request and each of a client stream's.
	res := call(t, cs, "ZooService_WatchFeedings", map[string]any{"count": 3})
	if res.IsError || strings.Count(resultText(res), `"animalId":"ellie"`) != 3 {
		t.Fatalf("WatchFeedings with the animal fixed: %s", resultText(res))
	}
	refused(t, call(t, cs, "ZooService_WatchFeedings", map[string]any{"animalId": "leo"}), "animalId", fixedWhy)
	res = call(t, cs, "ZooService_RecordObservations", map[string]any{"requests": []any{
		map[string]any{"observation": map[string]any{"activityLevel": 3}}, map[string]any{"observation": map[string]any{"activityLevel": 5}}}})
	if res.IsError || !strings.Contains(resultText(res), `"countByAnimal":{"ruby":2}`) {
		t.Fatalf("RecordObservations with the animal fixed: %s", resultText(res))
	}
	refused(t, call(t, cs, "ZooService_RecordObservations", map[string]any{"requests": []any{
		map[string]any{"observation": map[string]any{"animalId": "leo"}}}}), "requests[0].observation.animalId", fixedWhy)

	// The report says where each part came from.
	rep, err := g.Report("")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep {
		if r.Name == "list_savanna_animals" {
			if r.NameSource != gateway.SourceConfig || r.TitleSource != gateway.SourceConfig || r.DescriptionSource != gateway.SourceConfig || r.Hints[0].Source != gateway.SourceConfig {
				t.Fatalf("report of the overridden tool: %+v", r)
			}
		}
	}
}

// TestOverridesEveryTransport: the corrected catalog is the one every
// transport serves: the renamed tool with its fixed argument, refused
// when a caller sends it.
func TestOverridesEveryTransport(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{Tools: zooOverrides()}})
	base := strings.TrimSuffix(url, "/mcp")
	connectWith := func(t *testing.T, ct sdk.Transport) *sdk.ClientSession {
		client := sdk.NewClient(&sdk.Implementation{Name: "overrides", Version: "1"}, nil)
		version := "2025-11-25"
		if _, sse := ct.(*sdk.SSEClientTransport); sse {
			version = "2024-11-05" // the legacy transport's revision
		}
		// The SSE stream lives as long as the context it was opened with.
		cs, err := client.Connect(t.Context(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	for _, tc := range []struct {
		name string
		cs   func(t *testing.T) *sdk.ClientSession
	}{
		{"streamable", func(t *testing.T) *sdk.ClientSession {
			return connectWith(t, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: hc})
		}},
		{"websocket", func(t *testing.T) *sdk.ClientSession {
			return connectWith(t, &testkit.WebSocketTransport{URL: wsURL(url)})
		}},
		{"sse", func(t *testing.T) *sdk.ClientSession {
			return connectWith(t, &sdk.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: hc})
		}},
		{"stdio", func(t *testing.T) *sdk.ClientSession { return stdioTransport(t, &streamGateway{gw: g, url: url}, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.cs(t)
			savannaOnly(t, call(t, cs, "list_savanna_animals", map[string]any{}))
			refused(t, call(t, cs, "list_savanna_animals", map[string]any{"enclosureId": "coast"}), "enclosureId", fixedWhy)
			refused(t, call(t, cs, "ZooService_CreateAnimal", map[string]any{"animalId": "x"}), "animalId", hiddenWhy)
		})
	}
}

// TestOverridesSearchMode: search ranks the corrected description, its
// answers carry the corrected schema, and call_tool applies the fixed
// argument and refuses it from the caller.
func TestOverridesSearchMode(t *testing.T) {
	_, _, url := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{Tools: zooOverrides()}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
	cs := connect(t, url, "2025-11-25")
	// "grazers" is only in the corrected description.
	res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": "tall grazers"})
	var ans struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	raw := []byte(resultText(res))
	if err := json.Unmarshal(raw, &ans); err != nil || len(ans.Tools) == 0 {
		t.Fatalf("search_tools: %s (%v)", raw, err)
	}
	if ans.Tools[0].Name != "list_savanna_animals" {
		t.Fatalf("search ranks %s first, want the corrected list_savanna_animals: %s", ans.Tools[0].Name, raw)
	}
	if strings.Contains(string(ans.Tools[0].InputSchema), "enclosureId") {
		t.Fatalf("the search answer's schema has the fixed argument: %s", ans.Tools[0].InputSchema)
	}
	savannaOnly(t, call(t, cs, gateway.CallToolName, map[string]any{"name": "list_savanna_animals", "arguments": map[string]any{}}))
	refused(t, call(t, cs, gateway.CallToolName, map[string]any{"name": "list_savanna_animals", "arguments": map[string]any{"enclosureId": "coast"}}), "enclosureId", fixedWhy)
	refused(t, call(t, cs, gateway.CallToolName, map[string]any{"name": "ZooService_CreateAnimal", "arguments": map[string]any{"animalId": "x"}}), "animalId", hiddenWhy)
}

// TestOverridesTasks: a task-augmented call runs with the fixed argument,
// and one that sends it is refused.
func TestOverridesTasks(t *testing.T) {
	_, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "lrotest.v1.Jobs/Run", Arguments: map[string]gateway.ArgumentOverride{"label": {Fixed: json.RawMessage(`"fixed-label"`)}}},
		},
	}})
	c := newSessionClient(t, url)
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": 1}, "task": map[string]any{}}, "", &created)
	var done struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	c.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &done)
	if done.IsError || done.StructuredContent["label"] != "fixed-label" {
		t.Fatalf("the task's result: %+v, want the fixed label", done)
	}
	r := c.call("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "mine", "steps": 1}, "task": map[string]any{}}, "")
	if r.Error == nil && !strings.Contains(string(r.Result), fixedWhy) {
		t.Fatalf("a task call that sets the fixed label: %s", r.Result)
	}
}

// TestOverrideErrors: a rule that cannot apply stops the gateway at
// start, naming the rule and what was expected.
func TestOverrideErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule gateway.ToolOverride
		want string
	}{
		{"no method", gateway.ToolOverride{Match: "zoo.v1.ZooService/Nope", Origin: "gateway.yaml:3 tools[0]", Title: "x"}, `gateway.yaml:3 tools[0] (match "zoo.v1.ZooService/Nope"): matches no method`},
		{"unknown argument", gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"enclosure": {Hidden: true}}},
			`Options.Catalog.Tools[0]: arguments.enclosure: zoo.v1.ZooService.ListAnimals: zoo.v1.ListAnimalsRequest has no field "enclosure" (it has: species, enclosureId, pageSize, pageToken)`},
		{"wrong type", gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"page_size": {Fixed: json.RawMessage(`"ten"`)}}},
			`arguments.page_size: zoo.v1.ZooService.ListAnimals: fixed: want a whole number, got "ten"`},
		{"name for several", gateway.ToolOverride{Match: "zoo.v1.ZooService/List*", Name: "lister"}, `name "lister" is given to 2 methods`},
		{"two settings", gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"page_size": {Hidden: true, Default: json.RawMessage(`1`)}}},
			"want exactly one of hidden, fixed or default, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBackend(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Tools: []gateway.ToolOverride{tc.rule}}})
			if err == nil {
				g.Close()
				t.Fatal("New accepted the rule")
			}
			if !errors.Is(err, gateway.ErrToolOverride) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want one wrapping ErrToolOverride with %q", err, tc.want)
			}
		})
	}
}

// TestOverrideSyntaxErrors: a rule written wrong is refused by New (and
// CheckToolOverrides) with an *OptionError on the field at fault, whose
// Err names the value and what was expected; a rule with an Origin, the
// caller's own words for where it was written, is named by it instead.
func TestOverrideSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule         gateway.ToolOverride
		option, want string
	}{
		{gateway.ToolOverride{Match: "zoo.v1.[/*"}, "Options.Catalog.Tools[0].Match", `"zoo.v1.[/*": syntax error in pattern (want a glob`},
		{gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Name: "list animals"}, "Options.Catalog.Tools[0].Name", `"list animals": want a portable tool name`},
		{gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"a..b": {Hidden: true}}},
			"Options.Catalog.Tools[0].Arguments", `"a..b": want a field name, or names joined by dots`},
		{gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"page_size": {}}},
			`Options.Catalog.Tools[0].Arguments["page_size"]`, "want exactly one of hidden, fixed or default, got 0"},
		{gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"page_size": {Default: json.RawMessage(`{`)}}},
			`Options.Catalog.Tools[0].Arguments["page_size"].Default`, "not valid JSON"},
	} {
		for _, err := range []error{
			gateway.CheckToolOverrides([]gateway.ToolOverride{tc.rule}),
			func() error {
				_, err := gateway.New(context.Background(), nil, &gateway.Options{Catalog: gateway.CatalogOptions{Tools: []gateway.ToolOverride{tc.rule}}})
				return err
			}(),
		} {
			var oe *gateway.OptionError
			if !errors.Is(err, gateway.ErrToolOverride) || !errors.As(err, &oe) || oe.Option != tc.option || !strings.HasPrefix(oe.Err.Error(), tc.want) {
				t.Errorf("%+v: %v, want an *OptionError on %s saying %s", tc.rule, err, tc.option, tc.want)
			}
		}
	}
	named := gateway.ToolOverride{Match: "zoo.v1.ZooService/ListAnimals", Name: "list animals", Origin: "gateway.yaml:3: tools[0]"}
	err := gateway.CheckToolOverrides([]gateway.ToolOverride{named})
	if oe := (*gateway.OptionError)(nil); err == nil || errors.As(err, &oe) || !strings.Contains(err.Error(), `gateway.yaml:3: tools[0]: name: "list animals": want a portable tool name`) {
		t.Errorf("a rule with an Origin: %v, want a plain error naming it by its Origin", err)
	}
}

// TestToolsetOverrides: a toolset carries its own corrections on top of
// the gateway's, to its own copies of its tools: /mcp keeps the
// gateway's, and another toolset neither.
func TestToolsetOverrides(t *testing.T) {
	// The keepers' typed list is built from the catalog's tools whichever
	// mode the catalog is in: a search-mode catalog's schemas are built
	// without output schemas, which the typed list then needs.
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(map[gateway.ToolMode]string{gateway.ToolModeTyped: "typed", gateway.ToolModeSearch: "search"}[mode], func(t *testing.T) {
			toolsetOverrides(t, mode)
		})
	}
}

func toolsetOverrides(t *testing.T, mode gateway.ToolMode) {
	opts := &gateway.Options{
		Search: gateway.SearchOptions{
			ToolMode: mode,
		},
		Catalog: gateway.CatalogOptions{
			Tools: []gateway.ToolOverride{{Match: "zoo.v1.ZooService/ListAnimals", Arguments: map[string]gateway.ArgumentOverride{"enclosure_id": {Fixed: json.RawMessage(`"savanna"`)}}}},
		},
		FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{
				{Name: "keepers", Include: []string{"zoo.v1.ZooService/ListAnimals"}, ToolMode: gateway.ToolModeTyped, Tools: []gateway.ToolOverride{
					{Match: "zoo.v1.ZooService/ListAnimals", Name: "savanna_list", Description: "Lists the savanna's animals for the keepers' rounds.",
						Arguments: map[string]gateway.ArgumentOverride{"species": {Hidden: true}, "page_size": {Default: json.RawMessage(`2`)}}}}},
				{Name: "finder", Include: []string{"zoo.v1.ZooService/ListAnimals"}, ToolMode: gateway.ToolModeSearch, Tools: []gateway.ToolOverride{
					{Match: "zoo.v1.ZooService/ListAnimals", DescriptionAppend: "Good for finding the tall grazers."}}},
			},
		},
	}
	_, g, url := startGateway(t, opts)
	ctx := context.Background()

	whole := connect(t, url, "2025-11-25")
	rep, err := g.Report("")
	if err != nil {
		t.Fatal(err)
	}
	var la struct{ InputSchema, Description string }
	for _, r := range rep {
		if r.Name == "ZooService_ListAnimals" {
			la.Description = r.Description
		}
	}
	if mode == gateway.ToolModeTyped {
		tl := toolByName(t, g, "ZooService_ListAnimals")
		la.InputSchema = string(tl.InputSchema)
	} else {
		// An exact name is the answer's first tool, with its schema.
		res := call(t, whole, gateway.SearchToolsName, map[string]any{"query": "ZooService_ListAnimals"})
		var ans struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(resultText(res)), &ans); err != nil || len(ans.Tools) == 0 || ans.Tools[0].Name != "ZooService_ListAnimals" {
			t.Fatalf("search for ListAnimals: %s (%v)", resultText(res), err)
		}
		la.InputSchema = string(ans.Tools[0].InputSchema)
	}
	if strings.Contains(la.InputSchema, "enclosureId") || !strings.Contains(la.InputSchema, "species") {
		t.Fatalf("/mcp's ListAnimals has the gateway's rules only: %s", la.InputSchema)
	}
	wholeCall := func(args map[string]any) *sdk.CallToolResult {
		if mode == gateway.ToolModeSearch {
			return call(t, whole, gateway.CallToolName, map[string]any{"name": "ZooService_ListAnimals", "arguments": args})
		}
		return call(t, whole, "ZooService_ListAnimals", args)
	}
	refused(t, wholeCall(map[string]any{"enclosureId": "coast"}), "enclosureId", fixedWhy)
	// The description written from the method's structure lists what a
	// caller gives: not the fixed argument.
	if !strings.Contains(la.Description, "Takes: species, pageSize") || strings.Contains(la.Description, "enclosureId") {
		t.Fatalf("/mcp's ListAnimals description names the fixed argument: %q", la.Description)
	}

	keepers := connect(t, url+"/keepers", "2025-11-25")
	list, err := keepers.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "savanna_list" || !strings.HasPrefix(list.Tools[0].Description, "Lists the savanna's animals for the keepers' rounds.\n\nPaged:") {
		t.Fatalf("the keepers toolset lists %d tools, the first %+v", len(list.Tools), *list.Tools[0])
	}
	schema, _ := json.Marshal(list.Tools[0].InputSchema)
	if strings.Contains(string(schema), "enclosureId") || strings.Contains(string(schema), "species") || !strings.Contains(string(schema), `"default":2`) {
		t.Fatalf("the keepers' schema: %s", schema)
	}
	savannaOnly(t, call(t, keepers, "savanna_list", map[string]any{}))
	refused(t, call(t, keepers, "savanna_list", map[string]any{"species": []string{"SPECIES_LION"}}), "species", hiddenWhy)
	refused(t, call(t, keepers, "savanna_list", map[string]any{"enclosureId": "coast"}), "enclosureId", fixedWhy)
	// The species is hidden in the toolset only.
	if res := wholeCall(map[string]any{"species": []string{"SPECIES_LION"}}); res.IsError {
		t.Fatalf("/mcp refused an argument only a toolset hides: %s", resultText(res))
	}

	finder := connect(t, url+"/finder", "2025-11-25")
	res := call(t, finder, gateway.SearchToolsName, map[string]any{"query": "tall grazers"})
	if !strings.Contains(resultText(res), `"name":"ZooService_ListAnimals"`) || !strings.Contains(resultText(res), "Good for finding the tall grazers.") {
		t.Fatalf("the finder toolset's search: %s", resultText(res))
	}
	if strings.Contains(la.Description, "grazers") {
		t.Fatalf("a toolset's sentence reached /mcp: %q", la.Description)
	}
	rep, err = g.Report("keepers")
	if err != nil || len(rep) != 1 || rep[0].NameSource != gateway.SourceConfig || rep[0].DescriptionSource != gateway.SourceConfig {
		t.Fatalf("the keepers toolset's report: %+v (%v)", rep, err)
	}
}

// TestToolsetOverrideTasks: a task started by a toolset's renamed copy
// of a tool is the toolset's: its result is read through the toolset,
// with the toolset's fixed argument applied.
func TestToolsetOverrideTasks(t *testing.T) {
	_, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{
		Toolsets: []gateway.Toolset{{Name: "ops", Include: []string{"lrotest.v1.Jobs/Run"},
			Tools: []gateway.ToolOverride{{Match: "lrotest.v1.Jobs/Run", Name: "run_job", Arguments: map[string]gateway.ArgumentOverride{"label": {Fixed: json.RawMessage(`"ops"`)}}}}}},
	}})
	c := newSessionClient(t, url+"/ops")
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "run_job", "arguments": map[string]any{"steps": 1}, "task": map[string]any{}}, "", &created)
	var done struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	c.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &done)
	if done.IsError || done.StructuredContent["label"] != "ops" {
		t.Fatalf("the task's result: %+v, want the toolset's fixed label", done)
	}
}

// TestRenamedToolKeepsScopes: a tool an override renames is still the
// method the scope rules name by pattern, in both modes and in a toolset
// that renames it again: a call without the scope is refused before the
// backend, one with it goes through.
func TestRenamedToolKeepsScopes(t *testing.T) {
	rules := map[string][]string{"zoo.v1.ZooService/DeleteAnimal": {"zoo:delete"}}
	rename := []gateway.ToolOverride{{Match: "zoo.v1.ZooService/DeleteAnimal", Name: "remove_animal"}}
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(map[gateway.ToolMode]string{gateway.ToolModeTyped: "typed", gateway.ToolModeSearch: "search"}[mode], func(t *testing.T) {
			is := newTestIssuer(t)
			zoo := startRecordingBackend(t)
			_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zoo.addr)}, &gateway.Options{
				Auth: oauthWithRules(t, is, rules), Search: gateway.SearchOptions{
					ToolMode: mode,
				}, Catalog: gateway.CatalogOptions{
					Tools: rename,
				},
				FrontDoor: gateway.FrontDoorOptions{
					Toolsets: []gateway.Toolset{{Name: "care", Include: []string{"zoo.v1.ZooService/DeleteAnimal"}, ToolMode: mode,
						Tools: []gateway.ToolOverride{{Match: "zoo.v1.ZooService/DeleteAnimal", Name: "retire_animal"}}}},
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, ep := range []struct{ toolset, tool string }{{"", "remove_animal"}, {"care", "retire_animal"}} {
				connect := func(scopes string) *sdk.ClientSession {
					cs, err := connectAt(ctx, t, base, "streamable", is.token(t, zooAudience, scopes, nil), ep.toolset)
					if err != nil {
						t.Fatal(err)
					}
					return cs
				}
				user := connect("zoo")
				before := zoo.callsTo("/zoo.v1.ZooService/DeleteAnimal")
				if got := tryCall(ctx, t, user, mode, ep.tool, map[string]any{"id": "leo"}); got != "zoo zoo:delete" {
					t.Fatalf("%s without zoo:delete: refusal asks for %q", ep.tool, got)
				}
				if zoo.callsTo("/zoo.v1.ZooService/DeleteAnimal") != before {
					t.Fatalf("%s: the refused call reached the backend", ep.tool)
				}
				granted := connect("zoo zoo:delete")
				if got := tryCall(ctx, t, granted, mode, ep.tool, map[string]any{"id": "gerry"}); got != "" {
					t.Fatalf("%s with zoo:delete: refused, asking for %q", ep.tool, got)
				}
				if zoo.callsTo("/zoo.v1.ZooService/DeleteAnimal") != before+1 {
					t.Fatalf("%s with its scope did not reach the backend", ep.tool)
				}
			}
		})
	}
}

// TestReportSources: the catalog report names where each part of each
// tool came from, checked against a catalog where every source occurs,
// and flags the guesses: a name with no verb the gateway knows, a
// description from the name only, defaulted hints, a shortened schema.
func TestReportSources(t *testing.T) {
	b := startBackend(t)
	zoo := dialBackend(t, "zoo", b.addr)
	// The descriptor set carries the comments reflection does not.
	zoo.Files = descriptors.NewDescriptorSetSource("../descriptors/testdata/zoo.binpb")
	api := &fakeAPI{}
	api.set(t, deepFile(), apiFile("misc.v1", "Misc", method("Status"), method("Frobnicate"), methodWith("Rename", &mcpgatewayv1.Tool{Name: "rename_thing"})))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, _ := newGateway(t, []gateway.Backend{zoo, dialBackend(t, "misc", addr)}, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	}, Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "zoo.v1.ZooService/FeedAnimal", Title: "Feed an animal", DestructiveHint: boolp(false), DescriptionAppend: "At most three times a day."},
		},
	}})
	rep, err := g.Report("")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]gateway.ToolReport{}
	for _, r := range rep {
		by[r.Name] = r
	}
	get := func(name string) gateway.ToolReport {
		r, ok := by[name]
		if !ok {
			t.Fatalf("no %s in the report", name)
		}
		return r
	}
	hint := func(r gateway.ToolReport, i int) gateway.Source { return r.Hints[i].Source }
	has := func(r gateway.ToolReport, check string) bool {
		for _, c := range r.Check {
			if strings.HasPrefix(c, check) {
				return true
			}
		}
		return false
	}
	cases := []struct {
		what string
		got  gateway.Source
		want gateway.Source
	}{
		{"GetAnimal's title, from its option", get("ZooService_GetAnimal").TitleSource, gateway.SourceOption},
		{"GetAnimal's readOnlyHint, from its idempotency_level", hint(get("ZooService_GetAnimal"), 0), gateway.SourceDeclared},
		{"GetAnimal's description, from its comment", get("ZooService_GetAnimal").DescriptionSource, gateway.SourceComment},
		{"FeedAnimal's title, from the config", get("ZooService_FeedAnimal").TitleSource, gateway.SourceConfig},
		{"FeedAnimal's destructiveHint, from the config", hint(get("ZooService_FeedAnimal"), 1), gateway.SourceConfig},
		{"FeedAnimal's readOnlyHint, defaulted", hint(get("ZooService_FeedAnimal"), 0), gateway.SourceDefault},
		{"CreateAnimal's readOnlyHint, from its verb", hint(get("ZooService_CreateAnimal"), 0), gateway.SourceVerb},
		{"Misc_Status's title, from its structure", get("Misc_Status").TitleSource, gateway.SourceStructure},
		{"Misc_Frobnicate's description, from its structure", get("Misc_Frobnicate").DescriptionSource, gateway.SourceStructure},
		{"rename_thing's name, from its option", get("rename_thing").NameSource, gateway.SourceOption},
		{"Misc_Status's name, the default", get("Misc_Status").NameSource, gateway.SourceDefault},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: source %q, want %q", c.what, c.got, c.want)
		}
	}
	if r := get("ZooService_FeedAnimal"); !r.DescriptionAppended || !strings.Contains(r.Description, "At most three times a day.") {
		t.Errorf("FeedAnimal's appended sentence: %+v", r)
	}
	for _, c := range []struct {
		tool, check string
		want        bool
	}{
		{"Misc_Frobnicate", gateway.CheckNameOnly, true},
		{"Misc_Frobnicate", gateway.CheckVerbUnknown, true},
		{"Misc_Frobnicate", gateway.CheckHintDefault, true},
		{"ZooService_FeedAnimal", gateway.CheckVerbUnknown, true},
		{"ZooService_GetAnimal", gateway.CheckHintDefault, false},
		{"ZooService_GetAnimal", gateway.CheckNameOnly, false},
		{"Big_Deep", gateway.CheckSchemaShortn, true},
		{"Big_Small", gateway.CheckSchemaShortn, false},
	} {
		if got := has(get(c.tool), c.check); got != c.want {
			t.Errorf("%s flagged %q: %v, want %v (checks %q)", c.tool, c.check, got, c.want, get(c.tool).Check)
		}
	}
	// The report's size is the tools/list entry's.
	if r := get("ZooService_GetAnimal"); r.Bytes < len(r.Description) {
		t.Errorf("GetAnimal's entry is %d bytes, less than its description", r.Bytes)
	}
}

// TestOverrideGlobArguments: a rule for many methods fixes the argument
// on those that have it and leaves the others alone; an argument none of
// them has is refused.
func TestOverrideGlobArguments(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "zoo.v1.ZooService/*", Arguments: map[string]gateway.ArgumentOverride{"animal_id": {Fixed: json.RawMessage(`"ellie"`)}}},
		},
	}})
	cs := connect(t, url, "2025-11-25")
	if s := string(toolByName(t, g, "ZooService_FeedAnimal").InputSchema); strings.Contains(s, "animalId") {
		t.Fatalf("FeedAnimal's schema keeps the fixed animalId: %s", s)
	}
	if s := string(toolByName(t, g, "ZooService_GetAnimal").InputSchema); !strings.Contains(s, `"id"`) {
		t.Fatalf("GetAnimal, without animal_id, lost its own arguments: %s", s)
	}
	refused(t, call(t, cs, "ZooService_FeedAnimal", map[string]any{"animalId": "leo", "ration": "hay"}), "animalId", fixedWhy)

	b := startBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "zoo.v1.ZooService/*", Arguments: map[string]gateway.ArgumentOverride{"tenant": {Fixed: json.RawMessage(`"a"`)}}},
		},
	}})
	if !errors.Is(err, gateway.ErrToolOverride) || !strings.Contains(err.Error(), `Options.Catalog.Tools[0] (match "zoo.v1.ZooService/*"): arguments.tenant: no method it matches has that field`) {
		t.Fatalf("an argument no method has: %v", err)
	}
}

// TestOverrideRequiredAndOneof: a fixed value satisfies a field the
// backend requires, which cannot be hidden; a caller cannot undo a fixed
// member of a oneof by setting another.
func TestOverrideRequiredAndOneof(t *testing.T) {
	f := apiFile("req.v1", "Keepers", method("GetKeeper"))
	f.Dependency = append(f.Dependency, "google/api/field_behavior.proto")
	fo := &descriptorpb.FieldOptions{}
	proto.SetExtension(fo, annotations.E_FieldBehavior, []annotations.FieldBehavior{annotations.FieldBehavior_REQUIRED})
	f.MessageType[0].Field = append(f.MessageType[0].Field, &descriptorpb.FieldDescriptorProto{
		Name: proto.String("tenant"), JsonName: proto.String("tenant"), Number: proto.Int32(2),
		Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Options: fo,
	})
	api := &fakeAPI{}
	api.set(t, f)
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	b := startBackend(t)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "req", addr), dialBackend(t, "zoo", b.addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "req.v1.Keepers/GetKeeper", Arguments: map[string]gateway.ArgumentOverride{"tenant": {Fixed: json.RawMessage(`"acme"`)}}},
			{Match: "zoo.v1.ZooService/FeedAnimal", Arguments: map[string]gateway.ArgumentOverride{"ration": {Fixed: json.RawMessage(`"hay"`)}}},
		},
	}})
	cs := connect(t, base+"/mcp", "2025-11-25")
	if res := call(t, cs, "Keepers_GetKeeper", map[string]any{}); res.IsError {
		t.Fatalf("a call without the required tenant, which the gateway fixes: %s", resultText(res))
	}
	refused(t, call(t, cs, "Keepers_GetKeeper", map[string]any{"tenant": "other"}), "tenant", fixedWhy)
	refused(t, call(t, cs, "ZooService_FeedAnimal", map[string]any{"animalId": "leo", "meal": map[string]any{"note": "steak"}}), "meal", "sets ration, which is in a oneof with it")
	if res := call(t, cs, "ZooService_FeedAnimal", map[string]any{"animalId": "leo"}); res.IsError {
		t.Fatalf("FeedAnimal with the fixed ration: %s", resultText(res))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "req", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{
			{Match: "req.v1.Keepers/GetKeeper", Arguments: map[string]gateway.ArgumentOverride{"tenant": {Hidden: true}}},
		},
	}})
	if !errors.Is(err, gateway.ErrToolOverride) || !strings.Contains(err.Error(), "hidden: tenant is required by the backend") {
		t.Fatalf("hiding a required argument: %v", err)
	}
}

// TestToolsetOverrideErrors: a toolset's own rules are checked as the
// gateway's are: a name another of its tools has, and a rule that matches
// none of its tools, stop the gateway at start.
func TestToolsetOverrideErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   gateway.Toolset
		want string
	}{
		{"name taken", gateway.Toolset{Name: "care", Include: []string{"zoo.v1.ZooService/*Animal"}, Tools: []gateway.ToolOverride{
			{Match: "zoo.v1.ZooService/GetAnimal", Name: "ZooService_DeleteAnimal"}}}, `toolset care: tools of zoo.v1.ZooService/DeleteAnimal and zoo.v1.ZooService/GetAnimal are both named "ZooService_DeleteAnimal"`},
		{"outside the toolset", gateway.Toolset{Name: "care", Include: []string{"zoo.v1.ZooService/GetAnimal"}, Tools: []gateway.ToolOverride{
			{Match: "zoo.v1.ZooService/ListAnimals", Title: "x"}}}, `Options.FrontDoor.Toolsets[0].Tools[0] (match "zoo.v1.ZooService/ListAnimals"): matches no method`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBackend(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{Toolsets: []gateway.Toolset{tc.ts}}})
			if err == nil {
				g.Close()
				t.Fatal("New accepted the toolset's rule")
			}
			if !errors.Is(err, gateway.ErrToolOverride) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want one wrapping ErrToolOverride with %q", err, tc.want)
			}
		})
	}
}

// TestOverrideAliasesDocumentEveryField: ToolOverride and
// ArgumentOverride are aliases of gateway/internal/overrides' types, so
// go doc shows none of their fields under gateway; their doc comments
// list them instead, and this keeps the lists whole as fields are added.
func TestOverrideAliasesDocumentEveryField(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "overrides.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE && gd.Doc != nil {
			docs[gd.Specs[0].(*ast.TypeSpec).Name.Name] = gd.Doc.Text()
		}
	}
	for name, typ := range map[string]reflect.Type{
		"ToolOverride":     reflect.TypeFor[gateway.ToolOverride](),
		"ArgumentOverride": reflect.TypeFor[gateway.ArgumentOverride](),
	} {
		_, fields, ok := strings.Cut(docs[name], "fields:")
		if !ok {
			t.Errorf("%s: the doc comment lists no fields", name)
			continue
		}
		for i := range typ.NumField() {
			if fl := typ.Field(i); fl.IsExported() && !regexp.MustCompile(`(?m)^\s*- (\w+, )*`+fl.Name+`\b`).MatchString(fields) {
				t.Errorf("%s's doc comment does not list its field %s", name, fl.Name)
			}
		}
	}
}
