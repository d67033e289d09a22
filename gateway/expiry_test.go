package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// deadlineBackend is the zoo with a slow method (GetAnimal of "slow"
// waits until its call ends) that records the deadline of every such
// call and of every zoo stream.
type deadlineBackend struct {
	addr      string
	mu        sync.Mutex
	deadlines map[string][]time.Time // by method; zero: none
}

func startDeadlineBackend(t *testing.T) *deadlineBackend {
	t.Helper()
	b := &deadlineBackend{deadlines: map[string][]time.Time{}}
	record := func(ctx context.Context, method string) {
		d, _ := ctx.Deadline()
		b.mu.Lock()
		b.deadlines[method] = append(b.deadlines[method], d)
		b.mu.Unlock()
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if r, ok := req.(*zoov1.GetAnimalRequest); ok && r.GetId() == "slow" {
			record(ctx, info.FullMethod)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return next(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		if strings.HasPrefix(info.FullMethod, "/zoo.") { // not the gateway's reflection
			record(ss.Context(), info.FullMethod)
		}
		return next(srv, ss)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// TestCallsEndWithTheirToken: a call, unary or streaming, ends when its
// caller's token expires (its "exp", not exp plus the 30 s leeway the
// door tolerates), over Streamable HTTP in a session and stateless, over
// legacy SSE and over WebSocket, with an error saying why; and no call
// reaches the backend with a deadline past the token's. Before, a POST's
// call ran to --call-timeout (a stream to --stream-timeout) past it.
func TestCallsEndWithTheirToken(t *testing.T) {
	b := startDeadlineBackend(t)
	is := newTestIssuer(t)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: zooAudience, RequiredScopes: []string{"zoo"},
	}}) // the default leeway, 30 s
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	base := serveGateway(t, b.addr, &gateway.Options{Auth: a, Calls: gateway.CallOptions{Timeout: time.Minute, StreamTimeout: time.Minute}})
	exp := time.Now().Add(6 * time.Second).Truncate(time.Second)
	tok := is.token(t, zooAudience, "zoo", map[string]any{"exp": exp.Unix()})

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	slow := map[string]any{"id": "slow"}
	watch := map[string]any{"count": 1000, "interval": "1s"}
	type outcome struct {
		name, answer string
		at           time.Time
	}
	results := make(chan outcome, 16)
	var wg sync.WaitGroup
	for _, transport := range []string{"streamable", "sse", "websocket"} {
		cs := connectAs(ctx, t, base, transport, tok)
		for tool, args := range map[string]map[string]any{"ZooService_GetAnimal": slow, "ZooService_WatchFeedings": watch} {
			wg.Go(func() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
				answer := fmt.Sprint(err)
				if err == nil {
					answer = fmt.Sprintf("a result (isError %v): %v", res.IsError, res.Content)
				}
				results <- outcome{transport + " " + tool, answer, time.Now()}
			})
		}
	}
	for _, tool := range []string{"ZooService_GetAnimal", "ZooService_WatchFeedings"} {
		args := `{"id":"slow"}`
		if tool == "ZooService_WatchFeedings" {
			args = `{"count":1000,"interval":"1s"}`
		}
		wg.Go(func() {
			raw := &testkit.Client{URL: base + "/mcp", Version: "2026-07-28", Header: testkit.Bearer(tok)}
			answer := ""
			if resp, err := raw.Do(ctx, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`,`+
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("tools/call", tool)); err != nil {
				answer = err.Error()
			} else {
				answer = resp.Body
			}
			results <- outcome{"stateless " + tool, answer, time.Now()}
		})
	}
	wg.Wait()
	close(results)
	n := 0
	for o := range results {
		n++
		if !strings.Contains(o.answer, "the access token has expired") || !strings.Contains(o.answer, "authenticate again") {
			t.Errorf("%s: %.300s; want an error saying the token expired", o.name, o.answer)
		}
		if o.at.Before(exp) {
			t.Errorf("%s ended %s before the token expired", o.name, exp.Sub(o.at))
		}
		if late := o.at.Sub(exp); late > 10*time.Second {
			t.Errorf("%s ended %s after the token expired", o.name, late)
		}
	}
	if n != 8 {
		t.Errorf("%d calls answered, want 8", n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for method, ds := range b.deadlines {
		for _, d := range ds {
			// The deadline travels as a timeout: allow for its trip.
			if d.IsZero() || d.After(exp.Add(time.Second)) {
				t.Errorf("%s reached the backend with deadline %v, past the token's expiry %v", method, d, exp)
			}
		}
	}
	if n := len(b.deadlines["/zoo.v1.ZooService/GetAnimal"]) + len(b.deadlines["/zoo.v1.ZooService/WatchFeedings"]); n != 8 {
		t.Errorf("the backend saw %d calls, want 8", n)
	}
}
