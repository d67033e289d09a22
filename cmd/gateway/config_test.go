package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
)

// noEnv is an empty environment, so tests do not see the runner's.
func noEnv(string) (string, bool) { return "", false }

func env(kv ...string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// yamlKeys are the yaml tags of a struct type.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("yaml"))
	}
	return keys
}

// TestConfigKeys: every flag but the meta flags and --backend is a
// config key of the same name in snake_case, set by the flag's own Set
// (backends: stands for --backend); a key that is no flag's is an error
// naming it, with a hint when it is a flag's name misspelled.
func TestConfigKeys(t *testing.T) {
	t.Parallel()
	fs := (&config{}).flagSet(io.Discard)
	fs.VisitAll(func(f *flag.Flag) {
		key := flagKey(f.Name)
		got := settingFlag(fs, key)
		switch {
		case metaFlags[f.Name] || f.Name == "backend":
			if got != nil {
				t.Errorf("--%s is a config key %q; it must not be", f.Name, key)
			}
		case got != f:
			t.Errorf("flag --%s has no config key %q", f.Name, key)
		}
	})
	for key, want := range map[string]string{
		"listen_addr":  `unknown key "listen_addr"`,
		"call-timeout": `unknown key "call-timeout": keys are written in snake_case, call_timeout`,
		"backend":      `unknown key "backend": backends are a list under backends:`,
		"check_config": `unknown key "check_config": --check-config is for the command line only`,
	} {
		p := writeFile(t, "gateway.yaml", key+": x\n")
		if _, err := parseConfig([]string{"--config", p}, io.Discard, noEnv); err == nil || !strings.Contains(err.Error(), p+":1: "+want) {
			t.Errorf("key %s: %v, want %q", key, err, want)
		}
	}
}

// TestExampleConfigHasEveryKey: examples/config/gateway.yaml, the
// commented example, shows every key of every level, each top-level key
// at its flag's default (read by the flag's own Set), and its backends
// decode strictly.
func TestExampleConfigHasEveryKey(t *testing.T) {
	t.Parallel()
	cf, err := loadConfig("../../examples/config/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fs := (&config{}).flagSet(io.Discard)
	if err := applyFile(fs, cf, map[string]bool{}, origins{}, nil); err != nil {
		t.Fatal(err)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if settingFlag(fs, flagKey(f.Name)) == nil {
			return
		}
		if _, ok := cf.doc.lines[flagKey(f.Name)]; !ok {
			t.Errorf("example config does not show %s", flagKey(f.Name))
		}
		if f.Value.String() != f.DefValue {
			t.Errorf("example config gives %s %q; its default is %q", flagKey(f.Name), f.Value.String(), f.DefValue)
		}
	})
	if len(cf.backends) != 1 || len(cf.backends[0].Methods) == 0 {
		t.Fatalf("example: want one backend with methods, got %+v", cf.backends)
	}
	want := []string{"backends"}
	for _, k := range yamlKeys(reflect.TypeFor[fileBackend]()) {
		want = append(want, "backends[0]."+k)
	}
	for _, k := range yamlKeys(reflect.TypeFor[fileMethod]()) {
		want = append(want, "backends[0].methods[0]."+k)
	}
	want = append(want, "toolsets")
	for _, k := range yamlKeys(reflect.TypeFor[fileToolset]()) {
		want = append(want, "toolsets[0]."+k)
	}
	want = append(want, "tools")
	for _, k := range yamlKeys(reflect.TypeFor[fileTool]()) {
		want = append(want, "tools[0]."+k)
	}
	for _, k := range yamlKeys(reflect.TypeFor[fileArgument]()) {
		shown := false
		for _, a := range []string{"enclosure_id", "species", "page_size"} {
			_, ok := cf.doc.lines["tools[0].arguments."+a+"."+k]
			shown = shown || ok
		}
		if !shown {
			t.Errorf("example config does not show an argument's %s", k)
		}
	}
	for _, k := range want {
		// A per-method key may be shown in any entry of methods.
		shown := false
		for i := range len(cf.backends[0].Methods) {
			if _, ok := cf.doc.lines[strings.Replace(k, "methods[0]", fmt.Sprintf("methods[%d]", i), 1)]; ok {
				shown = true
			}
		}
		if !shown {
			t.Errorf("example config does not show %s", k)
		}
	}
}

