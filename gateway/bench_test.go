package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// BenchmarkUnary measures the same small unary call (GetAnimal) made
// directly over gRPC and as tools/call through the gateway over Streamable
// HTTP, against one in-process backend, at 1 and 16 calls in flight. The
// gateway client is a bare HTTP client posting a pre-encoded stateless
// (2026-07-28) request, so the difference is the gateway's own cost.
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
	// One checked call each, so the benchmark cannot time failures.
	if err := direct(); err != nil {
		b.Fatal(err)
	}
	if err := viaGateway(); err != nil {
		b.Fatal(err)
	}

	for _, c := range []struct {
		name string
		call func() error
	}{{"direct", direct}, {"gateway", viaGateway}} {
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
