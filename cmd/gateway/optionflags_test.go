package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestInSettingWords: an error the library raises about an option
// reaches the operator naming the setting as given (the flag, the
// variable, the file's line and key), with the part of the option's path
// below the setting's, and keeps what it wraps; an error about no
// setting's option is left as it is.
func TestInSettingWords(t *testing.T) {
	t.Parallel()
	c := &config{from: origins{"discovery-timeout": "GATEWAY_DISCOVERY_TIMEOUT", "oauth-tool-scope": "gateway.yaml:7: oauth_tool_scope"}}
	for _, tc := range []struct {
		option string
		want   string
	}{
		{"Options.Catalog.DiscoveryTimeout", "GATEWAY_DISCOVERY_TIMEOUT: backend big: too slow"},
		{"OAuthConfig.ToolScopes", "gateway.yaml:7: oauth_tool_scope: backend big: too slow"},
		{"Options.Calls.Timeout", "--call-timeout: backend big: too slow"},
		{"Options.FrontDoor.Toolsets[1].Name", "toolsets[1].Name: backend big: too slow"},
		{"Options.FrontDoor.ToolsetsOnly", "--toolsets-only: backend big: too slow"},
		{"Options.Calls.MethodTimeouts[0].Timeout", "gateway: Options.Calls.MethodTimeouts[0].Timeout: backend big: too slow"},
	} {
		in := fmt.Errorf("gateway: %w", &gateway.OptionError{Option: tc.option, Err: fmt.Errorf("backend big: too slow: %w", context.DeadlineExceeded)})
		err := c.inSettingWords(in)
		if got := err.Error(); got != tc.want+": "+context.DeadlineExceeded.Error() {
			t.Errorf("%s: %q, want %q", tc.option, got, tc.want)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: lost the error it wraps", tc.option)
		}
	}
	plain := errors.New("nothing to restate")
	if err := c.inSettingWords(plain); err != plain {
		t.Errorf("an error about no option: %v", err)
	}
}

// TestOptionErrorsNameTheSetting: a bad value of a setting whose option
// the library checks (a method glob, a forwarded header, a metadata key,
// a tool scope rule) is refused naming the setting as the operator gave
// it, from the library's *gateway.OptionError (no message is rewritten):
// the flag, the variable, or the config file's line and key, then the
// value and what was expected.
func TestOptionErrorsNameTheSetting(t *testing.T) {
	t.Parallel()
	oauth := []string{"--oauth-jwks-url", "https://as.example.com/jwks", "--oauth-issuer", "i", "--oauth-audience", "a"}
	for _, tc := range []struct {
		flag, value string // the command line's --flag value
		env         string // GATEWAY_* value
		yaml        string // the config file's line for the key, after a comment line
		option      string
		want        string // what follows the setting's name
	}{
		{"include", "zoo.v1.[/*", "zoo.v1.[/*", `include: ['zoo.v1.[/*']`, "Options.Catalog.Include",
			`: "zoo.v1.[/*": syntax error in pattern (want a glob on package.Service/Method, e.g. zoo.v1.ZooService/*)`},
		{"exclude", "", "zoo.v1.[", `exclude: ['zoo.v1.[']`, "Options.Catalog.Exclude", `: "zoo.v1.[/*": syntax error in pattern (want a glob`},
		{"forward-header", "Connection", "Connection", "forward_header: [Connection]", "Options.Calls.ForwardHeaders",
			`: "Connection" is a hop-by-hop header and is never forwarded`},
		{"forward-header", "grpc-timeout", "grpc-timeout", "forward_header: [grpc-timeout]", "Options.Calls.ForwardHeaders",
			`: "grpc-timeout": grpc- keys are reserved for gRPC itself`},
		{"metadata", "grpc-status=0", "grpc-status=0", "metadata: {grpc-status: '0'}", "Options.Calls.Metadata",
			`: "grpc-status": grpc- keys are reserved for gRPC itself`},
		{"metadata", "novalue", "novalue", "", "Options.Calls.Metadata", `: want KEY=VALUE, got "novalue"`},
		{"oauth-tool-scope", "zoo.v1.[/*=zoo:admin", "zoo.v1.[/*=zoo:admin", "oauth_tool_scope: {'zoo.v1.[/*': 'zoo:admin'}", "OAuthConfig.ToolScopes",
			`: "zoo.v1.[/*": syntax error in pattern; want a tool name (1-64 of A-Z a-z 0-9 _ -, e.g. ZooService_DeleteAnimal) or a method pattern on package.Service/Method`},
		{"oauth-tool-scope", "ZooService_*=zoo:admin", "ZooService_*=zoo:admin", "oauth_tool_scope: {'ZooService_*': 'zoo:admin'}", "OAuthConfig.ToolScopes",
			`: "ZooService_*": not a tool name, and without '/' or '.' not a method pattern either; want a tool name`},
		{"oauth-tool-scope", "x", "x", "", "OAuthConfig.ToolScopes", `: want RULE=SCOPE (RULE: a tool name or a package.Service/Method pattern; SCOPE: one scope), got "x"`},
	} {
		t.Run(tc.flag+" "+tc.value+tc.yaml, func(t *testing.T) {
			t.Parallel()
			check := func(from string, err error, where string) {
				t.Helper()
				var oe *gateway.OptionError
				if !errors.As(err, &oe) || oe.Option != tc.option {
					t.Errorf("%s: %v, want a *gateway.OptionError on %s", from, err, tc.option)
				}
				if err == nil || !strings.HasPrefix(err.Error(), where+tc.want) {
					t.Errorf("%s: %v\nwant it to start %s%s", from, err, where, tc.want)
				}
			}
			if tc.value != "" {
				_, err := parseConfig(append(slices.Clone(oauth), "--"+tc.flag, tc.value), io.Discard, noEnv)
				check("flag", err, "--"+tc.flag)
			}
			_, err := parseConfig(oauth, io.Discard, env(envName(tc.flag), tc.env))
			check("variable", err, envName(tc.flag))
			if tc.yaml != "" {
				p := writeFile(t, "gateway.yaml", "# the gateway\n"+tc.yaml+"\n")
				_, err := parseConfig(append(slices.Clone(oauth), "--config", p), io.Discard, noEnv)
				check("config file", err, p+":2: "+flagKey(tc.flag))
			}
		})
	}
}
