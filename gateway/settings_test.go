package gateway_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/mcptest"
)

// TestBackendSettings: a backend's own filters, hidden methods and
// deadlines (the config file's per-backend and per-method settings) reach
// its tools, and the most specific deadline wins.
func TestBackendSettings(t *testing.T) {
	b := startBackend(t)
	conn, err := gateway.Dial(b.addr, gateway.BackendTLS{})
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
	}}, &gateway.Options{CallTimeout: time.Hour})
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
	names := mcptest.ToolNames(t, ctx, cs)
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
			conn, err := gateway.Dial("127.0.0.1:1", gateway.BackendTLS{})
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
