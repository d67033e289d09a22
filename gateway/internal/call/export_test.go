package call

import "github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"

// SetWireHook sets wireHook for one test, returning what restores it.
func SetWireHook(f func(t *compiled.Tool, wire []byte)) (restore func()) {
	old := wireHook.Swap(&f)
	return func() { wireHook.Store(old) }
}
