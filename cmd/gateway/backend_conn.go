package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// connFlags say how the gateway connects to its backends: balancing over
// replicas, keepalive, message sizes, retries. They are the defaults of
// every backend; a config file backend may set each for itself
// (connOverrides).
type connFlags struct {
	lb        string
	keepalive time.Duration
	maxRecv   int
	maxSend   int
	retry     string
}

// minKeepalive is grpc-go's floor for client keepalive pings; it raises
// anything shorter to it, so shorter is refused rather than ignored.
const minKeepalive = 10 * time.Second

func (f *connFlags) check() error {
	if err := checkLB(flagName("backend-lb"), f.lb); err != nil {
		return err
	}
	if err := checkKeepalive(flagName("backend-keepalive"), f.keepalive); err != nil {
		return err
	}
	if err := checkMessageBytes(flagName("backend-max-recv-bytes"), f.maxRecv); err != nil {
		return err
	}
	if err := checkMessageBytes(flagName("backend-max-send-bytes"), f.maxSend); err != nil {
		return err
	}
	if _, err := retryOn(flagName("retry"), f.retry); err != nil {
		return err
	}
	return nil
}

func checkLB(name any, v string) error {
	if v != backendconn.LBRoundRobin && v != backendconn.LBPickFirst {
		return settingErrorf("%s: want %q or %q, got %q", name, backendconn.LBRoundRobin, backendconn.LBPickFirst, v)
	}
	return nil
}

func checkKeepalive(name any, d time.Duration) error {
	if d > 0 && d < minKeepalive {
		return settingErrorf("%s: want \"off\" (no pings) or at least %s (grpc-go's minimum), got %s", name, minKeepalive, d)
	}
	return nil
}

func checkMessageBytes(name any, n int) error {
	if n == 0 {
		return settingErrorf("%s: want a positive number of bytes, or \"unlimited\", got 0", name)
	}
	return nil
}

func retryOn(name any, v string) (bool, error) {
	switch v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, settingErrorf(`%s: want "on" or "off", got %q`, name, v)
}

// options are the backend connection's Options for these (checked) flags.
func (f *connFlags) options(tls backendconn.TLS) backendconn.Options {
	o := backendconn.Options{TLS: tls, LB: f.lb, Keepalive: f.keepalive, MaxRecvBytes: f.maxRecv, MaxSendBytes: f.maxSend}
	o.NoRetry = f.retry == "off"
	return o
}

// connOverrides are a config file backend's own connection settings; nil
// means "the flag's".
type connOverrides struct {
	lb        *string
	keepalive *time.Duration
	maxRecv   *int
	maxSend   *int
	noRetry   *bool
}

// apply sets o's fields that the backend overrides.
func (c *connOverrides) apply(o *backendconn.Options) {
	if c.lb != nil {
		o.LB = *c.lb
	}
	if c.keepalive != nil {
		o.Keepalive = *c.keepalive
	}
	if c.maxRecv != nil {
		o.MaxRecvBytes = *c.maxRecv
	}
	if c.maxSend != nil {
		o.MaxSendBytes = *c.maxSend
	}
	if c.noRetry != nil {
		o.NoRetry = *c.noRetry
	}
}

// checkFlagTLS checks the TLS flags of the backends that use them, in
// the flags' words, before backendconn reads the same settings (and would
// name them as its TLS fields). It runs when the backends are dialled, as
// backendconn's own checks did, so a missing file is still a start-up
// error (exit 1), not an invalid flag.
func checkFlagTLS(t backendconn.TLS) error {
	if t.Plaintext && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "") {
		return settingErrorf("%s cannot be combined with %s, %s, %s or %s", flagName("plaintext"), flagName("backend-ca"), flagName("backend-cert"), flagName("backend-key"), flagName("backend-server-name"))
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return settingErrorf("%s: %w", flagName("backend-ca"), err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return settingErrorf("%s %s: no PEM certificates found", flagName("backend-ca"), t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return settingErrorf("%s and %s must be given together", flagName("backend-cert"), flagName("backend-key"))
	}
	if t.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			return settingErrorf("%s/%s: %w", flagName("backend-cert"), flagName("backend-key"), err)
		}
	}
	return nil
}
