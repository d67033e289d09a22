package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// streamZoo is the demo zoo whose streaming methods misbehave on cue (the
// first message's animal id), for what the real zoo never does: fail
// mid-stream, stream without end, hang until cancelled, answer before
// reading its input. Any other call is the real zoo's.
type streamZoo struct {
	*zoo.Server
	started chan string // a "block" call is waiting for its context
}

const (
	cueFail  = "fail"  // WatchFeedings: 3 messages, then UNAVAILABLE with details
	cueBlock = "block" // any kind: a message or two, then wait for ctx
	cueMany  = "many"  // WatchFeedings: count small messages, no upper bound
	cueBig   = "big"   // WatchFeedings: count messages of about 1 KB
	cueFlood = "flood" // ChatWithKeeper: floodReplies replies before reading on
	cueEarly = "early" // ChatWithKeeper: one reply, then end without reading on
)

const floodReplies = 300

func (s *streamZoo) WatchFeedings(req *zoov1.WatchFeedingsRequest, stream grpc.ServerStreamingServer[zoov1.WatchFeedingsResponse]) error {
	send := func(seq int32, ration string) error {
		return stream.Send(&zoov1.WatchFeedingsResponse{Feeding: &zoov1.Feeding{
			AnimalId: req.GetAnimalId(), Sequence: seq, Food: &zoov1.Feeding_Ration{Ration: ration}}})
	}
	switch req.GetAnimalId() {
	case cueFail:
		for i := range int32(3) {
			if err := send(i+1, "meat"); err != nil {
				return err
			}
		}
		st, _ := status.New(codes.Unavailable, "feeder offline").WithDetails(
			&errdetails.ErrorInfo{Reason: "FEEDER_OFFLINE", Domain: "zoo.example.com"},
			&errdetails.RetryInfo{RetryDelay: durationpb.New(2 * time.Second)})
		return st.Err()
	case cueBlock:
		for i := range int32(2) {
			if err := send(i+1, "meat"); err != nil {
				return err
			}
		}
		s.started <- "WatchFeedings"
		<-stream.Context().Done()
		return stream.Context().Err()
	case cueMany:
		// As small as a message gets: {"feeding":{"sequence":N}}.
		for i := range req.GetCount() {
			if err := stream.Send(&zoov1.WatchFeedingsResponse{Feeding: &zoov1.Feeding{Sequence: i + 1}}); err != nil {
				return err
			}
		}
		return nil
	case cueBig:
		ration := strings.Repeat("x", 1000)
		for i := range req.GetCount() {
			if err := send(i+1, ration); err != nil {
				return err
			}
		}
		return nil
	}
	return s.Server.WatchFeedings(req, stream)
}

