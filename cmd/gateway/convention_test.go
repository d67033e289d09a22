package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestSettingsZeroIsDefaultOffIsSpelledOut: one rule for every numeric
// setting, from flags, variables and the file alike: 0 is the default,
// off and unlimited are words (a negative number means the same), and a
// setting that cannot be off refuses them, naming itself.
func TestSettingsZeroIsDefaultOffIsSpelledOut(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]string{"--call-timeout", "0", "--max-concurrent-calls", "0", "--refresh", "0", "--backend-keepalive", "0s"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.Calls.Timeout != gateway.DefaultCallTimeout || c.transports.maxConcurrentCalls != mcp.DefaultMaxConcurrentCalls ||
		c.opts.Catalog.Refresh != gateway.DefaultRefresh || c.backends.conn.keepalive != backendconn.DefaultKeepalive {
		t.Errorf("0 is not the default: call-timeout %s, max-concurrent-calls %d, refresh %s, keepalive %s",
			c.opts.Calls.Timeout, c.transports.maxConcurrentCalls, c.opts.Catalog.Refresh, c.backends.conn.keepalive)
	}

	c, err = parseConfig([]string{"--refresh", "off", "--max-concurrent-calls", "unlimited", "--backend-keepalive", "off",
		"--max-in-flight", "-5", "--operation-wait", "-1s", "--tool-budget", "unlimited",
		"--backend-max-recv-bytes", "unlimited", "--max-result-bytes", "unlimited"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.Catalog.Refresh != gateway.Off || c.transports.maxConcurrentCalls != gateway.Off || c.backends.conn.keepalive != gateway.Off ||
		c.transports.maxInFlight != gateway.Off || c.opts.Calls.OperationWait != gateway.Off || c.opts.Search.ToolBudget != gateway.Off ||
		c.backends.conn.maxRecv != gateway.Off || c.opts.Results.MaxBytes != gateway.Off {
		t.Errorf("off and unlimited (or negative) did not reach the gateway as gateway.Off: %+v", c)
	}
	if opts := c.backends.conn.options(backendconn.TLS{}); opts.Keepalive != gateway.Off {
		t.Errorf("--backend-keepalive off: backendconn.Options.Keepalive %s, want gateway.Off", opts.Keepalive)
	}

	env := func(k string) (string, bool) {
		v, ok := map[string]string{"GATEWAY_REFRESH": "off", "GATEWAY_MAX_IN_FLIGHT": "unlimited", "GATEWAY_CALL_TIMEOUT": "0"}[k]
		return v, ok
	}
	file := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(file, []byte("demo: true\nmax_concurrent_calls: unlimited\nbackend_keepalive: off\nstream_timeout: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = parseConfig([]string{"--config", file}, io.Discard, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.Catalog.Refresh != gateway.Off || c.transports.maxInFlight != gateway.Off || c.opts.Calls.Timeout != gateway.DefaultCallTimeout ||
		c.transports.maxConcurrentCalls != gateway.Off || c.backends.conn.keepalive != gateway.Off || c.opts.Calls.StreamTimeout != gateway.DefaultStreamTimeout {
		t.Errorf("variables and file: refresh %s, max-in-flight %d, call-timeout %s, max-concurrent-calls %d, keepalive %s, stream-timeout %s",
			c.opts.Catalog.Refresh, c.transports.maxInFlight, c.opts.Calls.Timeout, c.transports.maxConcurrentCalls, c.backends.conn.keepalive, c.opts.Calls.StreamTimeout)
	}

	for _, args := range [][]string{
		{"--call-timeout", "off"},
		{"--call-timeout", "-1s"},
		{"--stream-max-messages", "unlimited"},
		{"--stream-max-bytes", "-1"},
		{"--max-batch", "-3"},
	} {
		_, err := parseConfig(args, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), args[0]) && !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "-")) {
			t.Errorf("%v: %v, want an error naming %s", args, err, args[0])
		}
	}
	if err := os.WriteFile(file, []byte("call_timeout: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseConfig([]string{"--config", file}, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), "call_timeout") {
		t.Errorf("call_timeout: off in the file: %v, want an error naming the key", err)
	}
}

// TestSettingsHelpShowsOff: -h tells the settings that take a word.
func TestSettingsHelpShowsOff(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	fs := (&config{}).flagSet(&b)
	fs.Usage()
	for _, want := range []string{"-refresh duration|off", "-max-concurrent-calls n|unlimited", "-call-timeout duration\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-h does not show %q", want)
		}
	}
	_ = time.Second
}

// TestHelpGroupsEveryFlag: -h lists the flags by purpose, every flag in
// one group (none left under "Other"), each group under its title.
func TestHelpGroupsEveryFlag(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	fs := (&config{}).flagSet(&b)
	fs.Usage()
	help := b.String()
	if strings.Contains(help, "\nOther:\n") {
		t.Errorf("-h lists flags under Other: add them to helpGroups\n%s", help[strings.Index(help, "\nOther:\n"):])
	}
	inGroup := map[string]int{}
	for _, g := range helpGroups {
		if !strings.Contains(help, "\n"+g.title+":\n") {
			t.Errorf("-h has no group %q", g.title)
		}
		for _, name := range g.flags {
			inGroup[name]++
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if inGroup[f.Name] != 1 {
			t.Errorf("flag -%s is in %d help groups, want 1", f.Name, inGroup[f.Name])
		}
	})
}

// TestMainFlagDefaults: the defaults README.md's short table of the
// most-used flags shows are the ones -h shows (each flag's DefValue);
// docs/configuration.md, generated, shows every flag's.
func TestMainFlagDefaults(t *testing.T) {
	t.Parallel()
	fs := (&config{}).flagSet(io.Discard)
	for name, want := range map[string]string{
		"backend": "", "demo": "false", "config": "", "listen": "127.0.0.1:8080", "stdio": "false", "plaintext": "false",
		"backend-ca": "", "backend-cert": "", "backend-key": "", "call-timeout": "30s",
		"include": "", "exclude": "", "tool-mode": "auto", "bearer-tokens-file": "", "oauth-jwks-url": "", "log-level": "info",
	} {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("no flag --%s", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s defaults to %q, README.md says %q", name, f.DefValue, want)
		}
	}
}
