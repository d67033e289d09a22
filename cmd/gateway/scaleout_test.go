package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// roundRobin sends each request to the next replica in turn, as a plain
// load balancer without session affinity does, and counts what each got.
type roundRobin struct {
	mu       sync.Mutex
	replicas []*url.URL
	next     int
	served   []int
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	i := rr.next
	rr.next = (rr.next + 1) % len(rr.replicas)
	rr.served[i]++
	rr.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = rr.replicas[i].Host, rr.replicas[i].Host
	return http.DefaultTransport.RoundTrip(req)
}

// scaleOutSession runs the go-sdk client against two gateway processes
// behind a round-robin balancer and returns the error of the first
// operation that failed.
func scaleOutSession(t *testing.T, extra ...string) (*roundRobin, error) {
	t.Helper()
	backend := zootest.Start(t)
	args := append([]string{"--backend", backend}, extra...)
	rr := &roundRobin{served: make([]int, 2)}
	for range 2 {
		u, err := url.Parse(startServing(t, args...))
		if err != nil {
			t.Fatal(err)
		}
		rr.replicas = append(rr.replicas, u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "scale-out", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             rr.replicas[0].String() + "/mcp",
		HTTPClient:           &http.Client{Transport: rr},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return rr, err
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return rr, err
	}
	for range 4 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
		if err != nil {
			return rr, err
		}
		if res.IsError {
			t.Fatalf("GetAnimal: tool error %+v", res.Content)
		}
	}
	return rr, nil
}

// TestScaleOutTwoProcesses: two gateway processes sharing
// --session-secret-file serve one session whose requests alternate between
// them; without the shared secret the same client fails, so the test shows
// what the mode buys.
func TestScaleOutTwoProcesses(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "session-secret")
	b := make([]byte, 48)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("shared secret", func(t *testing.T) {
		rr, err := scaleOutSession(t, "--session-secret-file", secret)
		if err != nil {
			t.Fatalf("session across two replicas: %v", err)
		}
		if rr.served[0] < 3 || rr.served[1] < 3 {
			t.Errorf("requests per replica %v: want both to serve the session", rr.served)
		}
	})
	t.Run("in-memory sessions", func(t *testing.T) {
		if _, err := scaleOutSession(t); err == nil {
			t.Error("without a shared secret a session should not survive alternating replicas")
		}
	})
}