func (s *streamZoo) RecordObservations(stream grpc.ClientStreamingServer[zoov1.RecordObservationsRequest, zoov1.RecordObservationsResponse]) error {
	first, err := stream.Recv()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if first.GetObservation().GetAnimalId() == cueBlock {
		s.started <- "RecordObservations"
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return s.Server.RecordObservations(&peeked[zoov1.RecordObservationsRequest, zoov1.RecordObservationsResponse]{stream, first, err})
}

func (s *streamZoo) ChatWithKeeper(stream grpc.BidiStreamingServer[zoov1.ChatWithKeeperRequest, zoov1.ChatWithKeeperResponse]) error {
	first, err := stream.Recv()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	answer := func(s string) error { return stream.Send(&zoov1.ChatWithKeeperResponse{Answer: s}) }
	switch first.GetAnimalId() {
	case cueBlock:
		if err := answer("hold on"); err != nil {
			return err
		}
		s.started <- "ChatWithKeeper"
		<-stream.Context().Done()
		return stream.Context().Err()
	case cueEarly:
		return answer("bye")
	case cueFlood:
		// Far more than the flow-control windows, in both directions: a
		// caller that sends everything before reading would wait on this
		// server, which waits on it.
		pad := strings.Repeat("y", 4000)
		for i := range floodReplies {
			if err := answer(fmt.Sprintf("flood %d %s", i, pad)); err != nil {
				return err
			}
		}
		for {
			req, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := answer("echo " + req.GetQuestion()[:min(len(req.GetQuestion()), 8)]); err != nil {
				return err
			}
		}
	}
	return s.Server.ChatWithKeeper(&peeked[zoov1.ChatWithKeeperRequest, zoov1.ChatWithKeeperResponse]{stream, first, err})
}

// peeked gives back the message a cue check has already received.
type peeked[Req, Resp any] struct {
	grpc.ServerStream
	first *Req
	err   error
}

func (p *peeked[Req, Resp]) Recv() (*Req, error) {
	if p.first != nil || p.err != nil {
		m, err := p.first, p.err
		p.first, p.err = nil, nil
		return m, err
	}
	m := new(Req)
	if err := p.ServerStream.RecvMsg(m); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *peeked[Req, Resp]) Send(m *Resp) error         { return p.ServerStream.SendMsg(m) }
func (p *peeked[Req, Resp]) SendAndClose(m *Resp) error { return p.ServerStream.SendMsg(m) }

// streamBackend serves streamZoo with reflection; a stream interceptor
// records how each streaming call ended at the backend.
type streamBackend struct {
	addr  string
	zoo   *streamZoo
	ended chan endedCall
}

type endedCall struct {
	method string // zoo.v1.ZooService method name
	ctxErr error  // the backend's ctx.Err() when the handler returned
}

func startStreamBackend(t testing.TB) *streamBackend {
	t.Helper()
	b := &streamBackend{
		zoo:   &streamZoo{Server: zoo.NewServer(), started: make(chan string, 16)},
		ended: make(chan endedCall, 1024),
	}
	record := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		err := next(srv, ss)
		if !strings.HasPrefix(info.FullMethod, "/zoo.v1.ZooService/") {
			return err // reflection
		}
		ctxErr := ss.Context().Err()
		if err != nil && ctxErr == nil {
			// grpc-go marks a stream the client reset as done, which fails
			// the handler's Send, an instant before it cancels the stream's
			// context: give the cancellation a moment to land, so that a
			// Send failed by the client's cancel is recorded as the cancel.
			select {
			case <-ss.Context().Done():
				ctxErr = ss.Context().Err()
			case <-time.After(time.Second):
			}
		}
		select {
		case b.ended <- endedCall{info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:], ctxErr}:
		default: // nobody is looking
		}
		return err
	}
	gs := grpc.NewServer(grpc.StreamInterceptor(record))
	zoov1.RegisterZooServiceServer(gs, b.zoo)
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// waitEnded returns how the backend saw the next call of method end.
func (b *streamBackend) waitEnded(t *testing.T, method string) error {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-b.ended:
			if e.method == method {
				return e.ctxErr
			}
		case <-deadline:
			t.Fatalf("%s never ended at the backend", method)
		}
	}
}

// streamGateway fronts a fresh streamBackend over a real loopback HTTP
// server.
type streamGateway struct {
	backend *streamBackend
	gw      *gateway.Gateway
	url     string
}

// startStreamGateway starts a stream backend and a gateway in front of it.
// Its tests are of plain streams unless they set opts.Calls.Watch: the zoo's
// WatchFeedings is a watch by its name, whose call would end at the
// default window (10 s) however many messages the test asked for, and a
// loaded machine may not deliver them all by then.
func startStreamGateway(t testing.TB, opts *gateway.Options) *streamGateway {
	t.Helper()
	if opts == nil {
		opts = &gateway.Options{}
	}
	if opts.Calls.Watch.Window == 0 && opts.Calls.Watch.MaxWindow == 0 && opts.Calls.Watch.Methods == nil {
		o := *opts
		o.Calls.Watch.IgnoreNames = true
		opts = &o
	}
	b := startStreamBackend(t)
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "stream-zoo", b.addr)}, opts)
	return &streamGateway{backend: b, gw: g, url: base + "/mcp"}
}

// transport connects the reference client to a gateway one way. The list
// grows with the gateway's transports (WebSocket next); every streaming
// test runs over each.
type transport struct {
	name    string
	connect func(t *testing.T, sg *streamGateway, copts *sdk.ClientOptions) *sdk.ClientSession
}

var streamTransports = []transport{
	{"streamable-http/2025-11-25", httpTransport("2025-11-25")},
	{"streamable-http/2026-07-28", httpTransport("2026-07-28")},
	{"stdio", stdioTransport},
	{"websocket/2025-11-25", wsTransport("2025-11-25")},
}