func TestConfigMinimal(t *testing.T) {
	p := writeFile(t, "gateway.yaml", "backends:\n  - name: zoo\n    address: 127.0.0.1:50051\n    plaintext: true\n")
	c, err := parseConfig([]string{"--config", p}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.backends.parsed) != 1 {
		t.Fatalf("backends: %+v", c.backends.parsed)
	}
	b := c.backends.parsed[0]
	if b.name != "zoo" || b.addr != "127.0.0.1:50051" || b.file == nil || b.file.tls == nil || !b.file.tls.Plaintext {
		t.Errorf("backend: %+v %+v", b, b.file)
	}
	if c.opts.Calls.Timeout != 30*time.Second || c.listen != "127.0.0.1:8080" {
		t.Errorf("defaults changed: call timeout %s, listen %s", c.opts.Calls.Timeout, c.listen)
	}
}

// testPKI writes a CA certificate and a client key pair signed by it.
func testPKI(t *testing.T) (ca, cert, key string) {
	t.Helper()
	dir := t.TempDir()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for p, b := range map[string][]byte{ca: certPEM, cert: certPEM, key: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// TestConfigFull: a file setting every kind of key reaches the config and
// the per-backend settings.
func TestConfigFull(t *testing.T) {
	ca, cert, key := testPKI(t)
	tokens := writeFile(t, "tokens", "secret\n")
	p := writeFile(t, "gateway.yaml", `
backends:
  - name: east
    address: east.internal:443
    ca: `+ca+`
    cert: `+cert+`
    key: `+key+`
    server_name: zoo.internal
    metadata: {x-tenant: acme, trace-bin: AAEC}
    include: ["zoo.v1.ZooService"]
    exclude: ["*/Delete*"]
    call_timeout: 10s
    stream_timeout: 2m
    methods:
      - match: zoo.v1.ZooService/WatchFeedings
        stream_timeout: 10m
      - match: "*/ResetZoo"
        hidden: true
  - name: west
    address: 127.0.0.1:50052
listen: 0.0.0.0:9090
call_timeout: 20s
stream_timeout: 1m
stream_max_messages: 50
stream_max_bytes: 1024
discovery_timeout: 3s
shutdown_grace: 7s
input_errors: protocol
json_names: proto
tool_mode: search
tool_budget: 1000
expose_health: true
expose_internal: true
allow_origin: [https://app.example.com]
include: ["zoo.v1.*"]
exclude: ["*/GetTaxonomy"]
refresh: off
require_backends: true
bearer_tokens_file: `+tokens+`
forward_header: [x-request-id]
metadata: {x-caller: gateway}
metrics: false
log_arguments: true
log_level: debug
log_format: json
`)
	c, err := parseConfig([]string{"--config", p}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.listen, c.opts.Calls.Timeout, c.opts.Calls.StreamTimeout, c.opts.Calls.StreamMaxMessages, c.opts.Calls.StreamMaxBytes, c.opts.Catalog.DiscoveryTimeout, c.shutdownGrace,
		c.opts.Calls.InputErrors, c.jsonNames, c.opts.Search.ToolMode, c.opts.Search.ToolBudget, c.opts.Catalog.ExposeHealth, c.opts.Catalog.ExposeInternal, []string(c.allowOrigins), []string(c.opts.Catalog.Include), []string(c.opts.Catalog.Exclude),
		c.opts.Catalog.Refresh, c.opts.Catalog.RequireBackends, c.front.bearerTokensFile, []string(c.front.forwardHeaders), c.front.md.Get("x-caller"),
		c.obs.metrics, c.opts.Telemetry.LogArguments, c.logLevel, c.logFormat}
	want := []any{"0.0.0.0:9090", 20 * time.Second, time.Minute, 50, int64(1024), 3 * time.Second, 7 * time.Second,
		gateway.InputErrorsProtocol, "proto", gateway.ToolModeSearch, 1000, true, true, []string{"https://app.example.com"}, []string{"zoo.v1.*"}, []string{"*/GetTaxonomy"},
		time.Duration(gateway.Off), true, tokens, []string{"x-request-id"}, []string{"gateway"},
		false, true, "debug", "json"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n got %v\nwant %v", got, want)
	}
	if len(c.backends.parsed) != 2 {
		t.Fatalf("backends: %+v", c.backends.parsed)
	}
	east := c.backends.parsed[0].file
	if east.tls == nil || east.tls.CAFile != ca || east.tls.ServerName != "zoo.internal" || east.tls.Plaintext {
		t.Errorf("east TLS: %+v", east.tls)
	}
	b := east.backend
	if b.Metadata.Get("x-tenant")[0] != "acme" || b.Metadata.Get("trace-bin")[0] != "\x00\x01\x02" ||
		b.CallTimeout != 10*time.Second || b.StreamTimeout != 2*time.Minute ||
		!slices.Equal(b.Include, []string{"zoo.v1.ZooService"}) || len(b.Methods) != 2 ||
		b.Methods[0].StreamTimeout != 10*time.Minute || !b.Methods[1].Hidden {
		t.Errorf("east settings: %+v", b)
	}
	if west := c.backends.parsed[1].file; west.tls != nil {
		t.Errorf("west sets no TLS and must inherit the global settings, got %+v", west.tls)
	}
	bs, conns, err := c.backends.dial(c.tls)
	for _, conn := range conns {
		conn.Close()
	}
	if err != nil || len(bs) != 2 || bs[0].CallTimeout != 10*time.Second || bs[1].Name != "west" {
		t.Errorf("dial: %v %+v", err, bs)
	}
}

// TestConfigPrecedence: flag > environment > file > default, for a scalar
// in every combination; a list on the command line or in a variable
// replaces the file's.
func TestConfigPrecedence(t *testing.T) {
	p := writeFile(t, "gateway.yaml", "call_timeout: 10s\nlog_level: warn\ninclude: [a.A]\nbackends:\n  - {name: zoo, address: 127.0.0.1:1}\n")
	cases := []struct {
		name string
		args []string
		env  func(string) (string, bool)
		want time.Duration
	}{
		{"default", nil, noEnv, 30 * time.Second},
		{"file", []string{"--config", p}, noEnv, 10 * time.Second},
		{"flag over file", []string{"--config", p, "--call-timeout", "20s"}, noEnv, 20 * time.Second},
		{"env over file", []string{"--config", p}, env("GATEWAY_CALL_TIMEOUT", "40s"), 40 * time.Second},
		{"flag over env", []string{"--call-timeout", "20s"}, env("GATEWAY_CALL_TIMEOUT", "40s"), 20 * time.Second},
		{"flag over env over file", []string{"--config", p, "--call-timeout", "20s"}, env("GATEWAY_CALL_TIMEOUT", "40s"), 20 * time.Second},
		{"flag before --config", []string{"--call-timeout", "20s", "--config", p}, noEnv, 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.args, io.Discard, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.opts.Calls.Timeout != tc.want {
				t.Errorf("call timeout %s, want %s", c.opts.Calls.Timeout, tc.want)
			}
		})
	}

	c, err := parseConfig([]string{"--config", p, "--include", "b.B", "--backend", "127.0.0.1:2"}, io.Discard, env("GATEWAY_LOG_LEVEL", "error", "GATEWAY_INCLUDE", "ignored.C"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.opts.Catalog.Include, []string{"b.B"}) {
		t.Errorf("include %v: the command line's list replaces the variable's and the file's", c.opts.Catalog.Include)
	}
	if len(c.backends.parsed) != 1 || c.backends.parsed[0].addr != "127.0.0.1:2" || c.backends.parsed[0].file != nil {
		t.Errorf("--backend must replace the file's backends: %+v", c.backends.parsed)
	}
	if c.logLevel != "error" {
		t.Errorf("log level %q, want the environment's", c.logLevel)
	}

	// Lists from variables: values separated by whitespace, replacing the
	// file's; GATEWAY_BACKEND replaces the file's backends (a value with
	// commas is one backend's replicas).
	c, err = parseConfig([]string{"--config", p}, io.Discard,
		env("GATEWAY_INCLUDE", "c.C  d.D\n", "GATEWAY_BACKEND", "a=127.0.0.1:3,127.0.0.1:4 b=127.0.0.1:5"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.opts.Catalog.Include, []string{"c.C", "d.D"}) {
		t.Errorf("GATEWAY_INCLUDE: include %v, want [c.C d.D]", c.opts.Catalog.Include)
	}
	if len(c.backends.parsed) != 2 || c.backends.parsed[0].addr != "127.0.0.1:3,127.0.0.1:4" || c.backends.parsed[1].name != "b" || c.backends.parsed[0].file != nil {
		t.Errorf("GATEWAY_BACKEND must replace the file's backends: %+v", c.backends.parsed)
	}
}

// TestDemoOnlyWhenNothingNamesABackend: the demo runs when nothing names a
// backend, or with --demo; a config file or descriptor files without a
// backend are exit-2 mistakes that say what to add.
func TestDemoOnlyWhenNothingNamesABackend(t *testing.T) {
	empty := writeFile(t, "gateway.yaml", "call_timeout: 10s\n")
	for _, tc := range []struct {
		name string
		args []string
		env  func(string) (string, bool)
		demo bool
		err  string
	}{
		{"nothing", nil, noEnv, true, ""},
		{"--demo", []string{"--demo"}, noEnv, true, ""},
		{"a backend", []string{"--backend", "127.0.0.1:1"}, noEnv, false, ""},
		{"a backend from a variable", nil, env("GATEWAY_BACKEND", "127.0.0.1:1"), false, ""},
		{"--demo and a backend", []string{"--demo", "--backend", "127.0.0.1:1"}, noEnv, false, "give --demo or --backend, not both"},
		{"a file without backends", []string{"--config", empty}, noEnv, false, "names no backend: add a backends: entry"},
		{"a file without backends, and --demo", []string{"--config", empty, "--demo"}, noEnv, true, ""},
		{"a file without backends, and --backend", []string{"--config", empty, "--backend", "127.0.0.1:1"}, noEnv, false, ""},
		{"descriptor files without a backend", []string{"--descriptor-set", "../../descriptors/testdata/zoo.binpb"}, noEnv, false, "add --backend NAME=HOST:PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.args, io.Discard, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.demo != tc.demo {
				t.Errorf("demo %v, want %v", c.demo, tc.demo)
			}
		})
	}
}

// TestConfigErrors: every way a file can be wrong is reported with the
// file, the line and the key.
func TestConfigErrors(t *testing.T) {
	ca, cert, _ := testPKI(t)
	cases := []struct {
		name, file string
		env        func(string) (string, bool)
		want       string // "FILE" stands for the file's path
	}{
		{"unknown key", "backends:\n  - name: zoo\n    address: 127.0.0.1:1\n    plaintxt: true\n", noEnv, `FILE:4: unknown key "plaintxt" in backends[0]`},
		{"unknown top-level key", "listen: 127.0.0.1:1\nlisten_addr: x\n", noEnv, `FILE:2: unknown key "listen_addr"`},
		{"unknown method key", "backends:\n  - address: 127.0.0.1:1\n    methods:\n      - match: a.B/C\n        timeout: 1s\n", noEnv, `FILE:5: unknown key "timeout" in backends[0].methods[0]`},
		{"bad duration", "shutdown_grace: soon\n", noEnv, `FILE:1: shutdown_grace: invalid value "soon": want a duration such as 30s, or 0 for the default (15s)`},
		{"bad backend duration", "backends:\n  - address: 127.0.0.1:1\n    call_timeout: 5\n", noEnv, `FILE:3: backends[0].call_timeout: want a duration`},
		{"negative duration", "\ncall_timeout: -1s\n", noEnv, `FILE:2: call_timeout: want a positive duration, got -1s`},
		{"negative backend duration", "backends:\n  - address: 127.0.0.1:1\n    stream_timeout: -1s\n", noEnv, `FILE:3: backends[0].stream_timeout: want a positive duration, got -1s`},
		{"backend duration off", "backends:\n  - address: 127.0.0.1:1\n    call_timeout: off\n", noEnv, `FILE:3: backends[0].call_timeout: want a positive duration (this setting may not be off), got "off"`},
		{"off where not allowed", "\ncall_timeout: off\n", noEnv, `FILE:2: call_timeout: invalid value "off": want a duration such as 30s, or 0 for the default (30s)`},
		{"bad bool", "expose_health: maybe\n", noEnv, `FILE:1: expose_health: invalid value "maybe": want true or false`},
		{"list of lists", "include: [[a.B]]\n", noEnv, `FILE:1: include[0]: want a string, got a list`},
		{"mapping for scalar", "listen: {a: b}\n", noEnv, `FILE:1: listen: want a string, got a mapping`},
		{"bad value overridden", "shutdown_grace: soon\n", env("GATEWAY_SHUTDOWN_GRACE", "5s"), `FILE:1: shutdown_grace: invalid value "soon"`},
		{"bad enum", "input_errors: loud\n", noEnv, `FILE:1: input_errors: invalid value "loud": want "tool" or "protocol"`},
		{"bad log level", "log_level: chatty\n", noEnv, `FILE:1: log_level: want debug, info, warn or error`},
		{"wrong type", "stream_max_messages: many\n", noEnv, `FILE:1: stream_max_messages: invalid value "many": want a whole number, or 0 for the default (10000)`},
		{"list for scalar", "listen: [a, b]\n", noEnv, `FILE:1: listen: want a string, got a list`},
		{"duplicate key", "listen: a:1\nlisten: b:2\n", noEnv, `FILE:2: mapping key "listen" already defined`},
		{"syntax", "backends: [\n", noEnv, `FILE:1:`},
		{"backend without address", "backends:\n  - name: zoo\n", noEnv, `FILE:2: backends[0]: address is required`},
		{"bad lb", "backends:\n  - address: a:1\n    lb: random\n", noEnv, `FILE:3: backends[0].lb: want "round_robin" or "pick_first", got "random"`},
		{"bad keepalive", "backends:\n  - address: a:1\n    keepalive: 1s\n", noEnv, `FILE:3: backends[0].keepalive: want "off" (no pings) or at least 10s (grpc-go's minimum), got 1s`},
		{"bad max_recv_bytes", "backends:\n  - address: a:1\n    max_recv_bytes: lots\n", noEnv, `FILE:3: backends[0].max_recv_bytes: want a whole number or "unlimited", got "lots"`},
		{"bad retry", "backends:\n  - address: a:1\n    retry: sometimes\n", noEnv, `FILE:3: backends[0].retry: want "on" or "off", got "sometimes"`},
		{"bad global retry", "retry: sometimes\n", noEnv, `FILE:1: retry: want "on" or "off", got "sometimes"`},
		{"unix target", "backends:\n  - address: unix://host/x.sock\n", noEnv, `FILE:2: backends[0].address: backend address "unix://host/x.sock": a unix target names a path`},
		{"bad address", "backends:\n  - name: zoo\n    address: zoo\n", noEnv, `FILE:3: backends[0].address: backend address "zoo": want HOST:PORT`},
		{"duplicate backend names", "backends:\n  - name: zoo\n    address: a:1\n  - name: zoo\n    address: b:1\n", noEnv, `FILE:4: backends[1].name: the name "zoo" is used twice (first at FILE:2)`},
		{"unnamed among several", "backends:\n  - address: a:1\n  - address: b:1\n", noEnv, `FILE:2: backends[0]: name is required when there are several backends`},
		{"bad backend name", "backends:\n  - name: Zoo\n    address: a:1\n", noEnv, `FILE:2: backends[0].name: backend name "Zoo"`},
		{"missing CA file", "backends:\n  - address: a:1\n    ca: /absent/ca.pem\n", noEnv, `FILE:3: backends[0].ca: open /absent/ca.pem: no such file or directory`},
		{"CA not PEM", "backends:\n  - address: a:1\n    ca: FILE\n", noEnv, `FILE:3: backends[0].ca: FILE: no PEM certificates found`},
		{"cert without key", "backends:\n  - address: a:1\n    cert: " + cert + "\n", noEnv, `FILE:3: backends[0].cert: cert and key must be given together`},
		{"cert not matching key", "backends:\n  - address: a:1\n    cert: " + cert + "\n    key: " + ca + "\n", noEnv, `FILE:3: backends[0].cert: tls: `},
		{"plaintext with TLS", "backends:\n  - address: a:1\n    plaintext: true\n    ca: " + ca + "\n", noEnv, `FILE:3: backends[0].plaintext: plaintext cannot be combined`},
		{"bad metadata", "backends:\n  - address: a:1\n    metadata: {grpc-status: '0'}\n", noEnv, `FILE:3: backends[0].metadata: "grpc-status": grpc- keys are reserved`},
		{"bad pattern", "backends:\n  - address: a:1\n    include: ['zoo.[/*']\n", noEnv, `FILE:3: backends[0].include[0] "zoo.[/*": syntax error in pattern`},
		{"method without match", "backends:\n  - address: a:1\n    methods:\n      - hidden: true\n", noEnv, `FILE:4: backends[0].methods[0]: match is required`},
		{"no_reflection without files", "backends:\n  - address: a:1\n    no_reflection: true\n", noEnv, `FILE:3: backends[0].no_reflection: needs descriptor_set or proto`},
		{"missing descriptor set", "backends:\n  - address: a:1\n    descriptor_set: [/absent.binpb]\n", noEnv, `FILE:3: backends[0].descriptor_set: descriptor set: open /absent.binpb`},
		{"global file reference", "\n\ntls_cert: /absent.pem\ntls_key: /absent.key\n", noEnv, `FILE:3: tls_cert/tls_key: open /absent.pem`},
		{"global pattern", "include: ['[']\n", noEnv, `FILE:1: include: "[/*": syntax error in pattern`},
		{"bad environment value", "", env("GATEWAY_CALL_TIMEOUT", "soon"), `GATEWAY_CALL_TIMEOUT: invalid value "soon": want a duration such as 30s, or 0 for the default (30s)`},
		{"bad environment enum", "", env("GATEWAY_JSON_NAMES", "camel"), `GATEWAY_JSON_NAMES: want "json" or "proto", got "camel"`},
		{"not a mapping", "- a\n- b\n", noEnv, `FILE: want a mapping of settings`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "gateway.yaml", "")
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(tc.file, "FILE", p)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := parseConfig([]string{"--config", p}, io.Discard, tc.env)
			want := strings.ReplaceAll(tc.want, "FILE", p)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nwant it to contain %s", err, want)
			}
		})
	}
	_, err := parseConfig([]string{"--config", "/absent/gateway.yaml"}, io.Discard, noEnv)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/absent/gateway.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestCheckConfig runs --check-config on the built binary: 0 and a count
