package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// BenchmarkUnary measures the same small unary call (GetAnimal) made
// directly over gRPC, as tools/call through the gateway over Streamable
// HTTP, and through "bare", a handler that does only the HTTP-to-gRPC
// hop (decode the request with encoding/json, call, render the response
// with protojson, answer the JSON-RPC result): the floor a gateway could
// reach without MCP's sessions, validation, limits or observation.
// Each runs against one in-process backend, at 1 and 16 calls in flight.
// The HTTP client is a bare client posting a pre-encoded stateless
// (2026-07-28) request, so the difference is the server side's cost.
//
//	go test -run '^$' -bench BenchmarkUnary -benchmem ./gateway/
func BenchmarkUnary(b *testing.B) {
	bk, _, url := startGateway(b, nil)
	conn, err := backendconn.Dial(bk.addr, backendconn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := zoov1.NewZooServiceClient(conn)
	direct := func() error {
		_, err := client.GetAnimal(context.Background(), &zoov1.GetAnimalRequest{Id: "leo"})
		return err
	}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	viaGateway := func() error { return postGetAnimal(hc, url, "") }
	bare := httptest.NewServer(bareHandler(client))
	defer bare.Close()
	viaBare := func() error { return postGetAnimal(hc, bare.URL, "") }
	// One checked call each, so the benchmark cannot time failures.
	for _, call := range []func() error{direct, viaGateway, viaBare} {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}

	for _, c := range []struct {
		name string
		call func() error
	}{{"direct", direct}, {"gateway", viaGateway}, {"bare", viaBare}} {
		b.Run(c.name+"/inflight=1", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		})
		b.Run(c.name+"/inflight=16", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			var once sync.Once
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.call(); err != nil {
						once.Do(func() { b.Error(err) })
						return
					}
				}
			})
		})
	}
}

// bareHandler answers getAnimalBody with the HTTP-to-gRPC hop alone:
// BenchmarkUnary's floor for the gateway.
func bareHandler(client zoov1.ZooServiceClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Arguments struct {
					ID string `json:"id"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp, err := client.GetAnimal(r.Context(), &zoov1.GetAnimalRequest{Id: req.Params.Arguments.ID})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		js, err := protojson.Marshal(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		text, _ := json.Marshal(string(js))
		out := make([]byte, 0, 2*len(js)+128)
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, req.ID...)
		out = append(out, `,"result":{"content":[{"type":"text","text":`...)
		out = append(out, text...)
		out = append(out, `}],"structuredContent":`...)
		out = append(out, js...)
		out = append(out, `}}`...)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// getAnimalBody is a stateless (2026-07-28) tools/call of GetAnimal,
// encoded once so the benchmarks time the gateway, not the client.
var getAnimalBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

// postGetAnimal posts getAnimalBody to the gateway at url, with token as
// a bearer token unless it is empty, and reads the whole answer; an answer
// other than 200 is an error.
func postGetAnimal(hc *http.Client, url, token string) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(getAnimalBody))
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"ZooService_GetAnimal"},
	}
	if token != "" {
		req.Header["Authorization"] = []string{"Bearer " + token}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &httpStatusError{resp.StatusCode}
	}
	return err
}

type httpStatusError struct{ code int }

func (e *httpStatusError) Error() string { return http.StatusText(e.code) }