// wsTransport drives /ws with the reference client through gorilla's
// WebSocket client.
func wsTransport(version string) func(*testing.T, *streamGateway, *sdk.ClientOptions) *sdk.ClientSession {
	return func(t *testing.T, sg *streamGateway, copts *sdk.ClientOptions) *sdk.ClientSession {
		t.Helper()
		client := sdk.NewClient(&sdk.Implementation{Name: "stream-test", Version: "1"}, copts)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		url := "ws" + strings.TrimPrefix(strings.TrimSuffix(sg.url, "/mcp"), "http") + "/ws"
		cs, err := client.Connect(ctx, &testkit.WebSocketTransport{URL: url}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
}

func httpTransport(version string) func(*testing.T, *streamGateway, *sdk.ClientOptions) *sdk.ClientSession {
	return func(t *testing.T, sg *streamGateway, copts *sdk.ClientOptions) *sdk.ClientSession {
		t.Helper()
		client := sdk.NewClient(&sdk.Implementation{Name: "stream-test", Version: "1"}, copts)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: sg.url, MaxRetries: -1},
			&sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
}

// stdioTransport serves the gateway's stdio loop in process over pipes:
// the same code the --stdio binary runs (cmd/gateway tests the binary).
func stdioTransport(t *testing.T, sg *streamGateway, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sg.gw.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "stream-test", Version: "1"}, copts)
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	cs, err := client.Connect(cctx, &sdk.IOTransport{Reader: outR, Writer: inW}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		inW.Close()
		cancel()
		inR.Close()
		<-done
	})
	return cs
}

// progressCounter counts notifications/progress per progress token.
type progressCounter struct {
	mu    sync.Mutex
	count map[string]int
	last  map[string]*sdk.ProgressNotificationParams
	// viaCallTool sends settle's sentinel call through call_tool, for a
	// gateway in search mode, where the typed tool is not listed.
	viaCallTool bool
	sentinels   int
}

func newProgressCounter() *progressCounter {
	return &progressCounter{count: map[string]int{}, last: map[string]*sdk.ProgressNotificationParams{}}
}

func (p *progressCounter) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		p.mu.Lock()
		defer p.mu.Unlock()
		tok := fmt.Sprint(req.Params.ProgressToken)
		p.count[tok]++
		p.last[tok] = req.Params
	}}
}

