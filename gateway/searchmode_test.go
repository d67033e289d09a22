package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

var searchMode = &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}}

// found is one match of a search_tools answer.
type found struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations map[string]any  `json:"annotations"`
}

// searchTools calls search_tools and returns its matches: the answer is
// one text block of JSON, what a model reads, with no structured copy.
func searchTools(t *testing.T, cs *sdk.ClientSession, args map[string]any) []found {
	t.Helper()
	res := call(t, cs, gateway.SearchToolsName, args)
	if res.IsError {
		t.Fatalf("search_tools %v: %s", args, text(t, res))
	}
	if res.StructuredContent != nil || len(res.Content) != 1 {
		t.Errorf("search_tools %v: want one text block and no structuredContent, got %d blocks and %v", args, len(res.Content), res.StructuredContent)
	}
	var answer struct{ Tools []found }
	if err := json.Unmarshal([]byte(text(t, res)), &answer); err != nil {
		t.Fatalf("text block is not the answer's JSON: %v", err)
	}
	return answer.Tools
}

func names(fs []found) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// TestSearchModeListsTwoTools: search mode lists exactly search_tools and
// call_tool, with schemas the LLM APIs accept; the default (auto) keeps
// the small zoo typed.
func TestSearchModeListsTwoTools(t *testing.T) {
	_, _, url := startGateway(t, searchMode)
	for _, v := range versions {
		cs := connect(t, url, v)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
			for _, s := range []any{tl.InputSchema, tl.OutputSchema} {
				if s == nil {
					continue
				}
				js, _ := json.Marshal(s)
				if _, err := compileSchema(js); err != nil {
					t.Errorf("%s: schema does not compile: %v", tl.Name, err)
				}
				if problems := schema.Lint(js); len(problems) > 0 {
					t.Errorf("%s: lint: %v", tl.Name, problems)
				}
			}
		}
		if !slices.Equal(got, []string{gateway.SearchToolsName, gateway.CallToolName}) {
			t.Errorf("%s: tools %v", v, got)
		}
		if d := res.Tools[0].Description; !strings.Contains(d, "12 tools") || !strings.Contains(d, "zoo.v1: ZooService") {
			t.Errorf("search_tools should say how many tools and which APIs and services: %q", d)
		}
		if res.Tools[0].OutputSchema != nil {
			t.Errorf("search_tools answers in text alone, yet declares an output schema")
		}
		for _, tl := range res.Tools {
			if a := tl.Annotations; a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Errorf("%s: annotations %+v, want all four hints", tl.Name, a)
			}
		}
	}
	_, g, _ := startGateway(t, nil)
	if n := len(toolNames(g)); n != 12 {
		t.Errorf("auto mode with the zoo lists %d tools, want the 12 typed ones", n)
	}
	// docs/search.md gives the zoo's size in the budget's unit: about
	// 8,000 estimated tokens (tools/list bytes / 4).
	if tokens := g.Tools().ListBytes() / 4; tokens < 7600 || tokens > 8400 {
		t.Errorf("the zoo's tools/list is %d estimated tokens; docs/search.md says about 8,000", tokens)
	}
}

func TestSearchTools(t *testing.T) {
	_, typed, _ := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	_, _, url := startGateway(t, searchMode)
	cs := connect(t, url, "2025-11-25")

	for _, tc := range []struct{ query, want string }{
		{"remove an animal", "ZooService_DeleteAnimal"},
		{"feed the lion", "ZooService_FeedAnimal"},
		{"when is the next feeding", "ZooService_GetNextFeedingTime"},
		{"show me the enclosures", "ZooService_ListEnclosures"},
		{"talk to a keeper", "ZooService_ChatWithKeeper"},
		{"record observations of animals", "ZooService_RecordObservations"},
	} {
		got := searchTools(t, cs, map[string]any{"query": tc.query})
		if len(got) == 0 || got[0].Name != tc.want {
			t.Errorf("%q: %v, want %s first", tc.query, names(got), tc.want)
		}
	}

	// A match is the typed tool's definition: name, title, description,
	// input schema and annotations.
	got := searchTools(t, cs, map[string]any{"query": "ZooService_GetAnimal", "limit": 1})
	want := toolByName(t, typed, "ZooService_GetAnimal")
	if len(got) != 1 || got[0].Name != want.Name || got[0].Title != want.Title || got[0].Description != want.Description {
		t.Fatalf("exact name: %+v", got)
	}
	if a, b := compact(t, got[0].InputSchema), compact(t, want.InputSchema); a != b {
		t.Errorf("input schema differs from the typed tool's:\n%s\n%s", a, b)
	}
	if got[0].Annotations["readOnlyHint"] != true || got[0].Annotations["title"] != want.Annotations.Title {
		t.Errorf("annotations %v", got[0].Annotations)
	}

	// Limits: 5 by default, at most 10.
	if got := searchTools(t, cs, map[string]any{"query": "zoo animal"}); len(got) != gateway.DefaultSearchLimit {
		t.Errorf("default limit: %d matches", len(got))
	}
	if got := searchTools(t, cs, map[string]any{"query": "zoo", "limit": 50}); len(got) != gateway.MaxSearchLimit {
		t.Errorf("limit 50: %d matches, want %d", len(got), gateway.MaxSearchLimit)
	}
	// A query nothing matches closely gets loose matches, and a note
	// saying so (TestSearchLoose).
	if got, note, _ := searchAnswer(t, cs, map[string]any{"query": "xylophone"}); len(got) == 0 || note == "" {
		t.Errorf("a query nothing matches: %v, note %q", names(got), note)
	}

	// Bad arguments are tool errors the model can correct.
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "invalid arguments for search_tools: query: required"},
		{map[string]any{"query": "  "}, "invalid arguments for search_tools: query: required"},
		{map[string]any{"query": 5}, "invalid arguments for search_tools: query: must be a string, got number"},
		{map[string]any{"query": "x", "limit": 0}, "invalid arguments for search_tools: limit: must be at least 1, got 0"},
		{map[string]any{"query": "x", "limit": "many"}, "invalid arguments for search_tools: limit: must be an integer, got string"},
		{map[string]any{"query": "x", "top": 3}, `invalid arguments for search_tools: unknown field "top"`},
		{map[string]any{"query": "x", "schemas": "no"}, "invalid arguments for search_tools: schemas: must be a boolean, got string"},
		{map[string]any{"query": strings.Repeat("find the animals ", 200)}, "invalid arguments for search_tools: query: at most 2000 characters, got 3400; give a few words"},
		{map[string]any{"query": "animals", "scope": strings.Repeat("z", 201)}, "invalid arguments for search_tools: scope: at most 200 characters"},
	} {
		res := call(t, cs, gateway.SearchToolsName, tc.args)
		if msg := text(t, res); !res.IsError || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%v: isError=%v %q, want %q", tc.args, res.IsError, msg, tc.want)
		}
	}
}

