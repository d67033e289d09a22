package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gateway test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

type addHeader struct {
	name, value string
	rt          http.RoundTripper
}

func (a addHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(a.name, a.value)
	return a.rt.RoundTrip(r)
}

// TestTLSAndBearer runs the gateway as an operator would put it on a
// network: HTTPS on the listener and static bearer tokens. The reference
// client reaches the tools over HTTPS with a token; without one it gets
// 401; health stays open; plaintext HTTP is refused.
func TestTLSAndBearer(t *testing.T) {
	addr := zootest.Start(t)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# test\nt0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--backend", addr, "--listen", "127.0.0.1:0",
		"--tls-cert", certFile, "--tls-key", keyFile, "--bearer-tokens-file", tokens)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urlRE := regexp.MustCompile(`MCP \(Streamable HTTP\) at (\S+/mcp)`)
	lines := bufio.NewScanner(stderr)
	var url string
	var out strings.Builder
	for url == "" && lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if m := urlRE.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("want an https URL in the banner, got %q:\n%s", url, out.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func(rt http.RoundTripper) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "tls-test", Version: "1"}, nil)
		return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: rt}}, nil)
	}
	if cs, err := connect(tr); err == nil {
		cs.Close()
		t.Error("connected without a token")
	}
	cs, err := connect(addHeader{"Authorization", "Bearer t0ken", tr})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_ListAnimals", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("ListAnimals over HTTPS: %v %+v", err, res)
	}
	cs.Close()

	hc := &http.Client{Transport: tr}
	resp, err := hc.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("/healthz: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	// HTTP/2 is offered, and nothing older than TLS 1.2 is accepted.
	h2 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer h2.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: h2}).Get(strings.TrimSuffix(url, "/mcp") + "/healthz"); err != nil {
		t.Errorf("/healthz over HTTP/2: %v", err)
	} else {
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("/healthz: %s, want HTTP/2", resp.Proto)
		}
	}
	old := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}
	defer old.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: old}).Get(strings.TrimSuffix(url, "/mcp") + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("a TLS 1.1 client was served")
	}
	plain := &http.Transport{}
	defer plain.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: plain}).Get(strings.Replace(url, "https://", "http://", 1)); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plaintext HTTP to the TLS listener: %d", resp.StatusCode)
		}
	}

	terminate(t, cmd)
}