// settled returns the notifications counted for tok once every one the
// gateway sent on cs before now has been handled. The reference client
// hands a call's result to the caller as soon as it is read but queues
// notifications for one handler goroutine, in arrival order, so the
// notifications that preceded a result may not have been counted when
// CallTool returns. settled makes one more call whose single progress
// notification (on a sentinel token) queues behind all of them, and waits
// for that one: then nothing the earlier calls sent is still in flight,
// and a count above the expected one is an extra notification, not a
// late one.
func (p *progressCounter) settled(t *testing.T, cs *sdk.ClientSession, tok string) (int, *sdk.ProgressNotificationParams) {
	t.Helper()
	p.mu.Lock()
	p.sentinels++
	sentinel := fmt.Sprintf("sentinel-%d", p.sentinels)
	p.mu.Unlock()
	// A one-message client stream: one progress notification, and not a
	// WatchFeedings call, whose end at the backend the tests count.
	name, args := "ZooService_RecordObservations", any(map[string]any{"requests": []any{
		map[string]any{"observation": map[string]any{"animalId": "leo", "activityLevel": 1}}}})
	if p.viaCallTool {
		name, args = gateway.CallToolName, viaCallTool(name, args)
	}
	if res := callWithProgress(t, cs, name, sentinel, args); res.IsError {
		t.Fatalf("sentinel call: %s", text(t, res))
	}
	testkit.WaitFor(t, "the sentinel call's progress notification", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.count[sentinel] > 0
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[tok], p.last[tok]
}

func callWithProgress(t *testing.T, cs *sdk.ClientSession, name, token string, args any) *sdk.CallToolResult {
	t.Helper()
	// No deadline of its own: 100,000 messages under -race on a loaded
	// machine take what they take, and a hang ends at go test's -timeout
	// with every goroutine's stack, which says more than a deadline would.
	ctx := t.Context()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// streamResult is structuredContent of a streaming tool, checked against
// the tool's outputSchema and the JSON text block.
type streamResult struct {
	Messages  []map[string]any `json:"messages"`
	Truncated []cutRecord      `json:"truncated"`
	Error     string           `json:"error"`
}

// cutRecord is one entry of "truncated".
type cutRecord struct {
	Path   string `json:"path"`
	Kept   int    `json:"kept"`
	Total  *int   `json:"total"`
	Unit   string `json:"unit"`
	Reason string `json:"reason"`
}

// limited reports whether a stream limit stopped the stream: its entry is
// the one for "messages" with a reason and no total.
func (r streamResult) limited() bool { return r.limit() != nil }

func (r streamResult) limit() *cutRecord {
	for i, c := range r.Truncated {
		if c.Path == "messages" && c.Total == nil && c.Reason != "" {
			return &r.Truncated[i]
		}
	}
	return nil
}

func (r streamResult) reason() string {
	if c := r.limit(); c != nil {
		return c.Reason
	}
	return ""
}

func checkStreamResult(t *testing.T, sg *streamGateway, tool string, res *sdk.CallToolResult) streamResult {
	t.Helper()
	js, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("%s: no structuredContent: %v", tool, err)
	}
	// The JSON block is the last text block that holds JSON: a cut result
	// adds a sentence and a resource link after it.
	var jsonBlock string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok && strings.HasPrefix(tc.Text, "{") {
			jsonBlock = tc.Text
		}
	}
	var a, b any
	_ = json.Unmarshal(js, &a)
	if err := json.Unmarshal([]byte(jsonBlock), &b); err != nil {
		t.Fatalf("%s: last text block is not JSON: %v", tool, err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("%s: text block and structuredContent differ", tool)
	}
	validateOutput(t, sg, tool, js)
	var r streamResult
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func validateOutput(t *testing.T, sg *streamGateway, tool string, js []byte) {
	t.Helper()
	for _, def := range sg.gw.Tools().Tools() {
		if def.Name != tool {
			continue
		}
		s, err := compileSchema(def.OutputSchema)
		if err != nil {
			t.Fatalf("%s outputSchema: %v", tool, err)
		}
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: structuredContent does not validate against outputSchema: %v", tool, err)
		}
		return
	}
	t.Fatalf("no tool %s", tool)
}

// TestStreamingKinds calls each streaming kind on the real zoo over every
// transport, with progress notifications counted by the reference client.
func TestStreamingKinds(t *testing.T) {
	sg := startStreamGateway(t, nil)
	for _, tr := range streamTransports {
		t.Run(tr.name, func(t *testing.T) {
			pc := newProgressCounter()
			cs := tr.connect(t, sg, pc.options())

			t.Run("server", func(t *testing.T) {
				res := callWithProgress(t, cs, "ZooService_WatchFeedings", "watch", map[string]any{"animalId": "leo", "count": 4, "interval": "0s"})
				if res.IsError {
					t.Fatalf("isError: %s", text(t, res))
				}
				r := checkStreamResult(t, sg, "ZooService_WatchFeedings", res)
				if len(r.Messages) != 4 || r.limited() {
					t.Fatalf("want 4 messages, not truncated: %+v", r)
				}
				for i, m := range r.Messages {
					f := m["feeding"].(map[string]any)
					if f["sequence"] != float64(i+1) || f["animalId"] != "leo" {
						t.Errorf("message %d out of order or wrong: %v", i, m)
					}
				}
				n, last := pc.settled(t, cs, "watch")
				if n != 4 || last.Progress != 4 {
					t.Errorf("progress notifications: %d (last %+v), want 4", n, last)
				}
				if last != nil && last.Message != "message 4 (zoo.v1.WatchFeedingsResponse)" {
					t.Errorf("progress message %q", last.Message)
				}
			})

			t.Run("client", func(t *testing.T) {
				obs := func(id string, level int) map[string]any {
					return map[string]any{"observation": map[string]any{"animalId": id, "activityLevel": level}}
				}
				res := callWithProgress(t, cs, "ZooService_RecordObservations", "record",
					map[string]any{"requests": []any{obs("leo", 4), obs("leo", 6), obs("leo", 8)}})
				if res.IsError {
					t.Fatalf("isError: %s", text(t, res))
				}
				sc := res.StructuredContent.(map[string]any)
				if sc["recordedCount"] != float64(3) || sc["meanActivityLevel"] != float64(6) {
					t.Errorf("RecordObservations: %v", sc)
				}
				validateOutput(t, sg, "ZooService_RecordObservations", []byte(text(t, res)))
				if n, last := pc.settled(t, cs, "record"); n != 3 || last.Total != 3 {
					t.Errorf("progress notifications: %d (last %+v), want 3 of total 3", n, last)
				}
				// A single object is a one-element stream.
				res = callWithProgress(t, cs, "ZooService_RecordObservations", "", map[string]any{"requests": obs("leo", 1)})
				if sc, _ := res.StructuredContent.(map[string]any); res.IsError || sc["recordedCount"] != float64(1) {
					t.Errorf("single object: %v %s", res.IsError, text(t, res))
				}
				// A backend error on the second message: the status, and how far the sending got.
				res = callWithProgress(t, cs, "ZooService_RecordObservations", "",
					map[string]any{"requests": []any{obs("leo", 1), obs("nobody", 1), obs("leo", 1)}})
				if msg := text(t, res); !res.IsError || !strings.HasPrefix(msg, "NOT_FOUND: ") {
					t.Errorf("unknown animal: %v %s", res.IsError, msg)
				}
			})

			t.Run("bidi", func(t *testing.T) {
				res := callWithProgress(t, cs, "ZooService_ChatWithKeeper", "chat", map[string]any{"requests": []any{
					map[string]any{"animalId": "leo", "question": "what does he eat?"},
					map[string]any{"animalId": "leo", "question": "where is he?"},
					map[string]any{"animalId": "nobody", "question": "hello?"},
				}})
				if res.IsError {
					t.Fatalf("isError: %s", text(t, res))
				}
				r := checkStreamResult(t, sg, "ZooService_ChatWithKeeper", res)
				if len(r.Messages) != 3 {
					t.Fatalf("want 3 replies: %+v", r)
				}
				for i, want := range []string{"gets meat", "lives in", `anyone called "nobody"`} {
					if a, _ := r.Messages[i]["answer"].(string); !strings.Contains(a, want) {
						t.Errorf("reply %d %q, want it to contain %q", i, a, want)
					}
				}
				if n, _ := pc.settled(t, cs, "chat"); n != 3 {
					t.Errorf("progress notifications: %d, want 3", n)
				}
				// No progress token, no notifications.
				callWithProgress(t, cs, "ZooService_ChatWithKeeper", "", map[string]any{"requests": []any{}})
			})
		})
	}
}

func TestStreamingSchemas(t *testing.T) {
	sg := startStreamGateway(t, nil)
	tools := map[string]gatewayTool{}
	for _, def := range sg.gw.Tools().Tools() {
		tools[def.Name] = gatewayTool{def.InputSchema, def.OutputSchema, def.Description}
	}
	has := func(name, which string, s json.RawMessage, props ...string) {
		var doc struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s, &doc); err != nil || doc.Type != "object" {
			t.Fatalf("%s %s: %v %s", name, which, err, s)
		}
		for _, p := range props {
			if doc.Properties[p] == nil {
				t.Errorf("%s %s: no property %q", name, which, p)
			}
		}
	}
	has("WatchFeedings", "output", tools["ZooService_WatchFeedings"].output, "messages", "truncated", "error")
	has("WatchFeedings", "input", tools["ZooService_WatchFeedings"].input, "animalId", "count", "interval")
	has("RecordObservations", "input", tools["ZooService_RecordObservations"].input, "requests")
	has("RecordObservations", "output", tools["ZooService_RecordObservations"].output, "recordedCount")
	has("ChatWithKeeper", "input", tools["ZooService_ChatWithKeeper"].input, "requests")
	has("ChatWithKeeper", "output", tools["ZooService_ChatWithKeeper"].output, "messages")
	if d := tools["ZooService_ChatWithKeeper"].desc; !strings.Contains(d, "Bidirectional streaming") {
		t.Errorf("ChatWithKeeper description does not explain the stream: %q", d)
	}
	for name, tl := range tools {
		for which, s := range map[string]json.RawMessage{"input": tl.input, "output": tl.output} {
			if _, err := compileSchema(s); err != nil {
				t.Errorf("%s %s: %v", name, which, err)
			}
			if p := schema.Lint(s); len(p) > 0 {
				t.Errorf("%s %s: %v", name, which, p)
			}
		}
	}
}

