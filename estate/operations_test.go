package estate_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"cloud.google.com/go/compute/apiv1/computepb"
	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// Long-running operations on the real published descriptors: Compute
// Engine's custom operations and Vertex AI's AIP-151 ones. The protocol
// path is tested in the gateway package with its own backend; these hold
// the descriptor analysis to the real APIs, calling the gateway as the MCP
// layer does.

// lroGateway serves opts and fronts it with a gateway whose warnings are
// kept.
func lroGateway(t *testing.T, opts *estate.Options) (*gateway.Gateway, *testkit.SyncBuffer) {
	t.Helper()
	conn := serve(t, opts)
	var logs testkit.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, []gateway.Backend{{Name: "estate", Address: conn.Target(), Conn: conn}},
		&gateway.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})), Catalog: gateway.CatalogOptions{
			Refresh: -1,
		},
			Search: gateway.SearchOptions{
				ToolMode: gateway.ToolModeTyped,
			}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
	})
	return g, &logs
}

func lroTool(t *testing.T, g *gateway.Gateway, name string) mcp.Tool {
	t.Helper()
	for _, tl := range g.Tools().Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return mcp.Tool{}
}

// post sends one request through c and decodes its answer into v.
func post(ctx context.Context, t *testing.T, c *testkit.Client, req string, v any) {
	t.Helper()
	r, err := c.Post(ctx, []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(r.Message()), v); err != nil || strings.Contains(r.Message(), `"error"`) {
		t.Fatalf("%s: %v: %d %s", req, err, r.Status, r.Body)
	}
}

func callJSON(t *testing.T, g *gateway.Gateway, name, args string) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := g.CallTool(ctx, &mcp.CallToolRequest{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		if err := json.Unmarshal(res.StructuredContent, &sc); err != nil {
			t.Fatal(err)
		}
	}
	return res, sc
}

func TestComputeOperations(t *testing.T) {
	var mu sync.Mutex
	var polls []string // project/zone/operation of each ZoneOperations call
	steps := 0
	poll := func(project, zone, op string) (proto.Message, error) {
		mu.Lock()
		defer mu.Unlock()
		polls = append(polls, project+"/"+zone+"/"+op)
		steps++
		if steps < 2 {
			return &computepb.Operation{Name: proto.String(op), Status: computepb.Operation_RUNNING.Enum(), Progress: proto.Int32(50)}, nil
		}
		return &computepb.Operation{Name: proto.String(op), Status: computepb.Operation_DONE.Enum(), Progress: proto.Int32(100),
			TargetLink: proto.String("projects/" + project + "/zones/" + zone + "/instances/vm-1")}, nil
	}
	g, logs := lroGateway(t, &estate.Options{
		Services: []protoreflect.FullName{"google.cloud.compute.v1.Instances", "google.cloud.compute.v1.ZoneOperations"},
		Unary: map[string]estate.UnaryHandler{
			"/google.cloud.compute.v1.Instances/Insert": func(_ context.Context, req proto.Message) (proto.Message, error) {
				r := req.(*computepb.InsertInstanceRequest)
				return &computepb.Operation{Name: proto.String("operation-1"), Status: computepb.Operation_PENDING.Enum(), Zone: proto.String(r.GetZone())}, nil
			},
			"/google.cloud.compute.v1.ZoneOperations/Get": func(_ context.Context, req proto.Message) (proto.Message, error) {
				r := req.(*computepb.GetZoneOperationRequest)
				return poll(r.GetProject(), r.GetZone(), r.GetOperation())
			},
			"/google.cloud.compute.v1.ZoneOperations/Wait": func(_ context.Context, req proto.Message) (proto.Message, error) {
				r := req.(*computepb.WaitZoneOperationRequest)
				return poll(r.GetProject(), r.GetZone(), r.GetOperation())
			},
		},
	})
	ins := lroTool(t, g, "Instances_Insert")
	if !strings.Contains(ins.Description, "This is a long-running operation") || !strings.Contains(ins.Description, "ZoneOperations_Get") {
		t.Errorf("Instances_Insert description: %s", ins.Description)
	}
	res, sc := callJSON(t, g, "Instances_Insert", `{"project":"p1","zone":"us-central1-a","instanceResource":{"name":"vm-1"}}`)
	if res.IsError || sc["status"] != "DONE" || sc["targetLink"] != "projects/p1/zones/us-central1-a/instances/vm-1" {
		t.Fatalf("Instances_Insert: isError=%v %v %v", res.IsError, res.Content, sc)
	}
	mu.Lock()
	for _, p := range polls {
		if p != "p1/us-central1-a/operation-1" {
			t.Errorf("poll %s: the polling request must carry the request's project and zone and the operation's name", p)
		}
	}
	mu.Unlock()
	if strings.Contains(logs.String(), "operation_service") {
		t.Errorf("warnings about the Compute annotations:\n%s", logs)
	}
}

