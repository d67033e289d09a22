package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestOptionsThatCannotBeOff: New refuses Off for an option that must
// keep a bound, naming the option, instead of quietly using its default.
func TestOptionsThatCannotBeOff(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]*gateway.Options{
		"Options.CallTimeout":       {CallTimeout: gateway.Off},
		"Options.StreamTimeout":     {StreamTimeout: gateway.Off},
		"Options.StreamMaxMessages": {StreamMaxMessages: gateway.Off},
		"Options.StreamMaxBytes":    {StreamMaxBytes: -5},
		"Options.DiscoveryTimeout":  {DiscoveryTimeout: gateway.Off},
	} {
		_, err := gateway.New(context.Background(), nil, opts)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Off: %v, want an error naming it", name, err)
		}
	}
}
