package backendconn

import (
	"context"
	"sync/atomic"
)

// Retries of calls to methods safe to repeat are grpc-go's (the retry
// policy in each connection's service config, channel.go); the connection
// only writes the policy for the methods its user names (SetDiscovered)
// and counts the attempts, for the user's metrics.

// attemptsKey carries an *Attempts in a call's context.
type attemptsKey struct{}

// Attempts counts the attempts grpc-go makes for one call: the replica
// picks that returned a replica (replicas.go). A stats handler would see
// attempts too, but grpc-go copies every received message for stats
// handlers, which costs a large response dearly; a pick costs a context
// lookup. A transparent retry (a stream that never reached the server)
// picks again too and so counts, as does grpc-go picking again when the
// replica picked was no longer READY (its picker had not caught up yet),
// which is no retry: the counter can run slightly high while replicas go
// down. Only the calls of a Conn count: other connections never look.
type Attempts struct{ n atomic.Int32 }

// CountAttempts makes ctx count the attempts of the call made with it on
// a Conn; read the count with Retries once the call has returned.
func CountAttempts(ctx context.Context) (context.Context, *Attempts) {
	a := &Attempts{}
	return context.WithValue(ctx, attemptsKey{}, a), a
}

// Retries is how many attempts followed the first; 0 for a nil Attempts.
func (a *Attempts) Retries() int {
	if a == nil {
		return 0
	}
	return max(int(a.n.Load())-1, 0)
}
