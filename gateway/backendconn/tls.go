package backendconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
)

// TLS says how a connection to a backend is secured. The zero value
// means: plaintext for a unix socket or a loopback address, TLS with the
// system roots for anything else.
type TLS struct {
	// Plaintext forces an unencrypted connection even to a remote backend.
	Plaintext bool
	// CAFile is a PEM bundle of roots that replaces the system roots.
	CAFile string
	// CertFile and KeyFile are the client certificate for mutual TLS; both
	// or neither.
	CertFile, KeyFile string
	// ServerName overrides the name checked against the backend's
	// certificate (and sent as SNI).
	ServerName string
}

// transportCredentials decides a backend's transport security: plaintext
// when asked, or by default for a unix socket or a target whose every
// address is loopback; TLS otherwise.
func transportCredentials(t *grpctarget.Target, cfg TLS) (credentials.TransportCredentials, error) {
	tlsWanted := cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.ServerName != ""
	if cfg.Plaintext {
		if tlsWanted {
			return nil, errors.New("TLS.Plaintext cannot be combined with TLS.CAFile, TLS.CertFile, TLS.KeyFile or TLS.ServerName")
		}
		return insecure.NewCredentials(), nil
	}
	if !tlsWanted && t.Loopback() {
		return insecure.NewCredentials(), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS.CAFile %s: no PEM certificates found", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("TLS.CertFile and TLS.KeyFile must be given together")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.CertFile/TLS.KeyFile: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(tc), nil
}
