package estate_test

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// TestTemporalPaging: on Temporal's published descriptors, the list
// methods page with their own fields (page_size or maximum_page_size, and
// next_page_token, bytes, on both sides), and the next-page sentence
// gives the token as base64 that reaches the backend as the bytes it sent.
// PollWorkflowTaskQueue, whose response carries a history page token its
// request cannot take, says nothing of pages; the cloud API pages by
// AIP-158.
func TestTemporalPaging(t *testing.T) {
	token := []byte{0xfb, 0xff, 0x01, 0x02}
	var mu sync.Mutex
	var got [][]byte // the tokens the backend received
	g, _ := lroGateway(t, &estate.Options{Services: estate.TemporalServices, Unary: map[string]estate.UnaryHandler{
		"/temporal.api.workflowservice.v1.WorkflowService/ListWorkflowExecutions": func(_ context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*workflowservice.ListWorkflowExecutionsRequest)
			mu.Lock()
			got = append(got, r.GetNextPageToken())
			mu.Unlock()
			resp := &workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{{
				Execution: &commonpb.WorkflowExecution{WorkflowId: "order-1"}}}}
			if r.GetNextPageToken() == nil {
				resp.NextPageToken = token
			}
			return resp, nil
		},
		"/temporal.api.workflowservice.v1.WorkflowService/GetWorkflowExecutionHistory": func(context.Context, proto.Message) (proto.Message, error) {
			return &workflowservice.GetWorkflowExecutionHistoryResponse{History: &historypb.History{}, NextPageToken: token}, nil
		},
	}})
	for name, want := range map[string]string{
		"WorkflowService_ListWorkflowExecutions":      `Paged: set "pageSize" to the most items you want in one result; when a result has a "nextPageToken", call this tool again with the same arguments and "nextPageToken" set to it`,
		"WorkflowService_GetWorkflowExecutionHistory": `Paged: set "maximumPageSize" to the most items you want in one result; when a result has a "nextPageToken"`,
		"WorkflowService_ListSchedules":               `Paged: set "maximumPageSize"`,
		"WorkflowService_ListWorkflowRules":           `Paged: when a result has a "nextPageToken"`,
		"OperatorService_ListClusters":                `Paged: set "pageSize"`,
		"CloudService_GetUsers":                       `Paged: set "pageSize" to the most items you want in one result; when a result has a "nextPageToken", call this tool again with the same arguments and "pageToken" set to it`,
		"WorkflowService_PollWorkflowTaskQueue":       "",
	} {
		d := lroTool(t, g, name).Description
		if want == "" && strings.Contains(d, "Paged") || want != "" && !strings.Contains(d, want) {
			t.Errorf("%s: %q\nwant %q", name, d, want)
		}
	}

	const sentence = `More results: call WorkflowService_ListWorkflowExecutions again with the same arguments and "nextPageToken": "+/8BAg==" for the next page.`
	res, sc := callJSON(t, g, "WorkflowService_ListWorkflowExecutions", `{"namespace":"default","pageSize":1}`)
	if res.IsError || len(res.Content) != 2 || res.Content[1].Text != sentence || sc["nextPageToken"] != "+/8BAg==" {
		t.Fatalf("first page: %+v", res.Content)
	}
	res, _ = callJSON(t, g, "WorkflowService_ListWorkflowExecutions", `{"namespace":"default","pageSize":1,"nextPageToken":"+/8BAg=="}`)
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("last page: %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != nil || string(got[1]) != string(token) {
		t.Errorf("the backend received the tokens %x", got)
	}
	res, _ = callJSON(t, g, "WorkflowService_GetWorkflowExecutionHistory", `{"namespace":"default","execution":{"workflowId":"order-1"},"maximumPageSize":10}`)
	if len(res.Content) != 2 || !strings.Contains(res.Content[1].Text, `"nextPageToken": "+/8BAg=="`) {
		t.Errorf("history: %+v", res.Content)
	}
}

