package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// BackendTLS says how the gateway secures its connection to a backend.
// The zero value means: plaintext for a unix socket or a loopback
// address, TLS with the system roots for anything else.
type BackendTLS struct {
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
func transportCredentials(t *target, cfg BackendTLS) (credentials.TransportCredentials, error) {
	tlsWanted := cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.ServerName != ""
	if cfg.Plaintext {
		if tlsWanted {
			return nil, errors.New("BackendTLS.Plaintext cannot be combined with BackendTLS.CAFile, BackendTLS.CertFile, BackendTLS.KeyFile or BackendTLS.ServerName")
		}
		return insecure.NewCredentials(), nil
	}
	if !tlsWanted && t.loopback() {
		return insecure.NewCredentials(), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("BackendTLS.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("BackendTLS.CAFile %s: no PEM certificates found", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("BackendTLS.CertFile and BackendTLS.KeyFile must be given together")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("BackendTLS.CertFile/BackendTLS.KeyFile: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(tc), nil
}
