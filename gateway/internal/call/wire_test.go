package call_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestUnaryWirePath calls the zoo through the gateway's MCP endpoint: the
// arguments of a tool whose type allows it go to the backend converted
// straight to wire form, the same message the dynamic path would send;
// arguments that path declines, and tools whose type it does not take,
// still go the dynamic way and work.
func TestUnaryWirePath(t *testing.T) {
	var mu sync.Mutex
	var got []proto.Message // what the backend received
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		mu.Lock()
		got = append(got, proto.Clone(req.(proto.Message)))
		mu.Unlock()
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(record))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	addr := testkit.ServeLoopback(t, gs)
	conn, err := backendconn.Dial(addr, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, []gateway.Backend{{Name: "zoo", Address: addr, Conn: conn}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		srv.Close()
	})

	var wired []string // tools whose request took the wire path
	var wires [][]byte
	defer call.SetWireHook(func(t *compiled.Tool, wire []byte) {
		mu.Lock()
		defer mu.Unlock()
		wired = append(wired, t.Definition.Name)
		wires = append(wires, append([]byte(nil), wire...))
	})()

	cs := testkit.Connect(t, srv.URL+"/mcp", "2025-11-25")
	for _, c := range []struct {
		tool string
		args any
		wire bool
		want proto.Message
	}{
		{"ZooService_GetAnimal", map[string]any{"id": "leo"}, true, &zoov1.GetAnimalRequest{Id: "leo"}},
		// An integer written 5.0 is whole, as protojson reads it.
		{"ZooService_ListAnimals", json.RawMessage(`{"page_size":5.0}`), true, &zoov1.ListAnimalsRequest{PageSize: 5}},
		// Decode takes a list sent as a JSON-encoded string (a leniency
		// for models), which protojson refuses: the wire path leaves it
		// to Decode, and what is wrong (5.5) too, to explain.
		{"ZooService_ListAnimals", json.RawMessage(`{"species":"[\"SPECIES_LION\"]"}`), false,
			&zoov1.ListAnimalsRequest{Species: []zoov1.Species{zoov1.Species_SPECIES_LION}}},
		{"ZooService_ListAnimals", map[string]any{"page_size": 5.5}, false, nil},
		{"ZooService_ListAnimals", map[string]any{"pageSize": 2, "species": []any{"SPECIES_LION"}}, true,
			&zoov1.ListAnimalsRequest{PageSize: 2, Species: []zoov1.Species{zoov1.Species_SPECIES_LION}}},
		{"ZooService_FeedAnimal", map[string]any{"animalId": "leo", "meal": map[string]any{"gramsByItem": map[string]any{"hay": "500", "apple": 2}}}, true,
			&zoov1.FeedAnimalRequest{AnimalId: "leo", Food: &zoov1.FeedAnimalRequest_Meal{Meal: &zoov1.Meal{GramsByItem: map[string]int64{"hay": 500, "apple": 2}}}}},
		// A FieldMask and an Animal holding Timestamps and a Struct: the
		// dynamic path.
		{"ZooService_UpdateAnimal", map[string]any{"animal": map[string]any{"id": "leo", "displayName": "Leo II"}, "updateMask": "displayName"}, false,
			&zoov1.UpdateAnimalRequest{Animal: &zoov1.Animal{Id: "leo", DisplayName: "Leo II"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"display_name"}}}},
	} {
		mu.Lock()
		wired, wires, got = nil, nil, nil
		mu.Unlock()
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		ccancel()
		if err != nil {
			t.Fatalf("%s(%v): %v", c.tool, c.args, err)
		}
		mu.Lock()
		w, ws, g := wired, wires, got
		mu.Unlock()
		if c.want == nil {
			// Declined arguments: Decode explains them, as before.
			if !res.IsError || len(w) != 0 || len(g) != 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, call.InputErrorPrefix) {
				t.Errorf("%s(%v): error %v, wire path %v, backend saw %v; want an input error from the dynamic path", c.tool, c.args, res.IsError, w, g)
			}
			continue
		}
		if res.IsError {
			t.Fatalf("%s(%v): tool error %v", c.tool, c.args, res.Content)
		}
		if c.wire != (len(w) == 1) {
			t.Errorf("%s(%v): wire path taken by %v, want %v", c.tool, c.args, w, c.wire)
		}
		if len(g) != 1 || !proto.Equal(g[0], c.want) {
			t.Errorf("%s(%v): backend received %v, want %v", c.tool, c.args, g, c.want)
		}
		if c.wire && len(ws) == 1 {
			if want, _ := (proto.MarshalOptions{Deterministic: true}).Marshal(c.want); string(ws[0]) != string(want) {
				t.Errorf("%s(%v): wire %x, want %x", c.tool, c.args, ws[0], want)
			}
		}
	}
}