type gatewayTool struct {
	input, output json.RawMessage
	desc          string
}

// TestStreamingInputErrors: request messages that do not fit are tool
// errors naming the element, and nothing reaches the backend.
func TestStreamingInputErrors(t *testing.T) {
	sg := startStreamGateway(t, nil)
	cs := httpTransport("2025-11-25")(t, sg, nil)
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"ZooService_RecordObservations", map[string]any{}, "requests: required: an array of zoo.v1.RecordObservationsRequest messages"},
		{"ZooService_RecordObservations", map[string]any{"requests": 5}, "requests: expected an array of objects, got 5"},
		{"ZooService_RecordObservations", map[string]any{"requests": []any{}, "extra": 1}, `extra: unknown field (expected only "requests")`},
		{"ZooService_RecordObservations", map[string]any{"requests": []any{map[string]any{}, map[string]any{"observation": map[string]any{"animalId": 7}}}},
			"requests[1].observation.animalId: expected a string, got 7"},
		{"ZooService_ChatWithKeeper", map[string]any{"requests": []any{"hi"}}, `requests[0]: expected an object, got "hi"`},
		{"ZooService_WatchFeedings", map[string]any{"count": "lots"}, "count: expected an integer"},
	} {
		res := call(t, cs, c.tool, c.args)
		if msg := text(t, res); !res.IsError || !strings.Contains(msg, c.want) {
			t.Errorf("%s %v:\n got %v %q\nwant it to contain %q", c.tool, c.args, res.IsError, msg, c.want)
		}
	}
	select {
	case e := <-sg.backend.ended:
		t.Errorf("a call reached the backend: %+v", e)
	default:
	}
}