// TestTemporalPayloadBytes: Temporal's Payload.metadata holds bytes; its
// schema says so with an example, the text json/plain is refused with its
// base64, and a word that is valid base64 is sent with a warning.
func TestTemporalPayloadBytes(t *testing.T) {
	var mu sync.Mutex
	var encodings []string
	g, _ := lroGateway(t, &estate.Options{Services: estate.TemporalServices, Unary: map[string]estate.UnaryHandler{
		"/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution": func(_ context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*workflowservice.StartWorkflowExecutionRequest)
			mu.Lock()
			encodings = append(encodings, string(r.GetInput().GetPayloads()[0].GetMetadata()["encoding"]))
			mu.Unlock()
			return &workflowservice.StartWorkflowExecutionResponse{RunId: "run-1"}, nil
		},
	}})
	if s := string(lroTool(t, g, "WorkflowService_StartWorkflowExecution").InputSchema); !strings.Contains(s, `"contentEncoding":"base64","description":`+strconv.Quote(schema.BytesDescription)) {
		t.Errorf("no bytes description in StartWorkflowExecution's schema")
	}
	start := func(encoding string) *mcp.CallToolResult {
		res, _ := callJSON(t, g, "WorkflowService_StartWorkflowExecution", `{"namespace":"default","workflowId":"order-1","workflowType":{"name":"Order"},"taskQueue":{"name":"orders"},`+
			`"input":{"payloads":[{"metadata":{"encoding":"`+encoding+`"},"data":"eyJpZCI6MX0="}]}}`)
		return res
	}
	if res := start("anNvbi9wbGFpbg=="); res.IsError || len(res.Content) != 1 {
		t.Errorf("base64 of json/plain: %+v", res.Content)
	}
	if res := start("json/plain"); !res.IsError || !strings.Contains(res.Content[0].Text, `input.payloads[0].metadata["encoding"]: expected base64 padded with "=" to a multiple of 4 characters; the base64 of the text "json/plain" is "anNvbi9wbGFpbg=="`) {
		t.Errorf("json/plain: %+v", res.Content)
	}
	res := start("json")
	if n := len(res.Content); res.IsError || n != 2 || !strings.Contains(res.Content[1].Text, `input.payloads[0].metadata["encoding"]: "json" was read as base64 and sent as 3 bytes that are not text; if you meant the text, the base64 of the text "json" is "anNvbg=="`) {
		t.Errorf("json: %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(encodings) != 2 || encodings[0] != "json/plain" || encodings[1] != "\x8e\xca'" {
		t.Errorf("the backend received the encodings %q", encodings)
	}
}