// for a valid file, 1 naming the line for an invalid one, 2 for a command
// line that cannot be parsed. Nothing is started, so a backend address
// that nothing listens on is fine.
func TestCheckConfig(t *testing.T) {
	good := writeFile(t, "good.yaml", "backends:\n  - name: zoo\n    address: 127.0.0.1:1\n    plaintext: true\n  - name: other\n    address: 127.0.0.1:2\n")
	bad := writeFile(t, "bad.yaml", "backends:\n  - name: zoo\n    address: 127.0.0.1:1\n    plaintxt: true\n")
	cases := []struct {
		name   string
		args   []string
		env    []string
		code   int
		stdout string
		stderr string
	}{
		{"valid", []string{"--check-config", good}, nil, 0, "config OK: 2 backends\n", ""},
		{"invalid", []string{"--check-config", bad}, nil, 1, "", bad + `:4: unknown key "plaintxt" in backends[0]`},
		{"invalid environment", []string{"--check-config", good}, []string{"GATEWAY_STREAM_MAX_BYTES=-1"}, 1, "", "GATEWAY_STREAM_MAX_BYTES: want a positive number of bytes"},
		{"missing file", []string{"--check-config", "/absent.yaml"}, nil, 1, "", "open /absent.yaml"},
		{"global TLS file", []string{"--check-config", good, "--backend-ca", "/absent-ca.pem"}, nil, 1, "", "--backend-ca: open /absent-ca.pem"},
		{"bad flag", []string{"--check-config", good, "--nope"}, nil, 2, "", "flag provided but not defined: -nope"},
		{"two files", []string{"--check-config", good, "--config", bad}, nil, 1, "", "name different files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, tc.args...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout %q, stderr %q", code, tc.code, stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^grpc-mcp-gateway dev \(commit \S+, ` + regexp.QuoteMeta(runtime.Version()) + ` \S+/\S+\)\n$`)
	if !re.Match(out) {
		t.Errorf("--version printed %q", out)
	}
	// -ldflags sets both, as the Dockerfile does.
	bin := filepath.Join(t.TempDir(), "gateway")
	if b, err := exec.Command("go", "build", "-o", bin, "-ldflags", "-X main.version=v9.9.9 -X main.commit=abc123", ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	out, err = exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "grpc-mcp-gateway v9.9.9 (commit abc123, go") {
		t.Errorf("--version with -ldflags: %q %v", out, err)
	}
}

// The operation settings come from the file like every other: the
// gateway-wide keys and the per-method override.
func TestConfigOperationWait(t *testing.T) {
	p := writeFile(t, "gateway.yaml", `
backends:
  - name: jobs
    address: 127.0.0.1:50051
    methods:
      - match: "*/Create*"
        operation_wait: -1s
operation_wait: 45s
operation_cancel: true
`)
	c, err := parseConfig([]string{"--config", p}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.Calls.OperationWait != 45*time.Second || !c.opts.Calls.OperationCancel {
		t.Errorf("operation_wait %s, operation_cancel %v", c.opts.Calls.OperationWait, c.opts.Calls.OperationCancel)
	}
	if m := c.backends.parsed[0].file.backend.Methods; len(m) != 1 || m[0].OperationWait != -time.Second {
		t.Errorf("per-method operation_wait: %+v", m)
	}
	if c, err := parseConfig([]string{"--operation-wait", "0s"}, io.Discard, noEnv); err != nil || c.opts.Calls.OperationWait != gateway.DefaultOperationWait {
		t.Errorf("--operation-wait 0 is the default: %v, %v", c.opts.Calls.OperationWait, err)
	}
	if c, err := parseConfig([]string{"--operation-wait", "off"}, io.Discard, noEnv); err != nil || c.opts.Calls.OperationWait != gateway.Off {
		t.Errorf("--operation-wait off: %v, %v", c.opts.Calls.OperationWait, err)
	}
}

// TestConfigMethodTimeout: --method-timeout's GLOB=DURATION values come
// from the flag, the file's method_timeout list or GATEWAY_METHOD_TIMEOUT
// (values separated by spaces), and a bad one in the file names its line.
func TestConfigMethodTimeout(t *testing.T) {
	poll := gateway.MethodTimeout{Match: "temporal.api.workflowservice.v1.WorkflowService/Poll*", Timeout: 70 * time.Second}
	report := gateway.MethodTimeout{Match: "*/ExportReport", Timeout: 2 * time.Minute}
	p := writeFile(t, "gateway.yaml", `method_timeout: ["temporal.api.workflowservice.v1.WorkflowService/Poll*=70s", "*/ExportReport=2m"]
backends:
  - {name: temporal, address: 127.0.0.1:7233}
`)
	for _, tc := range []struct {
		name string
		args []string
		env  func(string) (string, bool)
	}{
		{"flag", []string{"--backend", "127.0.0.1:7233", "--method-timeout", "temporal.api.workflowservice.v1.WorkflowService/Poll*=70s", "--method-timeout", "*/ExportReport=2m"}, noEnv},
		{"file", []string{"--config", p}, noEnv},
		{"variable", []string{"--backend", "127.0.0.1:7233"}, env("GATEWAY_METHOD_TIMEOUT", "temporal.api.workflowservice.v1.WorkflowService/Poll*=70s */ExportReport=2m")},
	} {
		c, err := parseConfig(tc.args, io.Discard, tc.env)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(c.methodDeadlines, []gateway.MethodTimeout{poll, report}) {
			t.Errorf("%s: %+v", tc.name, c.methodDeadlines)
		}
	}
	bad := writeFile(t, "gateway.yaml", "backends:\n  - {name: temporal, address: 127.0.0.1:7233}\nmethod_timeout: [\"*/Poll*=off\"]\n")
	if _, err := parseConfig([]string{"--config", bad}, io.Discard, noEnv); err == nil ||
		!strings.Contains(err.Error(), `gateway.yaml:3: method_timeout */Poll*: want a positive duration such as 70s`) {
		t.Errorf("bad value in the file: %v", err)
	}
}

// TestBackendConnSettings: the backend connection flags are every
// backend's defaults, and a config file backend's own keys win for it.
func TestBackendConnSettings(t *testing.T) {
	p := writeFile(t, "gateway.yaml", `
backend_keepalive: off
backends:
  - name: a
    address: 127.0.0.1:1,127.0.0.1:2
  - name: b
    address: unix:///run/b.sock
    lb: pick_first
    keepalive: 1m
    max_recv_bytes: 1000
    max_send_bytes: unlimited
    retry: off
`)
	c, err := parseConfig([]string{"--config", p, "--backend-max-recv-bytes", "2000", "--retry", "on"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	backends, conns, err := c.backends.dial(c.tls)
	for _, conn := range conns {
		defer conn.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]backendconn.Options{}
	for i, b := range backends {
		got[b.Name] = conns[i].Options()
	}
	want := map[string]backendconn.Options{
		"a": {LB: backendconn.LBRoundRobin, Keepalive: -1, MaxRecvBytes: 2000, MaxSendBytes: backendconn.DefaultMaxMessageBytes},
		"b": {LB: backendconn.LBPickFirst, Keepalive: time.Minute, MaxRecvBytes: 1000, MaxSendBytes: math.MaxInt32, NoRetry: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("connection options (-want +got):\n%s", diff)
	}
}

// TestBudgetBackendTransportDefaults pins the defaults README.md states
// for the result budget, backend connections and transport limits to the
// numbers it gives, so a changed default fails here until the README says
// the new one.
func TestBudgetBackendTransportDefaults(t *testing.T) {
	c, err := parseConfig(nil, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	for _, d := range []struct {
		flag      string
		got, want any
	}{
		{"max-result-bytes", c.opts.Results.MaxBytes, 40000},
		{"result-ttl", c.opts.Results.TTL, 10 * time.Minute},
		{"result-store-bytes", c.opts.Results.StoreBytes, int64(64 * mib)},
		{"result-store-entries", c.opts.Results.StoreEntries, 1000},
		{"refresh", c.opts.Catalog.Refresh, 30 * time.Second},
		{"backend-lb", c.backends.conn.lb, "round_robin"},
		{"backend-keepalive", c.backends.conn.keepalive, 5 * time.Minute},
		{"backend-max-recv-bytes", c.backends.conn.maxRecv, 16 * mib},
		{"backend-max-send-bytes", c.backends.conn.maxSend, 16 * mib},
		{"retry", c.backends.conn.retry, "on"},
		{"stream-max-bytes", c.opts.Calls.StreamMaxBytes, int64(4 * mib)},
		{"max-request-bytes", c.transports.maxRequestBytes, int64(4 * mib)},
		{"ws-max-message-bytes", c.transports.wsMaxMessageBytes, int64(4 * mib)},
		{"read-timeout", c.transports.readTimeout, 20 * time.Second},
		{"max-concurrent-calls", c.transports.maxConcurrentCalls, 64},
		{"max-in-flight", c.transports.maxInFlight, 1024},
		{"max-in-flight-per-principal", c.transports.maxInFlightPerPrin, 0}, // half of --max-in-flight
		{"max-task-polls", c.transports.maxTaskPolls, 100},
		{"result-store-bytes-per-principal", c.opts.Results.StoreBytesPerPrincipal, int64(0)}, // half of --result-store-bytes
		{"result-store-entries-per-principal", c.opts.Results.StoreEntriesPerPrincipal, 0},    // half of --result-store-entries
		{"max-batch", c.transports.maxBatch, 100},
		{"max-sessions", c.transports.maxSessions, 10000},
		{"ws-max-connections", c.transports.wsMaxConnections, 10000},
		{"max-sessions-per-principal", c.transports.maxSessionsPerPrin, 1000},
		{"session-idle-timeout", c.transports.sessionIdleTimeout, 10 * time.Minute},
		{"session-ttl", c.transports.sessionTTL, 24 * time.Hour},
	} {
		if d.got != d.want {
			t.Errorf("--%s defaults to %v, README.md says %v", d.flag, d.got, d.want)
		}
	}
}