// TestStreamFailsMidStream: a non-OK status after some messages is an
// error result with the status (as the unary path writes it) and the
// messages received before it.
func TestStreamFailsMidStream(t *testing.T) {
	sg := startStreamGateway(t, nil)
	for _, tr := range streamTransports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, sg, nil)
			res := callWithProgress(t, cs, "ZooService_WatchFeedings", "", map[string]any{"animalId": cueFail})
			if !res.IsError || len(res.Content) != 2 {
				t.Fatalf("want an error result with two text blocks, got isError=%v, %d blocks", res.IsError, len(res.Content))
			}
			msg := res.Content[0].(*sdk.TextContent).Text
			for _, want := range []string{"UNAVAILABLE: feeder offline", "ErrorInfo: reason=FEEDER_OFFLINE", "retry after 2s", "3 message(s) arrived before the error"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error text %q\ndoes not contain %q", msg, want)
				}
			}
			r := checkStreamResult(t, sg, "ZooService_WatchFeedings", res)
			if len(r.Messages) != 3 || r.Error != "UNAVAILABLE: feeder offline" || r.limited() {
				t.Errorf("structuredContent: %+v", r)
			}
		})
	}
}

// TestStreamLimits: a message or byte limit cancels the stream at the
// backend and returns what was collected, truncated, as a normal result.
func TestStreamLimits(t *testing.T) {
	cases := []struct {
		name       string
		opts       gateway.Options
		tool       string
		args       any
		method     string
		wantMsgs   func(n int) bool
		wantReason string
	}{
		{"server messages", gateway.Options{Calls: gateway.CallOptions{StreamMaxMessages: 5}}, "ZooService_WatchFeedings",
			map[string]any{"animalId": cueMany, "count": 10_000_000}, "WatchFeedings",
			func(n int) bool { return n == 5 }, "message limit: the stream had more than 5 messages, the gateway's message limit; the gateway kept the first 5"},
		{"server bytes", gateway.Options{Calls: gateway.CallOptions{StreamMaxBytes: 10_000}}, "ZooService_WatchFeedings",
			map[string]any{"animalId": cueBig, "count": 100_000}, "WatchFeedings",
			func(n int) bool { return n > 0 && n < 10 }, "byte limit: the next message would take the collected JSON past 10000 bytes"},
		{"bidi messages", gateway.Options{Calls: gateway.CallOptions{StreamMaxMessages: 7}}, "ZooService_ChatWithKeeper",
			map[string]any{"requests": []any{map[string]any{"animalId": cueFlood}}}, "ChatWithKeeper",
			func(n int) bool { return n == 7 }, "message limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sg := startStreamGateway(t, &c.opts)
			cs := httpTransport("2025-11-25")(t, sg, nil)
			res := call(t, cs, c.tool, c.args)
			if res.IsError {
				t.Fatalf("a limit is not an error: %s", text(t, res))
			}
			r := checkStreamResult(t, sg, c.tool, res)
			if !c.wantMsgs(len(r.Messages)) || !r.limited() || !strings.Contains(r.reason(), c.wantReason) {
				t.Errorf("%d messages, truncated=%v, reason %q", len(r.Messages), r.limited(), r.reason())
			}
			if c.opts.Calls.StreamMaxBytes > 0 {
				js, _ := json.Marshal(r.Messages)
				if int64(len(js)) > c.opts.Calls.StreamMaxBytes {
					t.Errorf("collected %d bytes, limit %d", len(js), c.opts.Calls.StreamMaxBytes)
				}
			}
			if err := sg.backend.waitEnded(t, c.method); !errors.Is(err, context.Canceled) {
				t.Errorf("backend saw %v, want the stream cancelled", err)
			}
		})
	}
}