// TestPagingRuleOnTheEstates: the paging rule (gateway/internal/paging) on the
// real descriptors of both estates, 1,683 methods, does not misfire.
// Every method it takes as paged returns a list (a repeated or map field,
// at the top or one message down, as Temporal's History.events) and is
// named as a listing is, but for three of Vertex AI's reviewed by hand
// (AIP-158 methods named Export, Query and Summarize); every AIP-158
// method is still paged with its own fields; the only method left unpaged
// whose response carries a next token is PollWorkflowTaskQueue, whose
// request cannot carry it. The conventions found are pinned by count
// (Compute's max_results, AIP-158's page_size; Temporal's bytes
// next_page_token on both sides, with page_size, maximum_page_size or no
// size, and its cloud API's AIP-158), so a change to the rule or the
// modules shows here.
func TestPagingRuleOnTheEstates(t *testing.T) {
	for _, tt := range []struct {
		name     string
		g        *gateway.Gateway
		services []protoreflect.ServiceDescriptor
		// conventions counts the paged methods by the size and token
		// arguments their description names ("" without a size).
		conventions map[[2]string]int
		// unpagedWithToken are the methods not paged whose response
		// has a next token; unusual the paged ones not named as a
		// listing is.
		unpagedWithToken, unusual []string
	}{
		{"Google Cloud", newEstateGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}), estate.Services(),
			map[[2]string]int{{"maxResults", "pageToken"}: 197, {"pageSize", "pageToken"}: 81},
			nil, []string{"ExportTensorboardTimeSeriesData", "QueryDeployedModels", "SummarizeIntelligenceFindings"}},
		{"Temporal", startGateway(t, temporalBackends(t), &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}), temporalServices(t),
			map[[2]string]int{{"pageSize", "pageToken"}: 22, {"pageSize", "nextPageToken"}: 12, {"maximumPageSize", "nextPageToken"}: 5, {"", "nextPageToken"}: 1},
			[]string{"PollWorkflowTaskQueue"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			methods := map[string]protoreflect.MethodDescriptor{}
			for _, s := range tt.services {
				for i := range s.Methods().Len() {
					m := s.Methods().Get(i)
					methods[string(s.Name())+"_"+string(m.Name())] = m
				}
			}
			conventions := map[[2]string]int{}
			var unpagedWithToken, unusual []string
			for _, tl := range tt.g.Tools().Tools() {
				m, ok := methods[tl.Name]
				if !ok {
					t.Fatalf("%s: no method of that name", tl.Name)
				}
				paged := pagedNote.FindStringSubmatch(tl.Description)
				if paged == nil {
					if isAIP158(m) {
						t.Errorf("%s: an AIP-158 method not paged: %q", m.FullName(), tl.Description)
					}
					for _, n := range []protoreflect.Name{"next_page_token", "next_token", "next_continuation_token", "continuation_token"} {
						if m.Output().Fields().ByName(n) != nil {
							unpagedWithToken = append(unpagedWithToken, string(m.Name()))
						}
					}
					continue
				}
				conventions[[2]string{paged[1], paged[2]}]++
				if !holdsItems(m.Output()) {
					t.Errorf("%s: paged, but its response %s holds no list", m.FullName(), m.Output().FullName())
				}
				if isAIP158(m) && (paged[1] != "pageSize" || paged[2] != "pageToken") {
					t.Errorf("%s: an AIP-158 method paged by %q and %q", m.FullName(), paged[1], paged[2])
				}
				if !listingName.MatchString(string(m.Name())) {
					unusual = append(unusual, string(m.Name()))
				}
			}
			if !maps.Equal(conventions, tt.conventions) {
				t.Errorf("paged methods by their size and token arguments: %v\nwant %v", conventions, tt.conventions)
			}
			slices.Sort(unpagedWithToken)
			slices.Sort(unusual)
			if !slices.Equal(unpagedWithToken, tt.unpagedWithToken) {
				t.Errorf("not paged, though the response has a next token: %v\nwant %v", unpagedWithToken, tt.unpagedWithToken)
			}
			if !slices.Equal(unusual, tt.unusual) {
				t.Errorf("paged, not named as a listing is: %v\nwant %v (review each: is it a list?)", unusual, tt.unusual)
			}
		})
	}
}

// pagedNote is a paged tool's description note: its size argument (""
// without one) and its token argument.
var pagedNote = regexp.MustCompile(`\n\nPaged: (?:set "([^"]+)" to the most items you want in one result; )?when a result has a "[^"]+", call this tool again with the same arguments and "([^"]+)" set to it`)

// listingName is how the estates name a method that returns a list.
var listingName = regexp.MustCompile(`^(List|AggregatedList|Search|Get|Scan)`)

// isAIP158: m's request has page_size (an integer) and page_token (a
// string), its response next_page_token (a string): the one convention
// the gateway recognised before the others.
func isAIP158(m protoreflect.MethodDescriptor) bool {
	in, out := m.Input().Fields(), m.Output().Fields()
	size, token, next := in.ByName("page_size"), in.ByName("page_token"), out.ByName("next_page_token")
	isInt := func(f protoreflect.FieldDescriptor) bool {
		switch f.Kind() {
		case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind:
			return true
		}
		return false
	}
	return size != nil && token != nil && next != nil && !size.IsList() && isInt(size) &&
		!token.IsList() && token.Kind() == protoreflect.StringKind && !next.IsList() && next.Kind() == protoreflect.StringKind
}

// holdsItems: md has a repeated or map field, or a message field that
// has one.
func holdsItems(md protoreflect.MessageDescriptor) bool {
	list := func(fs protoreflect.FieldDescriptors) bool {
		for i := range fs.Len() {
			if f := fs.Get(i); f.IsList() || f.IsMap() {
				return true
			}
		}
		return false
	}
	if list(md.Fields()) {
		return true
	}
	for i := range md.Fields().Len() {
		if f := md.Fields().Get(i); f.Message() != nil && !f.IsList() && !f.IsMap() && list(f.Message().Fields()) {
			return true
		}
	}
	return false
}

// temporalServices are the descriptors of estate.TemporalServices.
func temporalServices(t *testing.T) []protoreflect.ServiceDescriptor {
	t.Helper()
	var svcs []protoreflect.ServiceDescriptor
	for _, n := range estate.TemporalServices {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(n)
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, d.(protoreflect.ServiceDescriptor))
	}
	return svcs
}
