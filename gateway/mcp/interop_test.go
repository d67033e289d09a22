package mcp

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// sdkEvents collects what the reference client's handlers receive.
type sdkEvents struct {
	mu       sync.Mutex
	progress []float64
	changed  chan struct{}
}

func newSDKClient(ev *sdkEvents) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "sdk-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			ev.mu.Lock()
			ev.progress = append(ev.progress, r.Params.Progress)
			ev.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case ev.changed <- struct{}{}:
			default:
			}
		},
	})
}

// exerciseSDK runs the same checks whatever the transport and revision.
func exerciseSDK(t *testing.T, s notifier, cs *sdk.ClientSession, ev *sdkEvents, wantVersion string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := cs.InitializeResult().ProtocolVersion; got != wantVersion {
		t.Errorf("negotiated %q, want %q", got, wantVersion)
	}
	if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != testImpl.Name {
		t.Errorf("server info %+v", got)
	}
	// ListTools follows the cursors across pages (page size 3).
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	if len(names) != len(testTools()) || names[0] != "echo" || names[len(names)-1] != "block" {
		t.Errorf("tools = %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("CallTool echo: %v", err)
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); !ok || tc.Text != `{"text":"hi"}` {
		t.Errorf("echo content = %#v", res.Content[0])
	}
	if wantVersion >= Version20250618 && res.StructuredContent == nil {
		t.Errorf("echo: no structuredContent at %s", wantVersion)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fail"})
	if err != nil || !res.IsError {
		t.Errorf("CallTool fail: res=%+v err=%v", res, err)
	}
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "nope"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeInvalidParams {
		t.Errorf("CallTool nope: err = %v, want -32602", err)
	}
	p := &sdk.CallToolParams{Name: "progress"}
	p.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatalf("CallTool progress: %v", err)
	}
	testkit.WaitFor(t, "the condition", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return len(ev.progress) == 2
	})

	// list_changed reaches the client (GET stream, stdio, or
	// subscriptions/listen) once the client's stream for it is open.
	testkit.WaitFor(t, "the client's notification stream", func() bool { return s.NotificationStreams() > 0 })
	s.NotifyToolListChanged()
	select {
	case <-ev.changed:
	case <-ctx.Done():
		t.Fatal("ToolListChangedHandler never called")
	}
}

func TestInteropStreamableHTTP(t *testing.T) {
	for _, v := range []string{Version20250326, Version20250618, Version20251125, Version20260728} {
		t.Run(v, func(t *testing.T) {
			s := NewServer(testImpl, newFakeHandler(t, &ToolListOptions{PageSize: 3}), nil)
			srv := httptest.NewServer(streamableHandler(t, s, nil))
			defer srv.Close()
			ev := &sdkEvents{changed: make(chan struct{}, 1)}
			ctx := context.Background()
			cs, err := newSDKClient(ev).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			exerciseSDK(t, s, cs, ev, v)
			if err := cs.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			shutdown(t, s)
		})
	}
}

func TestInteropStdio(t *testing.T) {
	for _, v := range []string{Version20241105, Version20250618, Version20251125, Version20260728} {
		t.Run(v, func(t *testing.T) {
			s := NewServer(testImpl, newFakeHandler(t, &ToolListOptions{PageSize: 3}), nil)
			c2sR, c2sW := io.Pipe()
			s2cR, s2cW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- s.ServeStdio(context.Background(), c2sR, s2cW)
				s2cW.Close()
			}()
			ev := &sdkEvents{changed: make(chan struct{}, 1)}
			cs, err := newSDKClient(ev).Connect(context.Background(), &sdk.IOTransport{Reader: s2cR, Writer: c2sW}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			exerciseSDK(t, s, cs, ev, v)
			cs.Close()
			c2sR.Close()
			if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("ServeStdio: %v", err)
			}
			shutdown(t, s)
		})
	}
}

func shutdown(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// notifier is what exerciseSDK needs of the server side: one Server, or
// every replica of a scale-out test.
type notifier interface {
	NotifyToolListChanged()
	NotificationStreams() int
}
