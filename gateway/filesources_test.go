package gateway_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// signallingSource tells discovered each time a Discover of the source it
// wraps returns.
type signallingSource struct {
	descriptors.Source
	discovered chan struct{}
}

func (s *signallingSource) Discover(ctx context.Context) (*descriptors.Result, error) {
	res, err := s.Source.Discover(ctx)
	select {
	case s.discovered <- struct{}{}:
	case <-ctx.Done():
	}
	return res, err
}

// TestRefreshUnchangedProtoFiles: a backend described by .proto files is
// refreshed on every tick, and while the files do not change a refresh
// compiles nothing and rebuilds nothing (one "proto files: compiled" and
// one "discovered backend" record across many refreshes); an edited file
// is compiled again and the backend's tools rebuilt.
func TestRefreshUnchangedProtoFiles(t *testing.T) {
	t.Parallel()
	gs := grpc.NewServer()
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	addr := testkit.ServeLoopback(t, gs)

	dir := t.TempDir()
	text, err := os.ReadFile("../examples/zoo/proto/zoo/v1/zoo.proto")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "zoo", "v1", "zoo.proto")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	files := descriptors.NewProtoSource([]string{dir, "../proto"}, []string{"zoo/v1/zoo.proto"})
	files.Logger = logger
	src := &signallingSource{Source: files, discovered: make(chan struct{})}
	b := dialBackend(t, "zoo", addr)
	b.Source = src
	count := func(msg string) int { return strings.Count(logs.String(), msg) }

	started := make(chan struct{})
	go func() {
		defer close(started)
		<-src.discovered // New's discovery
	}()
	g, _ := newGateway(t, []gateway.Backend{b}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 5 * time.Millisecond}, Logger: logger})
	<-started
	// Each Discover starts after the last one's outcome was handled, so
	// after n+1 signals n refreshes are complete.
	for range 6 {
		<-src.discovered
	}
	if c, d := count("proto files: compiled"), count("discovered backend"); c != 1 || d != 1 {
		t.Errorf("after 5 refreshes of unchanged files: %d compiles and %d discoveries logged, want 1 and 1:\n%s", c, d, logs.String())
	}
	tools := len(g.Tools().Tools())

	// Replaced as an editor saves, so no check sees half a file.
	edited := filepath.Join(dir, "zoo.proto.new")
	if err := os.WriteFile(edited, append(text, "\n// A comment added.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(edited, path); err != nil {
		t.Fatal(err)
	}
	// The refresh under way may have checked the files before the edit;
	// the next one sees it, and the one after starts once it is handled.
	for range 3 {
		<-src.discovered
	}
	if c, d := count("proto files: compiled"), count("discovered backend"); c != 2 || d != 2 {
		t.Errorf("after an edit: %d compiles and %d discoveries logged, want 2 and 2:\n%s", c, d, logs.String())
	}
	if n := len(g.Tools().Tools()); n != tools {
		t.Errorf("%d tools after the edit, want %d", n, tools)
	}
}

// slowCompile is a source whose compile outlasted the deadline.
type slowCompile struct{}

func (slowCompile) Discover(ctx context.Context) (*descriptors.Result, error) {
	return nil, &descriptors.CompileTimeoutError{Files: 1871, Running: 8 * time.Second, Err: context.DeadlineExceeded}
}

// TestSlowCompileIsNotUnreachable: a discovery that timed out compiling
// .proto files says so, names the setting to raise, and does not call a
// READY backend unreachable.
func TestSlowCompileIsNotUnreachable(t *testing.T) {
	t.Parallel()
	gs := grpc.NewServer()
	zoo.Register(gs, zoo.NewServer())
	b := dialBackend(t, "bigapi", testkit.ServeLoopback(t, gs))
	b.Source = slowCompile{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := gateway.New(ctx, []gateway.Backend{b}, &gateway.Options{Catalog: gateway.CatalogOptions{RequireBackends: true}})
	if err == nil {
		t.Fatal("New succeeded")
	}
	t.Logf("error: %v", err)
	for _, want := range []string{"backend bigapi: its descriptor files, not the backend", "Options.Catalog.DiscoveryTimeout", "compiling 1,871 .proto files", "has run 8s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if strings.Contains(err.Error(), "unreachable") {
		t.Error("a slow compile is reported as an unreachable backend")
	}
}
