package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// probeTimeout bounds a --probe request; container runtimes and
// Kubernetes time their probes out at a few seconds too.
const probeTimeout = 3 * time.Second

// probe is the gateway's own health check client, for distroless images
// that have no shell or curl: GET rawURL and exit 0 on a 2xx answer, 1
// otherwise, with the reason on stderr.
//
// An https URL on a loopback host is not verified: the probe asks whether
// this process answers, not who it is, and the serving certificate names
// the public host, not 127.0.0.1.
func probe(ctx context.Context, rawURL string, stderr io.Writer) int {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "gateway: --probe: want an http or https URL, got %q\n", rawURL)
		return 2
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // a probe of this machine never goes through a proxy
	if u.Scheme == "https" && loopback.Addr(u.Host) {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback liveness only; see above
	}
	client := &http.Client{Transport: transport, Timeout: probeTimeout}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: --probe: %v\n", err)
		return 2
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: probe %s: %v\n", rawURL, err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		fmt.Fprintf(stderr, "gateway: probe %s: %s: %s\n", rawURL, resp.Status, body)
		return 1
	}
	return 0
}
