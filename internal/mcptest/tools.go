package mcptest

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolNames returns the names tools/list gives cs, in its order, failing
// the test when the call fails.
func ToolNames(t testing.TB, ctx context.Context, cs *sdk.ClientSession) []string {
	t.Helper()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	return names
}