func TestVertexOperations(t *testing.T) {
	created := timestamppb.New(time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC))
	meta, _ := anypb.New(&aiplatformpb.CreateDatasetOperationMetadata{GenericMetadata: &aiplatformpb.GenericOperationMetadata{CreateTime: created, UpdateTime: created}})
	resp, _ := anypb.New(&aiplatformpb.Dataset{Name: "projects/p/locations/l/datasets/7", DisplayName: "flowers"})
	var mu sync.Mutex
	polls := 0
	poll := func(name string) *longrunningpb.Operation {
		mu.Lock()
		defer mu.Unlock()
		polls++
		op := &longrunningpb.Operation{Name: name, Metadata: meta}
		if polls >= 2 {
			op.Done, op.Result = true, &longrunningpb.Operation_Response{Response: resp}
		}
		return op
	}
	g, logs := lroGateway(t, &estate.Options{
		Services: []protoreflect.FullName{"google.cloud.aiplatform.v1.DatasetService", "google.longrunning.Operations"},
		Unary: map[string]estate.UnaryHandler{
			"/google.cloud.aiplatform.v1.DatasetService/CreateDataset": func(context.Context, proto.Message) (proto.Message, error) {
				return &longrunningpb.Operation{Name: "projects/p/locations/l/operations/42", Metadata: meta}, nil
			},
			"/google.longrunning.Operations/GetOperation": func(_ context.Context, req proto.Message) (proto.Message, error) {
				return poll(req.(*longrunningpb.GetOperationRequest).GetName()), nil
			},
			"/google.longrunning.Operations/WaitOperation": func(_ context.Context, req proto.Message) (proto.Message, error) {
				return poll(req.(*longrunningpb.WaitOperationRequest).GetName()), nil
			},
		},
	})
	create := lroTool(t, g, "DatasetService_CreateDataset")
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(create.OutputSchema, &out); err != nil {
		t.Fatal(err)
	}
	if out.Properties["displayName"] == nil || out.Properties["operation"] == nil || create.TaskSupport != mcp.TaskSupportOptional {
		t.Errorf("CreateDataset: output schema %s, task support %q", create.OutputSchema, create.TaskSupport)
	}
	res, sc := callJSON(t, g, "DatasetService_CreateDataset", `{"parent":"projects/p/locations/l","dataset":{"displayName":"flowers","metadataSchemaUri":"gs://s","metadata":{"source":"test"}}}`)
	if res.IsError || sc["displayName"] != "flowers" {
		t.Fatalf("CreateDataset: isError=%v %v %v", res.IsError, res.Content, sc)
	}
	// A task's timestamps come from the metadata's generic_metadata, as
	// a client reads them: started and polled over the MCP endpoint.
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &testkit.Client{URL: srv.URL + "/mcp"}
	if err := c.Initialize(ctx, "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	var started struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	post(ctx, t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"DatasetService_CreateDataset","task":{},
		"arguments":{"parent":"projects/p/locations/l","dataset":{"displayName":"flowers","metadataSchemaUri":"gs://s","metadata":{"source":"test"}}}}}`, &started)
	if started.Result.Task.TaskID == "" {
		t.Fatal("CreateDataset as a task: no task id")
	}
	var task struct {
		Result struct {
			Status    string    `json:"status"`
			CreatedAt time.Time `json:"createdAt"`
		} `json:"result"`
	}
	id, _ := json.Marshal(started.Result.Task.TaskID)
	post(ctx, t, c, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":`+string(id)+`}}`, &task)
	if !task.Result.CreatedAt.Equal(created.AsTime()) || task.Result.Status != string(mcp.TaskCompleted) {
		t.Errorf("task %+v, want created at %s and completed", task.Result, created.AsTime())
	}
	if strings.Contains(logs.String(), "operation_info") {
		t.Errorf("warnings about operation_info:\n%s", logs)
	}
}

// TestEstateOperationCounts counts the long-running tools of the whole
// estate, with google.longrunning.Operations served: every method that
// returns an operation and says how to follow it becomes one, and none is
// left with a warning.
func TestEstateOperationCounts(t *testing.T) {
	g, logs := lroGateway(t, &estate.Options{Services: append(estate.ServiceNames(), "google.longrunning.Operations")})
	var aip151, custom int
	for _, tl := range g.Tools().Tools() {
		if !strings.Contains(tl.Description, "This is a long-running operation") {
			continue
		}
		if tl.TaskSupport != "" {
			aip151++
		} else {
			custom++
		}
	}
	t.Logf("long-running tools: %d AIP-151 (operation_info), %d Compute Engine style (operation_service)", aip151, custom)
	// The figures README.md reports, for the pinned module versions.
	if aip151 != 129 || custom != 503 {
		t.Errorf("got %d AIP-151 and %d custom long-running tools, want 129 and 503 (README.md reports them)", aip151, custom)
	}
	if s := logs.String(); strings.Contains(s, "operation_info") || strings.Contains(s, "operation_service") {
		t.Errorf("warnings about operation annotations:\n%s", s)
	}
}
