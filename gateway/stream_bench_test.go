package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// BenchmarkServerStream100k collects a server stream of 100,000 small
// messages ({"feeding":{"sequence":N}}), directly over gRPC and as one
// tools/call through the gateway over Streamable HTTP (a bare HTTP client
// posting a pre-encoded stateless request, no progress token), against one
// in-process backend, and reports messages per second.
//
//	go test -run '^$' -bench BenchmarkServerStream100k -benchmem ./gateway/
func BenchmarkServerStream100k(b *testing.B) {
	const n = 100_000
	// No result budget: the figure is for the whole stream, which the
	// default budget would cut.
	sg := startStreamGateway(b, &gateway.Options{Calls: gateway.CallOptions{StreamMaxMessages: n}, Results: gateway.ResultOptions{MaxBytes: gateway.Off}})
	conn, err := backendconn.Dial(sg.backend.addr, backendconn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := zoov1.NewZooServiceClient(conn)
	direct := func() error {
		stream, err := client.WatchFeedings(context.Background(), &zoov1.WatchFeedingsRequest{AnimalId: cueMany, Count: n})
		if err != nil {
			return err
		}
		got := 0
		for {
			_, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			got++
		}
		if got != n {
			return errors.New("direct: got " + strconv.Itoa(got) + " messages")
		}
		return nil
	}

	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_WatchFeedings","arguments":{"animalId":"many","count":` + strconv.Itoa(n) + `},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	last := []byte(`{"feeding":{"sequence":` + strconv.Itoa(n) + `}}`)
	caller := statelessCaller(hc, sg.url, "ZooService_WatchFeedings", "")
	viaGateway := func() error {
		req, err := caller.NewRequest(context.Background(), body)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return &httpStatusError{resp.StatusCode}
		}
		if !bytes.Contains(out, last) || bytes.Contains(out, []byte(`"truncated"`)) {
			return errors.New("gateway: the stream did not arrive whole")
		}
		return nil
	}
	for _, c := range []struct {
		name string
		call func() error
	}{{"direct", direct}, {"gateway", viaGateway}} {
		if err := c.call(); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(0, "ns/op") // per call of 100,000 messages: msgs/s is the figure
		})
	}
}
