package gateway

import (
	"context"
	"sync/atomic"

	"github.com/grpc-mcp-gateway/gateway/gateway/describe"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// Retries of calls to methods safe to repeat are grpc-go's (the retry
// policy in each backend's service config, channel.go); the gateway only
// decides which methods and counts the retries for the metrics.

// safeToRepeat is the one decision of whether the gateway may call a
// method twice: what its owners declared makes it idempotent, in the
// (mcpgateway.v1.tool) option (idempotent_hint, or read_only_hint), its
// idempotency_level, or its HTTP rule's verb. A verb of the method's name
// tells the model what the tool likely does (describe's verb table), but
// a guess is no ground for repeating a call the backend may have done:
// the model may be told a tool is idempotent that the gateway does not
// retry, never the other way round.
func safeToRepeat(a *describe.Method, to *mcpgatewayv1.Tool) bool {
	switch {
	case to != nil && to.IdempotentHint != nil:
		return to.GetIdempotentHint()
	case to != nil && to.GetReadOnlyHint():
		return true
	}
	h, src := a.Hints()
	return h.Idempotent && (src.Idempotent == describe.FromIdempotencyLevel || src.Idempotent == describe.FromHTTPRule)
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
