package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// binary is the gateway built once for the test run (testkit): the tests
// run the real program in a subprocess, as a user or an MCP client would.
var binary string

func TestMain(m *testing.M) {
	var err error
	if binary, err = testkit.BuildGateway(); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "gateway-test")
	if err != nil {
		panic(err)
	}
	// The default --proto-cache is the user cache directory: the tests'
	// compiles, and the binaries they run, write theirs here instead.
	if err := os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			println(err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

func TestStdio(t *testing.T) {
	addr := zootest.Start(t)
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.Command(binary, "--stdio", "--backend", addr)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			client := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Errorf("negotiated %s, want %s", got, v)
			}

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) == 0 {
				t.Fatal("no tools")
			}

			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
			if err != nil || res.IsError {
				t.Fatalf("GetAnimal: %v %+v", err, res)
			}
			if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, `"leo"`) {
				t.Errorf("GetAnimal text: %s", txt)
			}
			if v >= "2025-06-18" && res.StructuredContent == nil {
				t.Error("no structuredContent")
			}

			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "nobody"}})
			if err != nil || !res.IsError || !strings.HasPrefix(res.Content[0].(*sdk.TextContent).Text, "NOT_FOUND: ") {
				t.Errorf("GetAnimal nobody: %v %+v", err, res)
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": true}})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "id: expected a string") {
				t.Errorf("GetAnimal bad id: %v %+v", err, res)
			}
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "Nope", Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 {
				t.Errorf("unknown tool: want -32602, got %v", err)
			}
		})
	}
}

