package mcp

import "time"

// Defaults the transports share, so /mcp, /ws and /sse bound the same
// things the same way unless an option says otherwise. Every numeric
// option of this package follows the gateway's rule: zero means the
// default named here; a negative value means "no limit" where the
// option's doc allows it, and the default where it does not.
const (
	// DefaultMaxConcurrentCalls bounds the requests one session may have
	// in flight.
	DefaultMaxConcurrentCalls = 64
	// DefaultMaxMessageBytes bounds one request body (/mcp, /sse) or one
	// WebSocket message (/ws).
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxBatch bounds the messages of one JSON-RPC batch
	// (2025-03-26); a larger batch is refused whole.
	DefaultMaxBatch = 100
	// DefaultMaxBatchResponseBytes bounds the response to one batch.
	DefaultMaxBatchResponseBytes = 4 << 20
	// DefaultMaxInFlight bounds the requests in flight on the whole
	// server, every session and stateless request together.
	DefaultMaxInFlight = 1024
	// DefaultMaxSessions bounds the sessions a transport holds in memory.
	DefaultMaxSessions = 10000
	// DefaultMaxSessionsPerPrincipal bounds the sessions one
	// authenticated principal holds on a transport.
	DefaultMaxSessionsPerPrincipal = 1000
	// DefaultSessionIdleTimeout ends a Streamable HTTP session that has
	// had no request and no open stream for this long.
	DefaultSessionIdleTimeout = 10 * time.Minute
	// DefaultWriteTimeout bounds each write to a client, so one that stops
	// reading cannot hold a stream (and its session) forever.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultReadTimeout bounds how long a client may take to send a
	// request body once its headers have arrived (see RequestDeadlines).
	DefaultReadTimeout = 20 * time.Second
	// DefaultKeepAlive is the interval of WebSocket pings and SSE
	// keep-alive comments, and the WebSocket pong timeout.
	DefaultKeepAlive = 30 * time.Second
)

// orDefault replaces a zero or negative option with its default.
func orDefault[T ~int | ~int64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
