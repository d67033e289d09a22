package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// listAnimalsBody is a stateless tools/call of ListAnimals, whose result
// is over a 1 KiB budget: it is cut and kept whole.
var listAnimalsBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_ListAnimals","arguments":{"pageSize":100},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

// BenchmarkFleetState measures what --state (the fleet's shared store, a
// real redis-server on loopback) adds to one small stateless tools/call
// (GetAnimal, one in flight), anonymous and with a bearer token (whose
// request takes a fleet-wide in-flight slot: one script run), and to a
// call whose result is cut and kept whole (one script run writing the
// result), against the same gateway keeping everything in memory.
//
//	go test -run '^$' -bench BenchmarkFleetState -benchmem ./gateway/
func BenchmarkFleetState(b *testing.B) {
	srv := redistest.Start(b, nil)
	tokens := filepath.Join(b.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("bench-token\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	bearer, err := auth.New(context.Background(), auth.Config{BearerTokensFile: tokens})
	if err != nil {
		b.Fatal(err)
	}
	defer bearer.Close()
	secret := []byte(strings.Repeat("s", 32))
	for _, store := range []string{"memory", "state"} {
		var st *state.Redis
		if store == "state" {
			if st, err = state.Open(srv.URL(), nil); err != nil {
				b.Fatal(err)
			}
			if err := st.Ping(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer st.Close()
		}
		for _, c := range []struct {
			name  string
			tool  string
			auth  *auth.Authenticator
			token string
			body  []byte
			want  string
		}{
			{"call/anonymous", "ZooService_GetAnimal", nil, "", getAnimalBody, `"leo"`},
			{"call/bearer", "ZooService_GetAnimal", bearer, "bench-token", getAnimalBody, `"leo"`},
			{"cut-result", "ZooService_ListAnimals", nil, "", listAnimalsBody, `grpc-mcp-gateway://result/`},
		} {
			_, _, url := startGateway(b, &gateway.Options{Auth: c.auth, State: st, Results: gateway.ResultOptions{
				MaxBytes: 1024,
			},
				Transports: gateway.TransportOptions{
					HTTP: &mcp.StreamableHTTPOptions{SessionSecret: secret},
				}})
			hc := &http.Client{Transport: &http.Transport{}}
			caller := statelessCaller(hc, url, c.tool, c.token)
			call := func() (string, error) { return postBody(caller, c.body) }
			if out, err := call(); err != nil || !strings.Contains(out, c.want) {
				b.Fatalf("%s/%s: %v %s", c.name, store, err, out)
			}
			b.Run(c.name+"/"+store, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := call(); err != nil {
						b.Fatal(err)
					}
				}
			})
			hc.CloseIdleConnections()
		}
	}
}

// postBody posts a stateless tools/call of tool and returns the response
// body.
func postBody(c *testkit.Client, body []byte) (string, error) {
	req, err := c.NewRequest(context.Background(), body)
	if err != nil {
		return "", err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(out), &httpStatusError{resp.StatusCode}
	}
	return string(out), err
}