// TestStreamTimeout: --stream-timeout, not --call-timeout, bounds a
// stream; hitting it returns the messages so far as a DEADLINE_EXCEEDED
// error result.
func TestStreamTimeout(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Calls: gateway.CallOptions{Timeout: 50 * time.Millisecond, StreamTimeout: 700 * time.Millisecond}})
	cs := httpTransport("2025-11-25")(t, sg, nil)

	// Longer than the call timeout, shorter than the stream timeout.
	res := call(t, cs, "ZooService_WatchFeedings", map[string]any{"animalId": "leo", "count": 3, "interval": "0.1s"})
	if r := checkStreamResult(t, sg, "ZooService_WatchFeedings", res); res.IsError || len(r.Messages) != 3 {
		t.Errorf("a 200ms stream under a 50ms call timeout: isError=%v %+v", res.IsError, r)
	}
	if err := sg.backend.waitEnded(t, "WatchFeedings"); err != nil {
		t.Errorf("backend saw %v for a complete stream", err)
	}

	start := time.Now()
	res = call(t, cs, "ZooService_WatchFeedings", map[string]any{"animalId": cueBlock})
	if el := time.Since(start); el < 600*time.Millisecond || el > 5*time.Second {
		t.Errorf("returned after %s, want about the stream timeout", el)
	}
	msg := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || !strings.HasPrefix(msg, "DEADLINE_EXCEEDED: ") || !strings.Contains(msg, "stream timeout of 700ms ended the stream") {
		t.Errorf("isError=%v %q", res.IsError, msg)
	}
	r := checkStreamResult(t, sg, "ZooService_WatchFeedings", res)
	if len(r.Messages) != 2 || !strings.HasPrefix(r.Error, "DEADLINE_EXCEEDED") {
		t.Errorf("structuredContent: %+v", r)
	}
	<-sg.backend.zoo.started
	if err := sg.backend.waitEnded(t, "WatchFeedings"); err == nil {
		t.Error("the backend call did not end")
	}
}

// TestStreamCancellation: a client that cancels its call cancels the gRPC
// stream, for every kind over every transport; the backend sees it.
func TestStreamCancellation(t *testing.T) {
	sg := startStreamGateway(t, nil)
	kinds := []struct {
		method string
		args   any
	}{
		{"WatchFeedings", map[string]any{"animalId": cueBlock}},
		{"RecordObservations", map[string]any{"requests": []any{map[string]any{"observation": map[string]any{"animalId": cueBlock}}}}},
		{"ChatWithKeeper", map[string]any{"requests": []any{map[string]any{"animalId": cueBlock}}}},
	}
	for _, tr := range streamTransports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, sg, nil)
			for _, k := range kinds {
				t.Run(k.method, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					errc := make(chan error, 1)
					go func() {
						_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_" + k.method, Arguments: k.args})
						errc <- err
					}()
					select {
					case m := <-sg.backend.zoo.started:
						if m != k.method {
							t.Fatalf("%s started, want %s", m, k.method)
						}
					case <-time.After(10 * time.Second):
						t.Fatal("the call never reached the backend")
					}
					cancel()
					if err := sg.backend.waitEnded(t, k.method); !errors.Is(err, context.Canceled) {
						t.Errorf("backend saw %v, want canceled", err)
					}
					if err := <-errc; err == nil {
						t.Error("cancelled call returned no error")
					}
				})
			}
		})
	}
}

