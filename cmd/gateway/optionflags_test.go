package main

import (
	"context"
	"errors"
	"fmt"
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
