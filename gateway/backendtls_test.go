package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// testCA is a certificate authority for one test: it issues the
// backend's server certificate and the gateway's client certificate.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
	dir  string
	file string // the CA certificate, PEM
	n    int64
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	ca := &testCA{dir: t.TempDir()}
	der, key := ca.issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca.cert, ca.key = cert, key
	ca.pool = x509.NewCertPool()
	ca.pool.AddCert(cert)
	ca.file, _ = ca.write(t, "ca", der, nil)
	return ca
}

// issue signs tmpl with the CA (itself when the CA is not made yet).
func (ca *testCA) issue(t *testing.T, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca.n++
	tmpl.SerialNumber = big.NewInt(ca.n)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// write stores a certificate (and its key, when given) as PEM files.
func (ca *testCA) write(t *testing.T, name string, der []byte, key *ecdsa.PrivateKey) (certFile, keyFile string) {
	t.Helper()
	certFile = filepath.Join(ca.dir, name+".pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if key != nil {
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		keyFile = filepath.Join(ca.dir, name+".key")
		if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// TestBackendTLS: the backend TLS settings of README.md's flag table. A
// backend that requires client certificates is reached with
// backendconn.TLS{CAFile, CertFile, KeyFile, ServerName} (--backend-ca,
// --backend-cert, --backend-key, --backend-server-name); without the
// client certificate the handshake fails; without --backend-ca the
// backend's certificate is checked against the system roots, which do
// not hold the test CA; and with no TLS settings a loopback backend is
// dialled in plaintext, which a TLS backend refuses.
func TestBackendTLS(t *testing.T) {
	ca := newTestCA(t)
	der, key := ca.issue(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "zoo"}, DNSNames: []string{"zoo.internal"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	server := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	der, key = ca.issue(t, &x509.Certificate{
		Subject:  pkix.Name{CommonName: "gateway"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	clientCert, clientKey := ca.write(t, "client", der, key)

	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{server}, ClientCAs: ca.pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	addr := testkit.ServeLoopback(t, gs)

	dial := func(t *testing.T, cfg backendconn.TLS) gateway.Backend {
		t.Helper()
		conn, err := backendconn.Dial(addr, backendconn.Options{TLS: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return gateway.Backend{Name: "zoo", Address: addr, Conn: conn}
	}

	t.Run("mutual TLS", func(t *testing.T) {
		_, base := newGateway(t, []gateway.Backend{dial(t, backendconn.TLS{CAFile: ca.file, CertFile: clientCert, KeyFile: clientKey, ServerName: "zoo.internal"})}, nil)
		res := call(t, connect(t, base+"/mcp", "2025-11-25"), "ZooService_GetAnimal", map[string]any{"id": "leo"})
		if res.IsError || !strings.Contains(text(t, res), `"leo"`) {
			t.Errorf("GetAnimal over mutual TLS: %s", text(t, res))
		}
	})
	for _, tc := range []struct {
		name string
		cfg  backendconn.TLS
		want string
	}{
		// The server's refusal may arrive as its TLS alert or as the
		// connection it closed, depending on timing.
		{"no client certificate", backendconn.TLS{CAFile: ca.file, ServerName: "zoo.internal"}, "is unreachable"},
		{"system roots", backendconn.TLS{CertFile: clientCert, KeyFile: clientKey, ServerName: "zoo.internal"}, "certificate signed by unknown authority"},
		{"wrong server name", backendconn.TLS{CAFile: ca.file, CertFile: clientCert, KeyFile: clientKey, ServerName: "other.internal"}, "other.internal"},
		{"loopback plaintext", backendconn.TLS{}, "is unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := gateway.New(ctx, []gateway.Backend{dial(t, tc.cfg)}, &gateway.Options{Catalog: gateway.CatalogOptions{RequireBackends: true, DiscoveryTimeout: 3 * time.Second}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v, want an error containing %q", tc.cfg, err, tc.want)
			}
		})
	}
}