// TestBidiAnswersBeforeReading: a backend that floods replies before it
// reads on (more than the flow-control windows hold, both ways) completes,
// and one that ends after its first reply ends the call cleanly.
func TestBidiAnswersBeforeReading(t *testing.T) {
	sg := startStreamGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: -1}}) // every reply, whatever their size
	cs := httpTransport("2025-11-25")(t, sg, nil)

	const inputs = 300
	reqs := []any{map[string]any{"animalId": cueFlood}}
	pad := strings.Repeat("q", 4000)
	for i := range inputs {
		reqs = append(reqs, map[string]any{"animalId": "leo", "question": fmt.Sprintf("%08d%s", i, pad)})
	}
	// A deadlock ends at go test's -timeout, with every goroutine's stack.
	raw, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "ZooService_ChatWithKeeper", Arguments: map[string]any{"requests": reqs}})
	if err != nil {
		t.Fatalf("flood: %v", err)
	}
	r := checkStreamResult(t, sg, "ZooService_ChatWithKeeper", raw)
	if raw.IsError || r.limited() || len(r.Messages) != floodReplies+inputs {
		t.Fatalf("isError=%v truncated=%v %d replies, want %d", raw.IsError, r.limited(), len(r.Messages), floodReplies+inputs)
	}
	for i := range inputs {
		if got, want := r.Messages[floodReplies+i]["answer"], fmt.Sprintf("echo %08d", i); got != want {
			t.Fatalf("reply %d: %v, want %s (in order)", floodReplies+i, got, want)
		}
	}

	res := call(t, cs, "ZooService_ChatWithKeeper", map[string]any{"requests": append([]any{map[string]any{"animalId": cueEarly}}, reqs[1:]...)})
	r = checkStreamResult(t, sg, "ZooService_ChatWithKeeper", res)
	if res.IsError || len(r.Messages) != 1 || r.Messages[0]["answer"] != "bye" {
		t.Errorf("early end: isError=%v %+v", res.IsError, r)
	}
}

// TestStream100kMessages collects a stream of 100,000 small messages: all
// of them when the limits allow, the first StreamMaxMessages (default
// 10,000) otherwise.
func TestStream100kMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 messages")
	}
	for _, c := range []struct {
		name string
		opts *gateway.Options
		want int
	}{
		{"all", &gateway.Options{Calls: gateway.CallOptions{StreamMaxMessages: 100_000}, Results: gateway.ResultOptions{MaxBytes: -1}}, 100_000},
		{"default stream limits", &gateway.Options{Results: gateway.ResultOptions{MaxBytes: -1}}, gateway.DefaultStreamMaxMessages},
	} {
		t.Run(c.name, func(t *testing.T) {
			sg := startStreamGateway(t, c.opts)
			cs := httpTransport("2026-07-28")(t, sg, nil)
			res := callWithProgress(t, cs, "ZooService_WatchFeedings", "", map[string]any{"animalId": cueMany, "count": 100_000})
			var r streamResult
			js, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(js, &r); err != nil || res.IsError {
				t.Fatalf("isError=%v %v", res.IsError, err)
			}
			if len(r.Messages) != c.want || r.limited() != (c.want < 100_000) {
				t.Fatalf("%d messages truncated=%v, want %d", len(r.Messages), r.limited(), c.want)
			}
			for i, m := range r.Messages {
				if m["feeding"].(map[string]any)["sequence"] != float64(i+1) {
					t.Fatalf("message %d out of order: %v", i, m)
				}
			}
		})
	}
}

// TestStreamMemoryBounded: a stream that would be about 100 MB of JSON
// (100,000 messages of 1 KB) is held to StreamMaxBytes: the gateway's
// heap never grows by more than a small multiple of the limit.
func TestStreamMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("large stream")
	}
	const limit = 1 << 20
	sg := startStreamGateway(t, &gateway.Options{Calls: gateway.CallOptions{StreamMaxMessages: 1_000_000, StreamMaxBytes: limit}, Results: gateway.ResultOptions{MaxBytes: -1}})
	cs := httpTransport("2026-07-28")(t, sg, nil)

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()
	res := call(t, cs, "ZooService_WatchFeedings", map[string]any{"animalId": cueBig, "count": 100_000})
	close(stop)
	<-sampled

	r := checkStreamResult(t, sg, "ZooService_WatchFeedings", res)
	if !r.limited() || !strings.HasPrefix(r.reason(), "byte limit") || len(r.Messages) > limit/1000 {
		t.Errorf("%d messages, truncated=%v %q", len(r.Messages), r.limited(), r.reason())
	}
	growth := int64(peak.Load()) - int64(base)
	t.Logf("heap growth %.1f MiB for a %d MiB limit (the whole stream is ~100 MB of JSON)", float64(growth)/(1<<20), limit>>20)
	// The result is the collected JSON twice plus its encoding, and the
	// client in this process decodes it; gRPC buffers are a few windows.
	// Unbounded, the stream alone would be ~100 MB (measured: 10 MiB of
	// growth, 17 MiB under -race).
	if growth > 40<<20 {
		t.Errorf("heap grew by %d MiB, want it bounded by the limit", growth>>20)
	}
	if err := sg.backend.waitEnded(t, "WatchFeedings"); !errors.Is(err, context.Canceled) {
		t.Errorf("backend saw %v, want the stream cancelled at the limit", err)
	}
}
