package gateway

import (
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
)

// TestEffectiveMode: auto lists typed tools while tools/list's estimated
// tokens (JSON bytes / 4) are within the tool budget and search beyond;
// Off (--tool-budget unlimited) is always typed; typed and
// search do not look at the size.
func TestEffectiveMode(t *testing.T) {
	for _, tc := range []struct {
		mode      ToolMode
		budget    int
		listBytes int
		want      ToolMode
	}{
		{ToolModeAuto, 1000, 4003, ToolModeTyped}, // 1000 tokens
		{ToolModeAuto, 1000, 4004, ToolModeSearch},
		{ToolModeAuto, Off, 1 << 30, ToolModeTyped},
		{ToolModeTyped, 1000, 1 << 30, ToolModeTyped},
		{ToolModeSearch, 1000, 100, ToolModeSearch},
	} {
		g := &Gateway{opts: Options{Search: SearchOptions{ToolMode: tc.mode, ToolBudget: tc.budget}}}
		if got := g.effectiveMode(tc.listBytes); got != tc.want {
			t.Errorf("%s, budget %d, %d bytes: %s, want %s", tc.mode, tc.budget, tc.listBytes, got, tc.want)
		}
	}
}

// TestMetaInputErrorsReadAsTyped: search mode's two tools start an
// invalid-arguments message as the typed tools do, so a model reads
// them alike.
func TestMetaInputErrorsReadAsTyped(t *testing.T) {
	if searchmode.InputErrorPrefix != call.InputErrorPrefix {
		t.Errorf("search mode's input errors start %q, the typed tools' %q", searchmode.InputErrorPrefix, call.InputErrorPrefix)
	}
}
