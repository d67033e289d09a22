package gateway

import (
	"context"
	"sync/atomic"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Retries of calls to methods safe to repeat are grpc-go's (the retry
// policy in each backend's service config, channel.go); the gateway only
// decides which methods and counts the retries for the metrics.

// safeToRepeat is the one decision of whether calling a method twice is
// harmless: its tool says it is idempotent. The hint comes from the
// service owners' (mcpgateway.v1.tool) option, the method's
// idempotency_level, the HTTP rule's verb, or the verb table's reads and
// removes rows (methodAnnotations, describe.Method.Hints), so what the
// model is told and what the gateway retries never disagree.
func safeToRepeat(a *mcp.ToolAnnotations) bool {
	return a != nil && a.IdempotentHint != nil && *a.IdempotentHint
}

// attemptsKey carries an *attempts in a call's context.
type attemptsKey struct{}

// attempts counts the attempts grpc-go makes for one call: the replica
// picks that returned a replica (replicas.go). A stats handler would see
// attempts too, but grpc-go copies every received message for stats
// handlers, which costs a large response dearly; a pick costs a context
// lookup. A transparent retry (a stream that never reached the server)
// picks again too and so counts, as does grpc-go picking again when the
// replica picked was no longer READY (its picker had not caught up yet),
// which is no retry: the counter can run slightly high while replicas go
// down.
type attempts struct{ n atomic.Int32 }

// withAttempts makes ctx count the attempts of the call made with it.
func withAttempts(ctx context.Context) (context.Context, *attempts) {
	a := &attempts{}
	return context.WithValue(ctx, attemptsKey{}, a), a
}

// retries is how many attempts followed the first.
func (a *attempts) retries() int {
	if a == nil {
		return 0
	}
	return max(int(a.n.Load())-1, 0)
}
