package gateway_test

import (
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// TestModesAsText: the enum options read and write their names, so
// cmd/gateway binds them with flag.TextVar and a config file's value is
// parsed by the option type itself.
func TestModesAsText(t *testing.T) {
	t.Parallel()
	for _, m := range []gateway.ToolMode{gateway.ToolModeAuto, gateway.ToolModeTyped, gateway.ToolModeSearch} {
		b, err := m.MarshalText()
		var got gateway.ToolMode
		if err != nil || got.UnmarshalText(b) != nil || got != m || string(b) != m.String() {
			t.Errorf("ToolMode %v: %q %v, read back %v", m, b, err, got)
		}
	}
	for _, m := range []gateway.InputErrorMode{gateway.InputErrorsTool, gateway.InputErrorsProtocol} {
		b, err := m.MarshalText()
		var got gateway.InputErrorMode
		if err != nil || got.UnmarshalText(b) != nil || got != m || string(b) != m.String() {
			t.Errorf("InputErrorMode %v: %q %v, read back %v", m, b, err, got)
		}
	}
	var tm gateway.ToolMode
	if err := tm.UnmarshalText([]byte("typd")); err == nil || err.Error() != `want "auto", "typed" or "search"` {
		t.Errorf("ToolMode typd: %v", err)
	}
	var im gateway.InputErrorMode
	if err := im.UnmarshalText([]byte("loud")); err == nil || err.Error() != `want "tool" or "protocol"` {
		t.Errorf("InputErrorMode loud: %v", err)
	}
	if _, err := gateway.ToolMode(7).MarshalText(); err == nil {
		t.Error("ToolMode(7) marshalled")
	}
}