func compact(t *testing.T, js []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestSearchModeFilters: an excluded or hidden method is never found, and
// call_tool cannot reach it: it is an unknown name, answered with the
// closest names.
func TestSearchModeFilters(t *testing.T) {
	_, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Catalog: gateway.CatalogOptions{Exclude: []string{"zoo.v1.ZooService/DeleteAnimal"}}})
	cs := connect(t, url, "2025-11-25")
	for _, q := range []string{"delete an animal", "ZooService_DeleteAnimal", "DeleteAnimal"} {
		if got := names(searchTools(t, cs, map[string]any{"query": q, "limit": 10})); slices.Contains(got, "ZooService_DeleteAnimal") {
			t.Errorf("%q found the excluded method: %v", q, got)
		}
	}
	res := call(t, cs, gateway.CallToolName, map[string]any{"name": "ZooService_DeleteAnimal", "arguments": map[string]any{"id": "leo"}})
	msg := text(t, res)
	if !res.IsError || !strings.HasPrefix(msg, `unknown tool "ZooService_DeleteAnimal"; the closest names are `) || !strings.Contains(msg, "Animal") {
		t.Errorf("call_tool of an excluded method: isError=%v %q", res.IsError, msg)
	}
	res = call(t, cs, gateway.CallToolName, map[string]any{"name": "ZooService_GetAnimals", "arguments": map[string]any{"id": "leo"}})
	if msg := text(t, res); !res.IsError || !strings.Contains(msg, "the closest names are ZooService_GetAnimal") {
		t.Errorf("call_tool of a misspelt name: isError=%v %q", res.IsError, msg)
	}
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "invalid arguments for call_tool: name: required"},
		{map[string]any{"name": 1}, "invalid arguments for call_tool: name: must be a string, got number"},
		{map[string]any{"name": "ZooService_GetAnimal", "args": map[string]any{}}, `invalid arguments for call_tool: unknown field "args"`},
	} {
		res := call(t, cs, gateway.CallToolName, tc.args)
		if msg := text(t, res); !res.IsError || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%v: isError=%v %q, want %q", tc.args, res.IsError, msg, tc.want)
		}
	}
}

// outcome is what a client sees of one tools/call, for comparing a typed
// call with the same call through call_tool.
type outcome struct {
	IsError    bool
	Text       string
	Structured string
	ErrCode    int64
	ErrMessage string
}

func observe(t *testing.T, cs *sdk.ClientSession, name string, args any) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("%s: %v", name, err)
		}
		return outcome{ErrCode: werr.Code, ErrMessage: werr.Message}
	}
	o := outcome{IsError: res.IsError, Text: text(t, res)}
	if res.StructuredContent != nil {
		js, _ := json.Marshal(res.StructuredContent)
		o.Structured = string(js)
	}
	return o
}

// viaCallTool wraps a typed call as call_tool's arguments; args nil is an
// absent "arguments".
func viaCallTool(name string, args any) map[string]any {
	m := map[string]any{"name": name}
	if args != nil {
		m["arguments"] = args
	}
	return m
}