// TestDemoMode runs the README's first command: no backend, so the gateway
// starts the bundled zoo, prints how to connect, serves, and exits 0 on
// SIGTERM.
func TestDemoMode(t *testing.T) {
	cmd := exec.Command(binary, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	urlRE := regexp.MustCompile(`MCP \(Streamable HTTP\) at (http://\S+/mcp)`)
	lines := bufio.NewScanner(stderr)
	var url string
	var banner strings.Builder
	for url == "" && lines.Scan() {
		banner.WriteString(lines.Text() + "\n")
		if m := urlRE.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no MCP URL printed:\n%s", banner.String())
	}
	for lines.Scan() {
		banner.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "claude mcp add --transport http") {
			break
		}
	}
	if !strings.Contains(banner.String(), "claude mcp add --transport http grpc "+url) {
		t.Errorf("no Claude Code line in:\n%s", banner.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "demo-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_ListAnimals", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("ListAnimals: %v %+v", err, res)
	}
	cs.Close()

	terminate(t, cmd)
}

// TestStartupErrors: bad flags exit 2, a backend that cannot be used exits
// 1 with --require-backends, each with one line that names the flag or
// backend and the fix.
func TestStartupErrors(t *testing.T) {
	noReflection := zootest.Start(t, zoo.WithoutReflection())
	zooAddr, is := zootest.Start(t), newIssuer(t)
	twoLineKey := filepath.Join(t.TempDir(), "embeddings.key")
	if err := os.WriteFile(twoLineKey, []byte("sk-one\nsk-two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	longSecret := filepath.Join(t.TempDir(), "long-secret")
	if err := os.WriteFile(longSecret, []byte(strings.Repeat("s", 48)), 0o600); err != nil {
		t.Fatal(err)
	}
	shortSecret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(shortSecret, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"input-errors", []string{"--input-errors", "loud"}, 2, `invalid value "loud" for flag -input-errors: want "tool" or "protocol"`},
		{"json-names", []string{"--json-names", "camel"}, 2, `--json-names: want "json" or "proto"`},
		{"tool-mode", []string{"--tool-mode", "lazy"}, 2, `invalid value "lazy" for flag -tool-mode: want "auto", "typed" or "search"`},
		{"search-embeddings model", []string{"--search-embeddings", "http://127.0.0.1:1/v1/embeddings"}, 2, `--search-embeddings-model: required with --search-embeddings`},
		{"search-embeddings plain http", []string{"--search-embeddings", "http://embed.example.com/v1/embeddings", "--search-embeddings-model", "m"}, 2, `--search-embeddings: embeddings URL http://embed.example.com/v1/embeddings: plain http is allowed only to a loopback host; use https`},
		{"search-embeddings alone", []string{"--search-embeddings-model", "m"}, 2, `--search-embeddings-model and --search-embeddings-key-file need --search-embeddings URL`},
		{"search-embeddings key file", []string{"--search-embeddings", "https://e.example.com/v1/embeddings", "--search-embeddings-model", "m", "--search-embeddings-key-file", "absent.key"}, 2, `--search-embeddings-key-file: open absent.key`},
		{"search-embeddings key file two lines", []string{"--search-embeddings", "https://e.example.com/v1/embeddings", "--search-embeddings-model", "m", "--search-embeddings-key-file", twoLineKey}, 2, `: holds more than one line or a control character; the file must hold the key alone`},
		{"search-embeddings URL credentials", []string{"--search-embeddings", "https://u:p@e.example.com/v1/embeddings", "--search-embeddings-model", "m"}, 2, `--search-embeddings: embeddings URL https://u:xxxxx@e.example.com/v1/embeddings: credentials in the URL would be logged with its errors`},
		{"tool-budget", []string{"--tool-budget", "lots"}, 2, `invalid value "lots" for flag -tool-budget: want a whole number, 0 for the default (40000), or "unlimited"`},
		{"backend form", []string{"--backend", "zoo"}, 2, `--backend: backend address "zoo": want HOST:PORT, NAME=HOST:PORT or a gRPC target`},
		{"backend name", []string{"--backend", "Zoo=127.0.0.1:1"}, 2, `--backend Zoo=127.0.0.1:1: backend name "Zoo": want 1-32 characters of a-z, 0-9`},
		{"unnamed among several", []string{"--backend", "127.0.0.1:1", "--backend", "b=127.0.0.1:2"}, 2, `with several backends each needs a name`},
		{"backend name twice", []string{"--backend", "a=127.0.0.1:1", "--backend", "a=127.0.0.1:2"}, 2, `--backend: the name "a" is used twice`},
		{"include pattern", []string{"--include", "zoo.v1.[/*"}, 2, `--include: "zoo.v1.[/*": syntax error in pattern`},
		{"refresh", []string{"--refresh", "soon"}, 2, `invalid value "soon" for flag -refresh: want a duration such as 30s, 0 for the default (30s), or "off"`},
		{"descriptor set missing", []string{"--descriptor-set", "absent.binpb"}, 2, `--descriptor-set: descriptor set: open absent.binpb`},
		{"descriptor set not one", []string{"--descriptor-set", "main.go"}, 2, `--descriptor-set: descriptor set main.go: not a binary FileDescriptorSet`},
		{"proto compile error", []string{"--proto-path", "testdata", "--proto", "broken.proto"}, 2, `--proto: proto files: broken.proto:3:`},
		{"proto path alone", []string{"--proto-path", "x"}, 2, `--proto-path needs --proto`},
		{"two kinds of files", []string{"--descriptor-set", "a", "--proto", "b"}, 2, `choose one way to give descriptor files`},
		{"no-reflection alone", []string{"--no-reflection"}, 2, `--no-reflection needs --descriptor-set or --proto`},
		{"listen form", []string{"--listen", "8080"}, 2, `--listen: want HOST:PORT`},
		{"public listener without auth", []string{"--listen", "0.0.0.0:0"}, 2, `--listen 0.0.0.0:0: not a loopback address, and no authentication is configured, so anyone who can connect could call every tool; add --bearer-tokens-file FILE or --oauth-jwks-url URL, or listen on 127.0.0.1, or pass --allow-unauthenticated`},
		{"all interfaces without auth", []string{"--listen", ":8080"}, 2, `--listen :8080: not a loopback address`},
		{"allowed-host form", []string{"--allowed-host", "https://mcp.example.com"}, 2, `--allowed-host: want a host name such as mcp.example.com`},
		{"admin-listen form", []string{"--admin-listen", "9090"}, 2, `--admin-listen: want HOST:PORT`},
		{"positional", []string{"extra"}, 2, `unexpected argument "extra"`},
		{"unknown flag", []string{"--nope"}, 2, `flag provided but not defined: -nope`},
		{"call-timeout", []string{"--call-timeout", "off"}, 2, `invalid value "off" for flag -call-timeout: want a duration such as 30s, or 0 for the default (30s)`},
		{"call-timeout negative", []string{"--call-timeout", "-1s"}, 2, `--call-timeout: want a positive duration`},
		{"stream-timeout", []string{"--stream-timeout", "-1s"}, 2, `--stream-timeout: want a positive duration`},
		{"method-timeout form", []string{"--method-timeout", "70s"}, 2, `--method-timeout: want GLOB=DURATION, e.g. 'temporal.api.workflowservice.v1.WorkflowService/Poll*=70s', got "70s"`},
		{"method-timeout no glob", []string{"--method-timeout", "=70s"}, 2, `--method-timeout: want GLOB=DURATION`},
		{"method-timeout pattern", []string{"--method-timeout", "zoo.v1.[/*=70s"}, 2, `--method-timeout "zoo.v1.[/*": syntax error in pattern`},
		{"method-timeout duration", []string{"--method-timeout", "*/Poll*=soon"}, 2, `--method-timeout */Poll*: want a positive duration such as 70s after '=' (a call always has a deadline), got "soon"`},
		{"method-timeout zero", []string{"--method-timeout", "*/Poll*=0s"}, 2, `--method-timeout */Poll*: want a positive duration such as 70s after '='`},
		{"method-timeout off", []string{"--method-timeout", "*/Poll*=off"}, 2, `--method-timeout */Poll*: want a positive duration such as 70s after '=' (a call always has a deadline), got "off"`},
		{"method-timeout negative", []string{"--method-timeout", "*/Poll*=-1s"}, 2, `got "-1s"`},
		{"stream-max-messages", []string{"--stream-max-messages", "-1"}, 2, `--stream-max-messages: want a positive number`},
		{"stream-max-bytes", []string{"--stream-max-bytes", "-1"}, 2, `--stream-max-bytes: want a positive number of bytes`},
		{"max-result-bytes", []string{"--max-result-bytes", "100"}, 2, `--max-result-bytes: want at least 1024 bytes, or "unlimited" for no budget, got 100`},
		{"result-ttl", []string{"--result-ttl", "-1s"}, 2, `--result-ttl: want a positive duration`},
		{"max-concurrent-calls", []string{"--max-concurrent-calls", "many"}, 2, `invalid value "many" for flag -max-concurrent-calls: want a whole number, 0 for the default (64), or "unlimited"`},
		{"max-request-bytes", []string{"--max-request-bytes", "-1"}, 2, `--max-request-bytes: want a positive number of bytes`},
		{"max-in-flight-per-principal", []string{"--max-in-flight-per-principal", "many"}, 2, `invalid value "many" for flag -max-in-flight-per-principal: want a whole number, 0 for the default, or "unlimited"`},
		{"max-in-flight-per-principal over the gateway's", []string{"--max-in-flight", "8", "--max-in-flight-per-principal", "9"}, 2, `--max-in-flight-per-principal: want at most --max-in-flight (8), 0 for half of it, or "unlimited", got 9`},
		{"max-task-polls", []string{"--max-task-polls", "-1"}, 2, `--max-task-polls: want a positive number, got -1`},
		{"max-task-polls unlimited", []string{"--max-task-polls", "unlimited"}, 2, `invalid value "unlimited" for flag -max-task-polls: want a whole number, or 0 for the default (100)`},
		{"result-store-bytes-per-principal", []string{"--result-store-bytes", "1000", "--result-store-bytes-per-principal", "2000"}, 2, `--result-store-bytes-per-principal: want at most --result-store-bytes (1000), 0 for half of it, or "unlimited", got 2000`},
		{"result-store-entries-per-principal", []string{"--result-store-entries-per-principal", "lots"}, 2, `invalid value "lots" for flag -result-store-entries-per-principal: want a whole number, 0 for the default, or "unlimited"`},
		{"result-store-entries-per-principal over the store's", []string{"--result-store-entries-per-principal", "1001"}, 2, `--result-store-entries-per-principal: want at most --result-store-entries (1000), 0 for half of it, or "unlimited", got 1001`},
		{"session secret missing", []string{"--session-secret-file", "/nonexistent/secret"}, 2, `--session-secret-file: open /nonexistent/secret`},
		{"session secret short", []string{"--session-secret-file", shortSecret}, 2, `want at least 32 bytes of secret, got 5`},
		{"state without a session secret", []string{"--state", "redis://127.0.0.1:1/0"}, 2, `--state needs --session-secret-file: the replicas of a fleet share sessions through tokens signed with that secret`},
		{"state scheme", []string{"--state", "http://127.0.0.1:1"}, 2, `--state: state URL "http://127.0.0.1:1": want redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) or unix:///PATH, not scheme "http"`},
		{"state password in an error", []string{"--state", "redis://u:s3cret@127.0.0.1:1/x"}, 2, `--state: state URL "redis://u:xxxxx@127.0.0.1:1/x"`},
		{"state with stdio", []string{"--state", "redis://127.0.0.1:1/0", "--stdio"}, 2, `--state: a fleet serves HTTP; with --stdio there is one client and nothing to share`},
		{"state prefix", []string{"--state", "redis://127.0.0.1:1/0", "--session-secret-file", longSecret, "--state-prefix", "a b"}, 2, `--state-prefix: state prefix "a b": want 1-64 of a-z A-Z 0-9 _ - . :`},
		{"state password file alone", []string{"--state-password-file", "pw"}, 2, `--state-password-file: set without --state`},
		{"state password file missing", []string{"--state", "redis://127.0.0.1:1/0", "--session-secret-file", longSecret, "--state-password-file", "/nonexistent/pw"}, 2, `--state-password-file: open /nonexistent/pw`},
		{"state-ca without TLS", []string{"--state", "redis://127.0.0.1:1/0", "--session-secret-file", longSecret, "--state-ca", "ca.pem"}, 2, `--state-ca: the store is reached over TLS only with a rediss:// --state`},
		{"state-ca not PEM", []string{"--state", "rediss://127.0.0.1:1/0", "--session-secret-file", longSecret, "--state-ca", "main.go"}, 2, `--state-ca main.go: no PEM certificate in the file`},
		{"state down at start", []string{"--state", "redis://127.0.0.1:1/0", "--session-secret-file", longSecret, "--listen", "127.0.0.1:0"}, 1, `--state redis://127.0.0.1:1/0: the state store is unavailable: dial tcp 127.0.0.1:1: connect: connection refused (start it, fix the address or --state-password-file, or set --require-state=false to start without it)`},
		{"log-level", []string{"--log-level", "loud"}, 2, `--log-level: want debug, info, warn or error`},
		{"half mTLS", []string{"--backend", "example.com:443", "--backend-cert", "c.pem", "--stdio"}, 1, `--backend-cert and --backend-key must be given together`},
		{"unreachable", []string{"--backend", "127.0.0.1:1", "--discovery-timeout", "3s", "--stdio", "--require-backends"}, 1, `backend 127.0.0.1:1 is unreachable`},
		{"unreachable socket", []string{"--backend", "zoo=unix:///nonexistent/zoo.sock", "--discovery-timeout", "3s", "--stdio", "--require-backends"}, 1, `backend zoo is unreachable at unix:///nonexistent/zoo.sock: check the address`},
		{"unknown scheme", []string{"--backend", "zoo=xds:///zoo"}, 2, `--backend: backend address "xds:///zoo": grpc-go has no resolver for the scheme "xds"`},
		{"no reflection", []string{"--backend", noReflection, "--stdio", "--require-backends"}, 1, `does not serve gRPC server reflection`},
		{"half TLS listener", []string{"--tls-cert", "c.pem"}, 2, `--tls-cert and --tls-key must be given together`},
		{"TLS files", []string{"--tls-cert", "absent.pem", "--tls-key", "absent.key"}, 2, `--tls-cert/--tls-key: open absent.pem`},
		{"tokens file", []string{"--bearer-tokens-file", "absent-tokens"}, 2, `--bearer-tokens-file: open absent-tokens`},
		{"two auth modes", []string{"--bearer-tokens-file", "t", "--oauth-jwks-url", "https://as.example.com/jwks"}, 2, `choose one authentication mode`},
		{"oauth issuer", []string{"--oauth-jwks-url", "https://as.example.com/jwks"}, 2, `--oauth-issuer is required with --oauth-jwks-url`},
		{"oauth audience", []string{"--oauth-jwks-url", "https://as.example.com/jwks", "--oauth-issuer", "https://as.example.com"}, 2, `--oauth-audience (or --oauth-resource) is required`},
		{"oauth resource", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-resource", "mcp"}, 2, `--oauth-resource: want an absolute URI`},
		{"oauth flag alone", []string{"--oauth-required-scope", "mcp"}, 2, `--oauth-required-scope needs --oauth-jwks-url`},
		{"tool scope form", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--oauth-tool-scope", "x"}, 2, `--oauth-tool-scope: want RULE=SCOPE (RULE: a tool name or a package.Service/Method pattern; SCOPE: one scope), got "x"`},
		{"tool scope pattern", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--oauth-tool-scope", "zoo.v1.[/*=zoo:admin"}, 2,
			`--oauth-tool-scope: "zoo.v1.[/*": syntax error in pattern; want a tool name (1-64 of A-Z a-z 0-9 _ -, e.g. ZooService_DeleteAnimal) or a method pattern on package.Service/Method (e.g. zoo.v1.ZooService/DeleteAnimal, zoo.v1.ZooService/*, zoo.v1.*)`},
		{"tool scope glob on a tool name", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--oauth-tool-scope", "ZooService_*=zoo:admin"}, 2,
			`--oauth-tool-scope: "ZooService_*": not a tool name, and without '/' or '.' not a method pattern either; want a tool name`},
		{"tool scope two slashes", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--oauth-tool-scope", "zoo.v1.ZooService/Get/Animal=zoo:read"}, 2,
			`--oauth-tool-scope: "zoo.v1.ZooService/Get/Animal": more than one '/'`},
		{"tool scope with a space", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--oauth-tool-scope", "zoo.v1.ZooService/Delete Animal=zoo:admin"}, 2,
			`--oauth-tool-scope: "zoo.v1.ZooService/Delete Animal": " " cannot appear in a method name or a glob`},
		{"strict-scopes needs oauth", []string{"--strict-scopes"}, 2, `--strict-scopes needs --oauth-jwks-url`},
		{"list-visible-only needs oauth", []string{"--list-visible-only"}, 2, `--list-visible-only needs --oauth-jwks-url`},
		{"toolsets-only without toolsets", []string{"--toolsets-only"}, 2, `--toolsets-only needs toolsets`},
		{"stdio-toolset without stdio", []string{"--stdio-toolset", "a"}, 2, `--stdio-toolset needs --stdio`},
		{"toolset named message", []string{"--config", writeFile(t, "message-toolset.yaml", "toolsets:\n  - name: message\n")}, 2, `"message" is reserved`},
		{"token exchange needs oauth", []string{"--backend-token-exchange", "https://as.example.com/token"}, 2, `--backend-token-exchange needs --oauth-jwks-url`},
		{"token exchange flags need its url", []string{"--backend-token-exchange-client-id", "gw"}, 2, `the --backend-token-exchange-* flags need --backend-token-exchange`},
		{"token exchange without a credential", append(is.args(), "--backend-token-exchange", "https://as.example.com/token", "--backend-token-exchange-client-id", "gw",
			"--backend-token-exchange-audience", "zoo"), 2, `--backend-token-exchange: a client credential is required: a secret file (--backend-token-exchange-secret-file`},
		{"toolset bad name", []string{"--config", writeFile(t, "bad-toolset.yaml", "toolsets:\n  - name: Billing\n"), "--backend", "zoo=" + zooAddr, "--listen", "127.0.0.1:0"}, 2,
			`toolsets[0].name: "Billing": want 1 to 63 of a-z 0-9 _ -`},
		{"toolset scope needs oauth", []string{"--config", writeFile(t, "scoped-toolset.yaml", "toolsets:\n  - name: a\n    required_scope: [x]\n")}, 2,
			`toolsets[0].required_scope: needs --oauth-jwks-url`},
		{"forward-claim needs oauth", []string{"--forward-claim", "sub=x-user-id"}, 2, `--forward-claim needs --oauth-jwks-url`},
		{"hop-by-hop", []string{"--forward-header", "Connection"}, 2, `--forward-header: "Connection" is a hop-by-hop header`},
		{"proxy header", []string{"--forward-header", "Proxy-Authorization"}, 2, `hop-by-hop`},
		{"grpc header", []string{"--forward-header", "grpc-timeout"}, 2, `--forward-header: "grpc-timeout": grpc- keys are reserved`},
		{"metadata form", []string{"--metadata", "novalue"}, 2, `--metadata: want KEY=VALUE, got "novalue"`},
		{"metadata reserved", []string{"--metadata", "grpc-status=0"}, 2, `--metadata: "grpc-status": grpc- keys are reserved`},
		{"metadata bin", []string{"--metadata", "trace-bin=%%%"}, 2, `--metadata: trace-bin: a -bin key needs a base64 value`},
		{"auth on stdio", []string{"--stdio", "--bearer-tokens-file", "t"}, 2, `--bearer-tokens-file applies to HTTP only`},
		// Token passthrough: the client's token is for the gateway.
		{"forward authorization with bearer", []string{"--bearer-tokens-file", "main.go", "--forward-header", "authorization"}, 2, `--forward-header authorization: refused while --bearer-tokens-file or --oauth-jwks-url is on`},
		{"forward Authorization with oauth", []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a", "--forward-header", "Authorization"}, 2, `--forward-claim CLAIM=HEADER, or the backend's own credential with --metadata authorization=`},
		{"jwks over http", []string{"--oauth-jwks-url", "http://as.example.com/jwks", "--oauth-issuer", "i", "--oauth-audience", "a"}, 2, `--oauth-jwks-url http://as.example.com/jwks: the JWKS must be fetched over https`},
		{"jwks unreachable", []string{"--backend", noReflection, "--listen", "127.0.0.1:0", "--oauth-jwks-url", "http://127.0.0.1:1/jwks", "--oauth-issuer", "i", "--oauth-audience", "a"}, 1, `fetching the JWKS from http://127.0.0.1:1/jwks`},
	}
	run := func(t *testing.T, args, env []string, code int, want string) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != code {
			t.Fatalf("exit: %v, want code %d\nstderr:\n%s", err, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr.String())
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { run(t, c.args, nil, c.code, c.want) })
	}
	// An error gateway.New finds about an option (a *gateway.OptionError:
	// here a tool scope rule that matches no tool once the backend is
	// discovered, refused with --strict-scopes) names the setting as the
	// operator gave it: the flag, the variable, or the file's line and key.
	strict := append(is.args(), "--backend", "zoo="+zooAddr, "--listen", "127.0.0.1:0", "--strict-scopes")
	const rule, unmatched = "zoo.v1.ZooService/Delete=zoo:admin", `: "zoo.v1.ZooService/Delete": tool scope rule matches no tool, and strict scopes refuse to start with it`
	config := writeFile(t, "strict.yaml", "# a rule that names no method\noauth_tool_scope:\n  zoo.v1.ZooService/Delete: zoo:admin\n")
	for _, c := range []struct {
		name      string
		args, env []string
		want      string
	}{
		{"strict scopes unmatched by flag", append(slices.Clone(strict), "--oauth-tool-scope", "zoo.v1.ZooService/DeleteAnimal=zoo:admin", "--oauth-tool-scope", rule), nil,
			"gateway: --oauth-tool-scope" + unmatched},
		{"strict scopes unmatched by variable", strict, []string{"GATEWAY_OAUTH_TOOL_SCOPE=zoo.v1.ZooService/DeleteAnimal=zoo:admin " + rule},
			"gateway: GATEWAY_OAUTH_TOOL_SCOPE" + unmatched},
		{"strict scopes unmatched in the config file", append(slices.Clone(strict), "--config", config), nil,
			"gateway: " + config + ":2: oauth_tool_scope" + unmatched},
	} {
		t.Run(c.name, func(t *testing.T) { run(t, c.args, c.env, 2, c.want) })
	}
	// So does a value of the wrong shape that the library checks (a
	// method glob, a forwarded header, a metadata key, a tool scope rule),
	// found before anything starts.
	oauth := []string{"--oauth-jwks-url", "https://as/jwks", "--oauth-issuer", "i", "--oauth-audience", "a"}
	shapes := writeFile(t, "shapes.yaml", "# wrong shapes\nexclude: ['zoo.v1.[']\n")
	headers := writeFile(t, "headers.yaml", "# wrong shapes\nforward_header: [Keep-Alive]\n")
	scopes := writeFile(t, "scopes.yaml", "# wrong shapes\n\noauth_tool_scope:\n  zoo.v1.Zoo/A/B: zoo:admin\n")
	for _, c := range []struct {
		name      string
		args, env []string
		want      string
	}{
		{"include by variable", nil, []string{"GATEWAY_INCLUDE=zoo.v1.*/Get* zoo.v1.[/*"}, `gateway: GATEWAY_INCLUDE: "zoo.v1.[/*": syntax error in pattern (want a glob on package.Service/Method`},
		{"exclude in the config file", []string{"--config", shapes}, nil, "gateway: " + shapes + `:2: exclude: "zoo.v1.[/*": syntax error in pattern`},
		{"forward-header by variable", nil, []string{"GATEWAY_FORWARD_HEADER=x-user Upgrade"}, `gateway: GATEWAY_FORWARD_HEADER: "Upgrade" is a hop-by-hop header and is never forwarded`},
		{"forward-header in the config file", []string{"--config", headers}, nil, "gateway: " + headers + `:2: forward_header: "Keep-Alive" is a hop-by-hop header`},
		{"metadata by variable", nil, []string{"GATEWAY_METADATA=grpc-status=0"}, `gateway: GATEWAY_METADATA: "grpc-status": grpc- keys are reserved for gRPC itself`},
		{"tool scope by variable", oauth, []string{"GATEWAY_OAUTH_TOOL_SCOPE=zoo.v1.[/*=zoo:admin"}, `gateway: GATEWAY_OAUTH_TOOL_SCOPE: "zoo.v1.[/*": syntax error in pattern; want a tool name`},
		{"tool scope in the config file", append(slices.Clone(oauth), "--config", scopes), nil, "gateway: " + scopes + `:3: oauth_tool_scope: "zoo.v1.Zoo/A/B": more than one '/'`},
	} {
		t.Run(c.name, func(t *testing.T) { run(t, c.args, c.env, 2, c.want) })
	}
}

// startServing runs the gateway over HTTP with args and returns its base
// URL (without /mcp); the process ends with the test.
func startServing(t *testing.T, args ...string) string {
	t.Helper()
	return startGatewayProcess(t, args...).base
}

func getReadyz(t *testing.T, base string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("readyz body: %v", err)
	}
	return resp.StatusCode, body
}

// TestUnreachableBackendStarts: without --require-backends, a backend that
// is down at start does not stop the gateway: it logs one line naming the
// backend, the cause and the fix, serves the others, and /readyz says
// which one is missing.
func TestUnreachableBackendStarts(t *testing.T) {
	zooAddr := zootest.Start(t)
	p := startGatewayProcess(t, "--backend", "zoo="+zooAddr, "--backend", "gone=127.0.0.1:1", "--discovery-timeout", "2s")
	base := p.base
	var warned string
	for _, line := range strings.Split(p.logs.String(), "\n") {
		if strings.Contains(line, "backend not available at start") {
			warned = line
		}
	}
	if !strings.Contains(warned, "backend gone is unreachable at 127.0.0.1:1: check the address, that the server is running") {
		t.Errorf("no one-line warning naming the backend, the cause and the fix:\n%s", p.logs.String())
	}
	code, body := getReadyz(t, base)
	if code != http.StatusServiceUnavailable || body["ready"] != false {
		t.Fatalf("readyz: %d %v, want 503 and ready false", code, body)
	}
	backends, _ := body["backends"].(map[string]any)
	gone, _ := backends["gone"].(map[string]any)
	if gone["discovered"] != false || !strings.Contains(fmt.Sprint(gone["error"]), "unreachable") {
		t.Errorf("readyz gone: %v", gone)
	}
	if z, _ := backends["zoo"].(map[string]any); z["ready"] != true || z["discovered"] != true {
		t.Errorf("readyz zoo: %v", z)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "late-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil || res.IsError {
		t.Fatalf("GetAnimal through the reachable backend: %v %+v", err, res)
	}
}

// TestTwoBackendsCommandLine: two named backends serving the same API get
// their tools prefixed by backend name, filters apply, and /readyz is 200.
func TestTwoBackendsCommandLine(t *testing.T) {
	a, b := zootest.Start(t), zootest.Start(t)
	base := startServing(t, "--backend", "east="+a, "--backend", "west="+b, "--include", "zoo.v1.ZooService/Get*", "--exclude", "*/GetTaxonomy")
	if code, body := getReadyz(t, base); code != http.StatusOK || body["ready"] != true {
		t.Fatalf("readyz: %d %v", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "two-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := testkit.ToolNames(t, ctx, cs)
	want := []string{"east_ZooService_GetAnimal", "east_ZooService_GetNextFeedingTime", "west_ZooService_GetAnimal", "west_ZooService_GetNextFeedingTime"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// terminate sends SIGTERM and checks the gateway exits 0 in time.
func terminate(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway did not exit after SIGTERM")
	}
}

// TestSearchModeBinary: the built gateway with --tool-mode search over
// stdio lists search_tools and call_tool, finds a tool by intent and
// calls it through call_tool.
func TestSearchModeBinary(t *testing.T) {
	addr := zootest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "--stdio", "--backend", addr, "--tool-mode", "search")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "search-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	names := testkit.ToolNames(t, ctx, cs)
	if !slices.Equal(names, []string{"search_tools", "call_tool"}) {
		t.Fatalf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "look up an animal", "limit": 1}})
	if err != nil || res.IsError {
		t.Fatalf("search_tools: %v %+v", err, res)
	}
	if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, `"name":"ZooService_GetAnimal"`) {
		t.Errorf("search_tools: %s", txt)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "ZooService_GetAnimal", "arguments": map[string]any{"id": "leo"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"leo"`) {
		t.Errorf("call_tool GetAnimal: %v %+v", err, res)
	}
}
