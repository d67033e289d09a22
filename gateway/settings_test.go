package gateway_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestBackendSettings: a backend's own filters, hidden methods and
// deadlines (the config file's per-backend and per-method settings) reach
// its tools, and the most specific deadline wins.
func TestBackendSettings(t *testing.T) {
	b := startBackend(t)
	conn, err := backendconn.Dial(b.addr, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, []gateway.Backend{{
		Name: "zoo", Address: b.addr, Conn: conn,
		Include:     []string{"zoo.v1.ZooService/Get*", "zoo.v1.ZooService/ListAnimals"},
		Exclude:     []string{"*/GetTaxonomy"},
		CallTimeout: time.Minute,
		Metadata:    metadata.Pairs("x-tenant", "acme"),
		Methods: []gateway.MethodSettings{
			{Match: "zoo.v1.ZooService/GetAnimal", CallTimeout: 200 * time.Millisecond},
			{Match: "*/ListAnimals", Hidden: true},
		},
	}}, &gateway.Options{Calls: gateway.CallOptions{Timeout: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = g.Shutdown(sctx)
		srv.Close()
	}()
	cs := connect(t, srv.URL+"/mcp", "2025-11-25")
	names := testkit.ToolNames(t, ctx, cs)
	if want := []string{"ZooService_GetAnimal", "ZooService_GetNextFeedingTime"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	start := time.Now()
	res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "block"})
	if took := time.Since(start); !res.IsError || !strings.HasPrefix(text(t, res), "DEADLINE_EXCEEDED") || took > 5*time.Second {
		t.Errorf("held call: %s after %s, want DEADLINE_EXCEEDED from the 200ms method deadline", text(t, res), took)
	}
	<-b.started
	if err := <-b.ended; err == nil {
		t.Error("the backend call did not end")
	}
}

func TestBackendSettingsErrors(t *testing.T) {
	for name, b := range map[string]gateway.Backend{
		"method pattern": {Methods: []gateway.MethodSettings{{Match: "["}}},
		"include":        {Include: []string{"["}},
		"metadata":       {Metadata: metadata.Pairs("grpc-x", "1")},
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := backendconn.Dial("127.0.0.1:1", backendconn.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			b.Name, b.Address, b.Conn = "zoo", "127.0.0.1:1", conn
			_, err = gateway.New(context.Background(), []gateway.Backend{b}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "backend zoo: ") {
				t.Errorf("error %v, want one naming the backend", err)
			}
		})
	}
}

// deadlineZoo is the zoo with interceptors that record the deadline each
// call arrived with, as time left, by method name: what bounds the call
// is what the backend sees.
type deadlineZoo struct {
	addr string
	mu   sync.Mutex
	left map[string]time.Duration
}

func startDeadlineZoo(t *testing.T) *deadlineZoo {
	t.Helper()
	z := &deadlineZoo{left: map[string]time.Duration{}}
	record := func(ctx context.Context, method string) {
		d, ok := ctx.Deadline()
		if !ok {
			d = time.Time{} // left is then negative: no deadline at all
		}
		z.mu.Lock()
		z.left[method[strings.LastIndexByte(method, '/')+1:]] = time.Until(d)
		z.mu.Unlock()
	}
	gs := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			record(ctx, info.FullMethod)
			return next(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
			record(ss.Context(), info.FullMethod)
			return next(srv, ss)
		}))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	z.addr = testkit.ServeLoopback(t, gs)
	return z
}

// deadlineOf calls tool and returns the deadline its backend call had.
func (z *deadlineZoo) deadlineOf(t *testing.T, cs *sdk.ClientSession, tool, method string, args map[string]any) time.Duration {
	t.Helper()
	if res := call(t, cs, tool, args); res.IsError {
		t.Fatalf("%s: %s", tool, text(t, res))
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.left[method]
}

// TestMethodTimeouts: Options.Calls.MethodTimeouts (--method-timeout) give the
// methods they match their own deadline on every backend, unary and
// streaming; the first entry that matches applies; a setting that names
// the method wins over one for the whole backend, and the backend's own
// entry for the method wins over the gateway's.
func TestMethodTimeouts(t *testing.T) {
	z := startDeadlineZoo(t)
	h := time.Hour
	polls := []gateway.MethodTimeout{{Match: "zoo.v1.ZooService/GetAnimal", Timeout: 3 * h}, {Match: "*/Watch*", Timeout: 4 * h}}
	for _, tc := range []struct {
		name                    string
		backend                 gateway.Backend
		methods                 []gateway.MethodTimeout
		getAnimal, list, stream time.Duration
	}{
		{"gateway-wide", gateway.Backend{}, polls, 3 * h, 1 * h, 4 * h},
		{"over the backend's deadlines", gateway.Backend{CallTimeout: 5 * h, StreamTimeout: 6 * h}, polls, 3 * h, 5 * h, 4 * h},
		{"under the backend's entry for the method", gateway.Backend{CallTimeout: 5 * h, Methods: []gateway.MethodSettings{{Match: "*/GetAnimal", CallTimeout: 7 * h}}}, polls, 7 * h, 5 * h, 4 * h},
		{"first match", gateway.Backend{}, []gateway.MethodTimeout{{Match: "zoo.v1.ZooService", Timeout: 8 * h}, {Match: "*/GetAnimal", Timeout: 3 * h}}, 8 * h, 8 * h, 8 * h},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dialBackend(t, "zoo", z.addr)
			b.CallTimeout, b.StreamTimeout, b.Methods = tc.backend.CallTimeout, tc.backend.StreamTimeout, tc.backend.Methods
			_, base := newGateway(t, []gateway.Backend{b}, &gateway.Options{Calls: gateway.CallOptions{Timeout: h, StreamTimeout: 2 * h, MethodTimeouts: tc.methods}})
			cs := connect(t, base+"/mcp", "2025-11-25")
			for _, c := range []struct {
				tool, method string
				args         map[string]any
				want         time.Duration
			}{
				{"ZooService_GetAnimal", "GetAnimal", map[string]any{"id": "leo"}, tc.getAnimal},
				{"ZooService_ListAnimals", "ListAnimals", map[string]any{}, tc.list},
				{"ZooService_WatchFeedings", "WatchFeedings", map[string]any{"count": 1, "interval": "0s"}, tc.stream},
			} {
				// Hours apart, so the seconds a call takes cannot blur them.
				if got := z.deadlineOf(t, cs, c.tool, c.method, c.args); got > c.want || got < c.want-time.Minute {
					t.Errorf("%s: deadline in %s, want %s", c.method, got.Round(time.Second), c.want)
				}
			}
		})
	}

	// Entries are checked at start, each named.
	b := dialBackend(t, "zoo", z.addr)
	for _, tc := range []struct {
		mt   gateway.MethodTimeout
		want string
	}{
		{gateway.MethodTimeout{Match: "zoo.v1.[", Timeout: h}, `Options.Calls.MethodTimeouts[0].Match: "zoo.v1.[/*": syntax error in pattern`},
		{gateway.MethodTimeout{Match: "*/Poll*"}, "Options.Calls.MethodTimeouts[0].Timeout: want a positive duration (a call always has a deadline), got 0s"},
		{gateway.MethodTimeout{Match: "*/Poll*", Timeout: gateway.Off}, "Options.Calls.MethodTimeouts[0].Timeout: want a positive duration"},
	} {
		if _, err := gateway.New(context.Background(), []gateway.Backend{b}, &gateway.Options{Calls: gateway.CallOptions{MethodTimeouts: []gateway.MethodTimeout{tc.mt}}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.mt, err, tc.want)
		}
	}
}