// TestCallToolParity: every class of answer (success, backend statuses
// with details, each kind of invalid argument, protocol errors) is the
// same through call_tool as from the typed tool, at every revision and in
// both input-error modes. A typed tool's own name is not listed in search
// mode, and calling it directly is the protocol's unknown tool.
func TestCallToolParity(t *testing.T) {
	calls := []struct {
		name string
		args any
	}{
		{"ZooService_GetAnimal", map[string]any{"id": "leo"}},
		{"ZooService_ListAnimals", map[string]any{"page_size": 2}},
		{"ZooService_ListEnclosures", nil},
		{"ZooService_GetTaxonomy", map[string]any{}},
		{"ZooService_GetAnimal", map[string]any{"id": "nobody"}},
		{"ZooService_CreateAnimal", map[string]any{"animal": map[string]any{}}},
		{"ZooService_GetAnimal", map[string]any{"id": 5}},
		{"ZooService_GetAnimal", map[string]any{"idd": "leo"}},
		{"ZooService_ListAnimals", map[string]any{"pageSize": "many"}},
		{"ZooService_FeedAnimal", map[string]any{"animalId": "leo", "ration": "hay", "meal": map[string]any{}}},
		{"ZooService_GetAnimal", []int{1}},
		{"ZooService_RecordObservations", map[string]any{"requests": []any{map[string]any{"observation": map[string]any{"animalId": "leo", "activityLevel": 4}}}}},
		{"ZooService_RecordObservations", map[string]any{"requests": 3}},
	}
	for _, mode := range []gateway.InputErrorMode{gateway.InputErrorsTool, gateway.InputErrorsProtocol} {
		_, _, typedURL := startGateway(t, &gateway.Options{Calls: gateway.CallOptions{InputErrors: mode}})
		_, _, searchURL := startGateway(t, &gateway.Options{Calls: gateway.CallOptions{InputErrors: mode}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
		for _, v := range versions {
			t.Run(fmt.Sprintf("%d/%s", mode, v), func(t *testing.T) {
				typed, search := connect(t, typedURL, v), connect(t, searchURL, v)
				for _, c := range calls {
					want := observe(t, typed, c.name, c.args)
					if got := observe(t, search, gateway.CallToolName, viaCallTool(c.name, c.args)); got != want {
						t.Errorf("%s %v through call_tool:\n got %+v\nwant %+v", c.name, c.args, got, want)
					}
					if got := observe(t, search, c.name, c.args); got.ErrCode != -32602 || !strings.Contains(got.ErrMessage, "unknown tool") {
						t.Errorf("%s called directly in search mode: %+v", c.name, got)
					}
				}
			})
		}
	}
}

// TestCallToolStreamingAndProgress: a streaming tool through call_tool
// streams, reports progress on the caller's token, and is cancelled at the
// backend when the client cancels, on every transport.
func TestCallToolStreamingAndProgress(t *testing.T) {
	sg := startStreamGateway(t, searchMode)
	for _, tr := range streamTransports {
		t.Run(tr.name, func(t *testing.T) {
			pc := newProgressCounter()
			pc.viaCallTool = true
			cs := tr.connect(t, sg, pc.options())
			res := callWithProgress(t, cs, gateway.CallToolName, "watch",
				viaCallTool("ZooService_WatchFeedings", map[string]any{"animalId": "leo", "count": 3, "interval": "0s"}))
			if res.IsError {
				t.Fatalf("isError: %s", text(t, res))
			}
			var r streamResult
			if err := json.Unmarshal([]byte(text(t, res)), &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) != 3 || r.limited() {
				t.Errorf("want 3 messages: %+v", r)
			}
			n, last := pc.settled(t, cs, "watch")
			if n != 3 || last == nil || last.Message != "message 3 (zoo.v1.WatchFeedingsResponse)" {
				t.Errorf("progress: %d notifications, last %+v", n, last)
			}
			if err := sg.backend.waitEnded(t, "WatchFeedings"); err != nil {
				t.Errorf("the completed stream ended with %v", err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.CallToolName,
					Arguments: viaCallTool("ZooService_WatchFeedings", map[string]any{"animalId": cueBlock})})
				errc <- err
			}()
			select {
			case m := <-sg.backend.zoo.started:
				if m != "WatchFeedings" {
					t.Fatalf("%s started", m)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the backend")
			}
			cancel()
			if err := sg.backend.waitEnded(t, "WatchFeedings"); !errors.Is(err, context.Canceled) {
				t.Errorf("backend saw %v, want canceled", err)
			}
			if err := <-errc; err == nil {
				t.Error("cancelled call returned no error")
			}
		})
	}
}

// TestCallToolDeadline: call_tool runs under the target tool's deadline.
func TestCallToolDeadline(t *testing.T) {
	b, _, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Calls: gateway.CallOptions{Timeout: 200 * time.Millisecond}})
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, gateway.CallToolName, viaCallTool("ZooService_GetAnimal", map[string]any{"id": "block"}))
	if msg := text(t, res); !res.IsError || !strings.HasPrefix(msg, "DEADLINE_EXCEEDED: ") {
		t.Errorf("isError=%v %q", res.IsError, msg)
	}
	<-b.started
	if err := <-b.ended; err == nil {
		t.Error("the backend call did not end")
	}
}

