package main

import (
	"bytes"
	"context"
	"crypto/x509"
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
			return settingErrorf("%s: set without %s", flagName("state-password-file"), flagName("state"))
		}
		if s.caFile != "" {
			return settingErrorf("%s: set without %s", flagName("state-ca"), flagName("state"))
		}
		return nil
	}
	if err := state.CheckURL(s.url); err != nil {
		return settingErrorf("%s: %w", flagName("state"), err)
	}
	if stdio {
		return settingErrorf("%s: a fleet serves HTTP; with %s there is one client and nothing to share", flagName("state"), flagName("stdio"))
	}
	if t.sessionSecretFile == "" {
		return settingErrorf("%s needs %s: the replicas of a fleet share sessions through tokens signed with that secret", flagName("state"), flagName("session-secret-file"))
	}
	if s.passwordFile != "" {
		b, err := os.ReadFile(s.passwordFile)
		if err != nil {
			return settingErrorf("%s: %w", flagName("state-password-file"), err)
		}
		if s.password = string(bytes.TrimRight(b, "\r\n")); s.password == "" {
			return settingErrorf("%s %s: the file is empty", flagName("state-password-file"), s.passwordFile)
		}
	}
	if s.caFile != "" {
		if !strings.HasPrefix(s.url, "rediss://") {
			return settingErrorf("%s: the store is reached over TLS only with a rediss:// %s", flagName("state-ca"), flagName("state"))
		}
		b, err := os.ReadFile(s.caFile)
		if err != nil {
			return settingErrorf("%s: %w", flagName("state-ca"), err)
		}
		s.rootCAs = x509.NewCertPool()
		if !s.rootCAs.AppendCertsFromPEM(b) {
			return settingErrorf("%s %s: no PEM certificate in the file", flagName("state-ca"), s.caFile)
		}
	}
	if err := state.CheckPrefix(s.prefix); err != nil {
		return settingErrorf("%s: %w", flagName("state-prefix"), err)
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
		return nil, settingErrorf("%s: %w", flagName("state"), err)
	}
	ctx, cancel := context.WithTimeout(ctx, stateCheckTimeout)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		if s.require {
			st.Close()
			return nil, settingErrorf("%s %s: %w (start it, fix the address or %s, or set %s=false to start without it)", flagName("state"), state.Redacted(s.url), err, flagName("state-password-file"), flagName("require-state"))
		}
		logger.Warn("the state store does not answer; serving without it until it does", "state", state.Redacted(s.url), "err", err)
	}
	return st, nil
}
