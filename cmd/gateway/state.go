package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
)

// stateFlags name the store a fleet of replicas shares (gateway/state).
type stateFlags struct {
	url          string
	passwordFile string
	caFile       string
	prefix       string
	require      bool
	// maxRevoked and maxRevokedPerWho bound the deleted sessions the
	// fleet keeps (state.Options).
	maxRevoked, maxRevokedPerWho int

	password string         // loaded by check
	rootCAs  *x509.CertPool // loaded by check from caFile
}

// stateCheckTimeout bounds --require-state's check of the store at start.
const stateCheckTimeout = 5 * time.Second

func (s *stateFlags) check(t *transportFlags, stdio bool) error {
	s.password, s.rootCAs = "", nil
	if s.url == "" {
		if s.passwordFile != "" {
			return errors.New("--state-password-file: set without --state")
		}
		if s.caFile != "" {
			return errors.New("--state-ca: set without --state")
		}
		return nil
	}
	if err := state.CheckURL(s.url); err != nil {
		return fmt.Errorf("--state: %w", err)
	}
	if stdio {
		return errors.New("--state: a fleet serves HTTP; with --stdio there is one client and nothing to share")
	}
	if t.sessionSecretFile == "" {
		return errors.New("--state needs --session-secret-file: the replicas of a fleet share sessions through tokens signed with that secret")
	}
	if s.passwordFile != "" {
		b, err := os.ReadFile(s.passwordFile)
		if err != nil {
			return fmt.Errorf("--state-password-file: %w", err)
		}
		if s.password = string(bytes.TrimRight(b, "\r\n")); s.password == "" {
			return fmt.Errorf("--state-password-file %s: the file is empty", s.passwordFile)
		}
	}
	if s.caFile != "" {
		if !strings.HasPrefix(s.url, "rediss://") {
			return errors.New("--state-ca: the store is reached over TLS only with a rediss:// --state")
		}
		b, err := os.ReadFile(s.caFile)
		if err != nil {
			return fmt.Errorf("--state-ca: %w", err)
		}
		s.rootCAs = x509.NewCertPool()
		if !s.rootCAs.AppendCertsFromPEM(b) {
			return fmt.Errorf("--state-ca %s: no PEM certificate in the file", s.caFile)
		}
	}
	if err := state.CheckPrefix(s.prefix); err != nil {
		return fmt.Errorf("--state-prefix: %w", err)
	}
	return nil
}

// open connects to the store (nil without --state) and, with
// --require-state, checks that it answers.
func (s *stateFlags) open(ctx context.Context, res *results.StoreOptions, logger *slog.Logger) (*state.Redis, error) {
	if s.url == "" {
		return nil, nil
	}
	st, err := state.Open(s.url, &state.Options{Prefix: s.prefix, Password: s.password, RootCAs: s.rootCAs, Results: *res,
		MaxRevocations: s.maxRevoked, MaxRevocationsPerPrincipal: s.maxRevokedPerWho, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("--state: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, stateCheckTimeout)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		if s.require {
			st.Close()
			return nil, fmt.Errorf("--state %s: %w (start it, fix the address or --state-password-file, or set --require-state=false to start without it)", state.Redacted(s.url), err)
		}
		logger.Warn("the state store does not answer; serving without it until it does", "state", state.Redacted(s.url), "err", err)
	}
	return st, nil
}