// TestCallToolMetrics: a call through call_tool is counted and logged
// under the target tool's name, with the target's arguments, and
// call_tool itself has no series.
func TestCallToolMetrics(t *testing.T) {
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, g, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics(), LogArguments: true}, Logger: logger})
	cs := connect(t, url, "2025-11-25")
	call(t, cs, gateway.CallToolName, viaCallTool("ZooService_GetAnimal", map[string]any{"id": "leo"}))
	call(t, cs, gateway.CallToolName, viaCallTool("ZooService_GetAnimal", map[string]any{"id": "nobody"}))
	call(t, cs, gateway.CallToolName, viaCallTool("ZooService_GetAnimal", map[string]any{"id": 5}))
	base := strings.TrimSuffix(url, "/mcp")
	_ = g
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.Contains(l, "ZooService_GetAnimal") && !strings.HasPrefix(l, "#") && !strings.Contains(l, "_bucket") {
			lines = append(lines, l)
		}
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{`code="OK"`, `code="NOT_FOUND"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no series with %s for ZooService_GetAnimal in:\n%s", want, all)
		}
	}
	if strings.Contains(string(body), `tool="call_tool"`) || strings.Contains(string(body), `tool="search_tools"`) {
		t.Error("search mode's own tools have metric series")
	}
	var calls, args int
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec["msg"] {
		case "tools/call arguments":
			args++
			if rec["tool"] != "ZooService_GetAnimal" || strings.Contains(fmt.Sprint(rec["arguments"]), "call_tool") || !strings.HasPrefix(fmt.Sprint(rec["arguments"]), `{"id":`) {
				t.Errorf("arguments line: %s", line)
			}
		case "tools/call":
			calls++
			if rec["tool"] != "ZooService_GetAnimal" {
				t.Errorf("call line: %s", line)
			}
		}
	}
	if calls != 3 || args != 3 {
		t.Errorf("%d call lines and %d argument lines, want 3 of each:\n%s", calls, args, logs.String())
	}
}

// bigFile is a package whose every method takes a request of width
// string fields, so that a search answer cannot hold every schema.
func bigFile(pkg string, width int, methods ...string) *descriptorpb.FileDescriptorProto {
	var fields []*descriptorpb.FieldDescriptorProto
	for i := range width {
		n := fmt.Sprintf("an_uncommonly_long_field_name_number_%04d", i)
		fields = append(fields, &descriptorpb.FieldDescriptorProto{
			Name: proto.String(n), Number: proto.Int32(int32(i + 1)),
			Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		})
	}
	var ms []*descriptorpb.MethodDescriptorProto
	for _, m := range methods {
		ms = append(ms, &descriptorpb.MethodDescriptorProto{Name: proto.String(m), InputType: proto.String("." + pkg + ".Big"), OutputType: proto.String("." + pkg + ".Big")})
	}
	return &descriptorpb.FileDescriptorProto{
		Name:        proto.String(strings.ReplaceAll(pkg, ".", "/") + "/big.proto"),
		Package:     proto.String(pkg),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Big"), Field: fields}},
		Service:     []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Widgets"), Method: ms}},
	}
}

// TestSearchAnswerBound: an answer stays within 64 KiB on the wire; the
// matches whose schemas do not fit are listed by name and description; an
// exact name brings its tool first, with its schema.
func TestSearchAnswerBound(t *testing.T) {
	api := &fakeAPI{}
	methods := []string{"GetWidget", "ListWidgets", "CreateWidget", "UpdateWidget", "DeleteWidget", "MoveWidget", "CopyWidget", "PaintWidget", "ShipWidget", "SellWidget"}
	api.set(t, bigFile("shop.v1", 500, methods...))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")

	for _, q := range []string{"widget", "Widgets_SellWidget", "create a widget"} {
		res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": q, "limit": 10})
		wire, _ := json.Marshal(res)
		if len(wire) > gateway.MaxSearchAnswerBytes {
			t.Errorf("%q: answer of %d bytes, over %d", q, len(wire), gateway.MaxSearchAnswerBytes)
		}
		got := searchTools(t, cs, map[string]any{"query": q, "limit": 10})
		if len(got) != len(methods) {
			t.Errorf("%q: %d matches, want all %d (listed short when they do not fit)", q, len(got), len(methods))
		}
		if len(got) == 0 || got[0].InputSchema == nil {
			t.Fatalf("%q: the best match has no schema: %v", q, names(got))
		}
		short := 0
		for _, f := range got {
			if f.InputSchema == nil {
				short++
				if f.Description == "" {
					t.Errorf("%q: %s listed without description", q, f.Name)
				}
			}
		}
		if short == 0 {
			t.Errorf("%q: every schema fitted; the test's schemas are too small to test the bound (answer %d bytes)", q, len(wire))
		}
		if q == "Widgets_SellWidget" && got[0].Name != q {
			t.Errorf("exact name: %v", names(got))
		}
	}
}

// searchAnswer calls search_tools and returns the answer's matches, its
// note ("" without one) and its size on the wire.
func searchAnswer(t *testing.T, cs *sdk.ClientSession, args map[string]any) (tools []found, note string, wire int) {
	t.Helper()
	res := call(t, cs, gateway.SearchToolsName, args)
	if res.IsError {
		t.Fatalf("search_tools %v: %s", args, text(t, res))
	}
	js, _ := json.Marshal(res)
	var answer struct {
		Tools []found
		Note  string
	}
	if err := json.Unmarshal([]byte(text(t, res)), &answer); err != nil {
		t.Fatal(err)
	}
	return answer.Tools, answer.Note, len(js)
}

// TestSearchAnswerBudget: an answer fits SearchAnswerBudget (16 KiB,
// about 4,000 tokens): the best match carries its input schema, the next
// ones theirs while they fit, and the note says how to get the others';
// a best match whose schema alone is larger carries it, within
// MaxSearchAnswerBytes, and no other schema comes with it; schemas: false
// lists the same matches without any schema.
func TestSearchAnswerBudget(t *testing.T) {
	api := &fakeAPI{}
	// shop.v1's schemas are about 4 KB each, so a few fit the budget but
	// not five; big.v1's one is about 28 KB, larger than the budget alone.
	api.set(t, bigFile("shop.v1", 60, "GetWidget", "ListWidgets", "CreateWidget", "UpdateWidget", "DeleteWidget", "MoveWidget"),
		bigFile("big.v1", 400, "StartWidget"))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")
	withSchema := func(fs []found) (n int) {
		for _, f := range fs {
			if f.InputSchema != nil {
				n++
			}
		}
		return n
	}

	got, note, wire := searchAnswer(t, cs, map[string]any{"query": "widget", "scope": "shop.v1"})
	if len(got) != gateway.DefaultSearchLimit || wire > gateway.SearchAnswerBudget {
		t.Errorf("default answer: %d matches in %d bytes, want %d within %d", len(got), wire, gateway.DefaultSearchLimit, gateway.SearchAnswerBudget)
	}
	if n := withSchema(got); got[0].InputSchema == nil || n < 2 || n == len(got) {
		t.Errorf("%d of %d matches with their schema (the first: %v); want the first and the next while they fit, and not all (the test's schemas are too small otherwise)", n, len(got), got[0].InputSchema != nil)
	}
	if !strings.Contains(note, "search its exact name") {
		t.Errorf("a match without its schema, and the note is %q", note)
	}
	for _, f := range got {
		if f.InputSchema == nil && f.Description == "" {
			t.Errorf("%s listed without a description", f.Name)
		}
	}

	// A best match whose schema alone is over the budget keeps it.
	got, note, wire = searchAnswer(t, cs, map[string]any{"query": "Widgets_StartWidget"})
	if len(got) < 2 || got[0].Name != "Widgets_StartWidget" || len(got[0].InputSchema) <= gateway.SearchAnswerBudget || withSchema(got) != 1 {
		t.Errorf("exact name of a large tool: %v, first schema %d bytes, %d schemas; want it first with its schema, alone", names(got), len(got[0].InputSchema), withSchema(got))
	}
	if wire > gateway.MaxSearchAnswerBytes || note == "" {
		t.Errorf("exact name of a large tool: %d bytes (at most %d), note %q", wire, gateway.MaxSearchAnswerBytes, note)
	}

	// Names and descriptions only, when asked: the same matches. (Asked
	// first, so an answer cache that mixed the two would show below.)
	slim, note, wire := searchAnswer(t, cs, map[string]any{"query": "widget", "limit": 10, "schemas": false})
	full, _, _ := searchAnswer(t, cs, map[string]any{"query": "widget", "limit": 10})
	if !slices.Equal(names(slim), names(full)) || withSchema(slim) != 0 || withSchema(full) == 0 || note == "" || wire > gateway.SearchAnswerBudget/2 {
		t.Errorf("schemas false: %v with %d schemas in %d bytes, note %q; want %v without schemas", names(slim), withSchema(slim), wire, note, names(full))
	}

	// Every match with its schema: no note.
	if got, note, _ := searchAnswer(t, cs, map[string]any{"query": "Widgets_GetWidget", "limit": 1}); len(got) != 1 || got[0].InputSchema == nil || note != "" {
		t.Errorf("one match with its schema: %v, note %q", names(got), note)
	}

	// The tool says so: its description, and the argument in its schema.
	st := g.Tools().Tools()[0]
	var in struct {
		Properties map[string]struct{ Type string }
	}
	if err := json.Unmarshal(st.InputSchema, &in); err != nil || in.Properties["schemas"].Type != "boolean" ||
		!strings.Contains(st.Description, "in about 4000 tokens") || !strings.Contains(st.Description, "set schemas to false") {
		t.Errorf("search_tools does not describe the budget and schemas: %v %s\n%s", err, st.InputSchema, st.Description)
	}
}

// TestToolModeAutoSwitch: in auto mode a catalog that grows over the
// budget switches to search, and back when it shrinks, each time telling
// clients with list_changed; growth within a mode tells them only when
// the list they see changed.
func TestToolModeAutoSwitch(t *testing.T) {
	small := apiFile("svc.v1", "S", method("A"))
	var many []*descriptorpb.MethodDescriptorProto
	for i := range 40 {
		many = append(many, method(fmt.Sprintf("Method%02d", i)))
	}
	large := apiFile("svc.v1", "S", many...)
	larger := apiFile("svc.v1", "S", append(many, method("Extra"))...)
	api := &fakeAPI{}
	api.set(t, small)
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	// About 300 bytes a tool: 1 tool is ~75 tokens, 40 are ~3000.
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}, Search: gateway.SearchOptions{ToolBudget: 1000}})
	var lc listChanges
	cs := connectWSNotified(t, base+"/mcp", lc.options())
	listed := func() []string { return testkit.ToolNames(t, context.Background(), cs) }
	if got := listed(); !slices.Equal(got, []string{"S_A"}) {
		t.Fatalf("small API: %v, want typed", got)
	}
	steps := []struct {
		name string
		file *descriptorpb.FileDescriptorProto
		want []string
	}{
		{"grow over the budget", large, []string{gateway.SearchToolsName, gateway.CallToolName}},
		// The same two tools, but search_tools now counts 41 tools.
		{"grow within search mode", larger, []string{gateway.SearchToolsName, gateway.CallToolName}},
		{"shrink under it", small, []string{"S_A"}},
	}
	for i, s := range steps {
		api.set(t, s.file)
		select {
		case <-lc.kick:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no list_changed", s.name)
		}
		if got := listed(); !slices.Equal(got, s.want) {
			t.Errorf("%s: %v, want %v", s.name, got, s.want)
		}
		if n, _ := lc.counts(); n != i+1 {
			t.Errorf("%s: %d notifications, want %d", s.name, n, i+1)
		}
	}
	_ = g
}

// connectWSNotified connects over /ws, where notifications share the
// connection with the calls, so none can be missed while a stream opens.
func connectWSNotified(t *testing.T, mcpURL string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "search-ws", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &testkit.WebSocketTransport{URL: wsURL(mcpURL)}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestCallToolRefusedLikeTyped: a call_tool of a tool the caller lacks the
// scope for is refused exactly as the typed call is (the same JSON-RPC
// error, code, message and step-up data, or the same HTTP refusal on
// Streamable HTTP), and never reaches the backend.
func TestCallToolRefusedLikeTyped(t *testing.T) {
	is := newTestIssuer(t)
	typedBackend, typed := startOAuthGatewayMode(t, is, 0, gateway.ToolModeTyped)
	searchBackend, search := startOAuthGatewayMode(t, is, 0, gateway.ToolModeSearch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := is.token(t, zooAudience, "zoo", nil)
	args := map[string]any{"id": "leo"}
	for _, transport := range []string{"websocket", "sse", "streamable"} {
		t.Run(transport, func(t *testing.T) {
			_, want := connectAs(ctx, t, typed, transport, user).CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: args})
			_, got := connectAs(ctx, t, search, transport, user).CallTool(ctx, &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: viaCallTool("ZooService_DeleteAnimal", args)})
			if want == nil || got == nil {
				t.Fatalf("refusals: typed %v, call_tool %v", want, got)
			}
			var we, ge *jsonrpc.Error
			if errors.As(want, &we) != errors.As(got, &ge) {
				t.Fatalf("typed %v, call_tool %v", want, got)
			}
			if we != nil && (we.Code != ge.Code || we.Message != ge.Message || string(we.Data) != string(ge.Data)) {
				t.Errorf("call_tool refused with %d %q %s, typed with %d %q %s", ge.Code, ge.Message, ge.Data, we.Code, we.Message, we.Data)
			}
			if we == nil && want.Error() != got.Error() {
				t.Errorf("call_tool refused with %v, typed with %v", got, want)
			}
		})
	}
	if typedBackend.deletes() != 0 || searchBackend.deletes() != 0 {
		t.Errorf("a refused call reached a backend: %d, %d deletes", typedBackend.deletes(), searchBackend.deletes())
	}
}

// TestSearchExactNameOversize: a tool whose input schema fills most of
// an answer, found by its exact name, comes first with its schema; the
// other match is still listed, by name and description, and the answer
// stays within the bound.
func TestSearchExactNameOversize(t *testing.T) {
	api := &fakeAPI{}
	api.set(t, bigFile("shop.v1", 900, "GetWidget", "ListWidgets"))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")
	res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": "Widgets_GetWidget"})
	if wire, _ := json.Marshal(res); len(wire) > gateway.MaxSearchAnswerBytes {
		t.Errorf("answer of %d bytes, over %d", len(wire), gateway.MaxSearchAnswerBytes)
	}
	got := searchTools(t, cs, map[string]any{"query": "Widgets_GetWidget"})
	if len(got) != 2 || got[0].Name != "Widgets_GetWidget" || len(got[0].InputSchema) < 30000 {
		t.Fatalf("answer: %v, want Widgets_GetWidget first with its schema, then Widgets_ListWidgets", names(got))
	}
	if got[1].InputSchema != nil || got[1].Description == "" {
		t.Errorf("the second match: schema %d bytes, description %q; want it listed by name and description", len(got[1].InputSchema), got[1].Description)
	}
}

// TestSearchScope: scope narrows a search to one API (a package or a
// prefix of packages) or one service (by name or package.Service); a
// scope that names nothing in the catalog is an error the model can act
// on.
func TestSearchScope(t *testing.T) {
	shop := &fakeAPI{}
	shop.set(t, bigFile("shop.v1", 3, "GetWidget", "ListWidgets", "DeleteWidget"))
	addr, _ := serveFake(t, shop, "127.0.0.1:0")
	zoo := startBackend(t)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr), dialBackend(t, "zoo", zoo.addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")

	// "delete" alone finds both APIs' deletes; each scope keeps one.
	if got := names(searchTools(t, cs, map[string]any{"query": "delete", "limit": 10})); !slices.Contains(got, "Widgets_DeleteWidget") || !slices.Contains(got, "ZooService_DeleteAnimal") {
		t.Fatalf("delete, unscoped: %v", got)
	}
	for _, scope := range []string{"shop.v1", "shop", "Widgets", "shop.v1.Widgets", "SHOP.V1"} {
		got := names(searchTools(t, cs, map[string]any{"query": "delete", "limit": 10, "scope": scope}))
		if len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return !strings.HasPrefix(n, "Widgets_") }) {
			t.Errorf("scope %q: %v, want only the shop's tools", scope, got)
		}
	}
	for _, scope := range []string{"zoo.v1", "ZooService", "zoo.v1.ZooService"} {
		got := names(searchTools(t, cs, map[string]any{"query": "delete", "limit": 10, "scope": scope}))
		if len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return !strings.HasPrefix(n, "ZooService_") }) {
			t.Errorf("scope %q: %v, want only the zoo's tools", scope, got)
		}
	}
	// An exact name outside the scope is not found.
	if got := names(searchTools(t, cs, map[string]any{"query": "ZooService_DeleteAnimal", "scope": "shop.v1"})); slices.Contains(got, "ZooService_DeleteAnimal") {
		t.Errorf("an exact name outside the scope: %v", got)
	}
	res := call(t, cs, gateway.SearchToolsName, map[string]any{"query": "delete", "scope": "billing.v1"})
	if msg := text(t, res); !res.IsError || !strings.Contains(msg, `scope: no API or service "billing.v1" in this catalog`) {
		t.Errorf("unknown scope: isError=%v %q", res.IsError, msg)
	}
}

// TestSearchDirectory: search_tools' description lists the catalog's APIs
// and their services within 4 KB; a catalog whose services do not fit
// lists each API with its number of services, and counts those that do
// not fit either.
func TestSearchDirectory(t *testing.T) {
	shop := &fakeAPI{}
	shop.set(t, bigFile("shop.v1", 3, "GetWidget"))
	addr, _ := serveFake(t, shop, "127.0.0.1:0")
	zoo := startBackend(t)
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "shop", addr), dialBackend(t, "zoo", zoo.addr)}, searchMode)
	d := g.Tools().Tools()[0].Description
	if !strings.Contains(d, "Catalog (API: services): shop.v1: Widgets; zoo.v1: ZooService.") {
		t.Errorf("directory: %q", d)
	}

	// Many services: the directory falls back to counts.
	var files []*descriptorpb.FileDescriptorProto
	for i := range 200 {
		f := bigFile(fmt.Sprintf("a%03d.verylongpackagename.v1", i), 1, "GetWidget")
		f.Service = append(f.Service, &descriptorpb.ServiceDescriptorProto{Name: proto.String("Gadgets"), Method: f.Service[0].Method})
		files = append(files, f)
	}
	many := &fakeAPI{}
	many.set(t, files...)
	addr, _ = serveFake(t, many, "127.0.0.1:0")
	g, _ = newGateway(t, []gateway.Backend{dialBackend(t, "many", addr)}, searchMode)
	d = g.Tools().Tools()[0].Description
	_, dir, _ := strings.Cut(d, "\n\n")
	if len(dir) > 4096 || !strings.HasPrefix(dir, "Catalog (API: number of services") || !strings.Contains(dir, "a000.verylongpackagename.v1 (2)") || !strings.Contains(dir, "more APIs.") {
		t.Errorf("a large catalog's directory (%d bytes): %.300q ... %.100q", len(dir), dir, dir[max(0, len(dir)-100):])
	}
}

// TestSearchExactNameGiantSchema: a tool whose input schema is larger
// than MaxSearchAnswerBytes (a request of 2,000 fields, served with real
// reflection) is listed without it by any other search, its entry giving
// the schema's size and its exact name, within the bound; searching that
// name, as the entry and the answer's note say, brings the schema whole,
// the typed tool's byte for byte, and the model can call the tool with
// it. schemas: false still means no schema.
func TestSearchExactNameGiantSchema(t *testing.T) {
	api := &fakeAPI{}
	api.set(t, bigFile("huge.v1", 2000, "GetWidget", "ListWidgets"), bigFile("small.v1", 3, "GetGadget"))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	typed, _ := newGateway(t, []gateway.Backend{dialBackend(t, "huge", addr)}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "huge", addr)}, searchMode)
	cs := connect(t, base+"/mcp", "2025-11-25")
	want := map[string][]byte{}
	for _, name := range []string{"Widgets_GetWidget", "Widgets_ListWidgets"} {
		var b bytes.Buffer
		if err := json.Compact(&b, toolByName(t, typed, name).InputSchema); err != nil {
			t.Fatal(err)
		}
		// Written out, the schema would be over MaxSearchAnswerBytes
		// (112 KB); the tool bound shortens it (gateway/internal/compiled/toolsize.go).
		if b.Len() > gateway.MaxToolBytes || !strings.Contains(b.String(), "more fields are not listed here: see resource grpc://huge/huge.v1.") {
			t.Fatalf("%s: schema of %d bytes, want one bounded to %d:\n%.300s", name, b.Len(), gateway.MaxToolBytes, b.String())
		}
		want[name] = b.Bytes()
	}
	type entry struct {
		Name            string
		InputSchema     json.RawMessage
		InputSchemaNote string
	}
	answer := func(args map[string]any) ([]entry, string, int) {
		t.Helper()
		res := call(t, cs, gateway.SearchToolsName, args)
		if res.IsError {
			t.Fatalf("search_tools %v: %s", args, text(t, res))
		}
		var a struct {
			Tools []entry
			Note  string
		}
		if err := json.Unmarshal([]byte(text(t, res)), &a); err != nil {
			t.Fatal(err)
		}
		wire, _ := json.Marshal(res)
		return a.Tools, a.Note, len(wire)
	}

	// Any other search lists them without their schemas, within the
	// bound, and says how to get each.
	got, note, wire := answer(map[string]any{"query": "get a widget"})
	if wire > gateway.MaxSearchAnswerBytes || len(got) < 2 || !strings.Contains(note, "search its exact name") {
		t.Fatalf("get a widget: %d matches in %d bytes (at most %d), note %q", len(got), wire, gateway.MaxSearchAnswerBytes, note)
	}
	giants := 0
	for _, e := range got {
		w, giant := want[e.Name]
		if !giant {
			continue
		}
		giants++
		// Bounded, a schema fits in an answer: the best match carries
		// its own, the others none (the answer's note names the way).
		if e.InputSchema != nil && !bytes.Equal(e.InputSchema, w) {
			t.Errorf("%s listed with a schema of %d bytes, not the typed tool's %d", e.Name, len(e.InputSchema), len(w))
		}

		// Its exact name, as the entry says: the schema, whole.
		for range 2 { // the second from any cache
			exact, note, wire := answer(map[string]any{"query": e.Name})
			if len(exact) < 2 || exact[0].Name != e.Name || !bytes.Equal(exact[0].InputSchema, w) || exact[0].InputSchemaNote != "" {
				t.Fatalf("exact name %s: %v, first schema %d bytes (note %q); want it first with its schema of %d bytes, the typed tool's", e.Name, exact, len(exact[0].InputSchema), exact[0].InputSchemaNote, len(w))
			}
			for _, other := range exact[1:] {
				if other.InputSchema != nil {
					t.Errorf("exact name %s: %s came with its schema too", e.Name, other.Name)
				}
			}
			if wire <= len(w) || note == "" {
				t.Errorf("exact name %s: answer of %d bytes for a schema of %d, note %q", e.Name, wire, len(w), note)
			}
		}
	}
	if giants != 2 {
		t.Errorf("get a widget: %d of the 2 large tools listed", giants)
	}

	// The name is the name, case aside, as the index reads it.
	if lower, _, _ := answer(map[string]any{"query": "widgets_getwidget"}); len(lower) == 0 || lower[0].Name != "Widgets_GetWidget" || !bytes.Equal(lower[0].InputSchema, want["Widgets_GetWidget"]) {
		t.Errorf("exact name in lower case: %d matches, want Widgets_GetWidget first with its schema", len(lower))
	}

	// The schema it got is the one to call with: a field it lists, and
	// one it leaves to the resource, which the gateway checks against the
	// descriptors.
	for _, field := range []string{"anUncommonlyLongFieldNameNumber0000", "anUncommonlyLongFieldNameNumber1999"} {
		res := call(t, cs, gateway.CallToolName, map[string]any{"name": "Widgets_GetWidget", "arguments": map[string]any{field: "x"}})
		if res.IsError {
			t.Errorf("call_tool with %s: %s", field, text(t, res))
		}
	}
	if listed := string(want["Widgets_GetWidget"]); !strings.Contains(listed, `"anUncommonlyLongFieldNameNumber0000"`) || strings.Contains(listed, `"anUncommonlyLongFieldNameNumber1999"`) {
		t.Error("the bounded schema does not list the first field, or lists the last")
	}

	// Names and descriptions only, when asked, even for an exact name.
	if slim, _, wire := answer(map[string]any{"query": "Widgets_GetWidget", "schemas": false}); len(slim) == 0 || slim[0].Name != "Widgets_GetWidget" || slim[0].InputSchema != nil || wire > gateway.MaxSearchAnswerBytes {
		t.Errorf("exact name with schemas false: %v in %d bytes", slim, wire)
	}

	// search_tools promises what it does.
	d := g.Tools().Tools()[0].Description
	if !strings.Contains(d, "A tool's exact name always brings its input schema, whatever its size") {
		t.Errorf("search_tools does not say that an exact name brings the schema whatever its size:\n%s", d)
	}
}
