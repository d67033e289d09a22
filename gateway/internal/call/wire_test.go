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
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

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
	r := startWireRig(t)
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
		res, w, ws, g := r.call(t, c.tool, c.args)
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

// wireRig is the zoo behind the gateway, with what the backend received
// (each request message, unary or streamed) and which tools' request
// messages took the wire path, and how they were encoded.
type wireRig struct {
	ctx   context.Context
	cs    *sdk.ClientSession
	mu    sync.Mutex
	got   []proto.Message
	wired []string
	wires [][]byte
}

// call calls tool with args and returns its result, the tools whose
// request messages took the wire path in the call, the wire they took,
// and the request messages the backend received.
func (r *wireRig) call(t *testing.T, tool string, args any) (res *sdk.CallToolResult, wired []string, wires [][]byte, got []proto.Message) {
	t.Helper()
	r.mu.Lock()
	r.wired, r.wires, r.got = nil, nil, nil
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return res, r.wired, r.wires, r.got
}

func startWireRig(t *testing.T) *wireRig {
	r := &wireRig{}
	record := func(m any) {
		r.mu.Lock()
		r.got = append(r.got, proto.Clone(m.(proto.Message)))
		r.mu.Unlock()
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		record(req)
		return next(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		return next(srv, &recordingStream{ServerStream: ss, record: record})
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	addr := testkit.ServeLoopback(t, gs)
	conn, err := backendconn.Dial(addr, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
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
	t.Cleanup(call.SetWireHook(func(t *compiled.Tool, wire []byte) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.wired = append(r.wired, t.Definition.Name)
		r.wires = append(r.wires, append([]byte(nil), wire...))
	}))
	r.ctx, r.cs = ctx, testkit.Connect(t, srv.URL+"/mcp", "2025-11-25")
	return r
}

// recordingStream tells record of each message the backend's handler
// receives on a stream.
type recordingStream struct {
	grpc.ServerStream
	record func(any)
}

func (s *recordingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.record(m)
	}
	return err
}

// TestStreamWirePath: the request messages of server-streaming, client-
// streaming and bidirectional tools take the wire path as a unary call's
// do, message by message; a stream's message that the path declines goes
// the dynamic way beside the others, and the backend receives each as
// the dynamic path would have made it.
func TestStreamWirePath(t *testing.T) {
	r := startWireRig(t)
	obs := func(id string, level int) map[string]any {
		return map[string]any{"observation": map[string]any{"animalId": id, "observeTime": "2026-12-06T10:00:00Z", "activityLevel": level, "measurements": map[string]any{"temperature_c": 38.5}}}
	}
	at := &timestamppb.Timestamp{Seconds: 1796551200}
	wantObs := func(id string, level uint32) proto.Message {
		return &zoov1.RecordObservationsRequest{Observation: &zoov1.Observation{AnimalId: id, ObserveTime: at, ActivityLevel: level, Measurements: map[string]float64{"temperature_c": 38.5}}}
	}
	for _, c := range []struct {
		tool  string
		args  any
		wired int // request messages that took the wire path
		want  []proto.Message
	}{
		{"ZooService_WatchFeedings", map[string]any{"animalId": "leo", "count": 2, "interval": "0.001s"}, 1,
			[]proto.Message{&zoov1.WatchFeedingsRequest{AnimalId: "leo", Count: 2, Interval: durationpb.New(time.Millisecond)}}},
		{"ZooService_RecordObservations", map[string]any{"requests": []any{obs("leo", 7), obs("gerry", 2)}}, 2,
			[]proto.Message{wantObs("leo", 7), wantObs("gerry", 2)}},
		// One message in a JSON-encoded string (a leniency the wire
		// path leaves to the dynamic one), the other not.
		{"ZooService_RecordObservations", map[string]any{"requests": []any{obs("leo", 7), map[string]any{"observation": `{"animalId":"gerry","observeTime":"2026-12-06T10:00:00Z","activityLevel":2,"measurements":{"temperature_c":38.5}}`}}}, 1,
			[]proto.Message{wantObs("leo", 7), wantObs("gerry", 2)}},
		{"ZooService_ChatWithKeeper", map[string]any{"requests": []any{map[string]any{"animalId": "leo", "question": "what does he eat?"}, map[string]any{"animal_id": "leo", "question": "when?"}}}, 2,
			[]proto.Message{&zoov1.ChatWithKeeperRequest{AnimalId: "leo", Question: "what does he eat?"}, &zoov1.ChatWithKeeperRequest{AnimalId: "leo", Question: "when?"}}},
		// A wrong message: nothing is sent, and the error names it.
		{"ZooService_ChatWithKeeper", map[string]any{"requests": []any{map[string]any{"animalId": "leo"}, map[string]any{"animalId": 5}}}, -1, nil},
	} {
		res, wired, wires, got := r.call(t, c.tool, c.args)
		if c.want == nil {
			if !res.IsError || len(got) != 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "requests[1].animalId") {
				t.Errorf("%s(%v): error %v, backend saw %v, content %v; want an input error naming requests[1].animalId", c.tool, c.args, res.IsError, got, res.Content)
			}
			continue
		}
		if res.IsError {
			t.Fatalf("%s(%v): tool error %v", c.tool, c.args, res.Content)
		}
		if len(wired) != c.wired {
			t.Errorf("%s(%v): %d request messages took the wire path (%v), want %d", c.tool, c.args, len(wired), wired, c.wired)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s(%v): backend received %v, want %v", c.tool, c.args, got, c.want)
		}
		for i := range got {
			if !proto.Equal(got[i], c.want[i]) {
				t.Errorf("%s(%v): backend received %v as message %d, want %v", c.tool, c.args, got[i], i, c.want[i])
			}
		}
		for _, w := range wires {
			if !wireOfAny(w, c.want) {
				t.Errorf("%s(%v): wire %x is none of the wanted messages' deterministic encodings", c.tool, c.args, w)
			}
		}
	}
}

// wireOfAny reports whether wire is the deterministic encoding of one of
// msgs.
func wireOfAny(wire []byte, msgs []proto.Message) bool {
	for _, m := range msgs {
		if b, _ := (proto.MarshalOptions{Deterministic: true}).Marshal(m); string(b) == string(wire) {
			return true
		}
	}
	return false
}
