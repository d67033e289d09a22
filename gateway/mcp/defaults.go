package mcp

import (
	"fmt"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// Defaults the transports share, so /mcp, /ws and /sse bound the same
// things the same way unless an option says otherwise. Every numeric
// option of this package follows the gateway's rule (internal/limit): zero means the
// default named here; a negative value means "no limit" where the
// option's doc allows it, and is refused by the options' Check method
// where it does not. The constructors return no error, so they cannot
// refuse it themselves: a caller that takes these options from its own
// users (gateway.New does) calls Check first; one that does not gets the
// default for such a value.
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
	// DefaultPrincipalShare is the share of a server-wide limit (the
	// requests in flight, the task polls of listen streams) one
	// authenticated principal may take by default: one in
	// DefaultPrincipalShare (half), so one principal never takes it all,
	// and a second always finds room even when the first is at its share.
	DefaultPrincipalShare = 2
	// DefaultMaxTaskPolls bounds the polls per second that every
	// subscriptions/listen stream together makes to follow its tasks.
	DefaultMaxTaskPolls = 100
	// DefaultTaskWaitTimeout bounds a task method, tasks/result's wait
	// for its task above all: the gateway's default call timeout, since
	// tasks/result continues the wait of the call that started the task.
	DefaultTaskWaitTimeout = 30 * time.Second
	// DefaultListenTimeout bounds one subscriptions/listen stream; the
	// client listens again when it ends.
	DefaultListenTimeout = 10 * time.Minute
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

// orDefault replaces a zero or negative option with its default (the
// rule's internal/limit.OrDefault).
func orDefault[T limit.Number](v *T, def T) { *v = limit.OrDefault(*v, def) }

// bounded is an option that has a default but cannot be off: its name
// and its check (internal/limit.Check).
type bounded func(owner string) error

func boundedInt[T limit.Number](name string, v T) bounded {
	return func(owner string) error { return limit.Check(owner+"."+name, v, "") }
}

// checkBounded refuses the first of opts that is negative, naming it
// as owner.name.
func checkBounded(owner string, opts ...bounded) error {
	for _, check := range opts {
		if err := check(owner); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
	}
	return nil
}

// Check refuses a negative value for an option that cannot be off; a nil
// o is the defaults, which pass.
func (o *ServerOptions) Check() error {
	if o == nil {
		return nil
	}
	return checkBounded("ServerOptions", boundedInt("TaskWaitTimeout", o.TaskWaitTimeout),
		boundedInt("ListenTimeout", o.ListenTimeout), boundedInt("MaxTaskPolls", o.MaxTaskPolls), boundedInt("MaxBatch", o.MaxBatch),
		boundedInt("MaxBatchResponseBytes", o.MaxBatchResponseBytes), boundedInt("MaxMessageBytes", o.MaxMessageBytes))
}

// Check refuses a negative value for an option that cannot be off, and a
// SessionSecret that StreamableHTTPHandler would refuse (shorter than 32
// bytes); a nil o is the defaults, which pass.
func (o *StreamableHTTPOptions) Check() error {
	if o == nil {
		return nil
	}
	if err := checkBounded("StreamableHTTPOptions", boundedInt("MaxRequestBytes", o.MaxRequestBytes),
		boundedInt("SessionIdleTimeout", o.SessionIdleTimeout), boundedInt("MaxSessions", o.MaxSessions),
		boundedInt("WriteTimeout", o.WriteTimeout), boundedInt("SessionTTL", o.SessionTTL)); err != nil {
		return err
	}
	if len(o.Endpoint) > maxEndpoint {
		return fmt.Errorf("mcp: StreamableHTTPOptions.Endpoint: want at most %d bytes, got %d", maxEndpoint, len(o.Endpoint))
	}
	if len(o.SessionSecret) > 0 {
		return checkSessionSecret(o.SessionSecret)
	}
	return nil
}

// Check refuses a negative value for an option that cannot be off; a nil
// o is the defaults, which pass.
func (o *SSEOptions) Check() error {
	if o == nil {
		return nil
	}
	return checkBounded("SSEOptions", boundedInt("MaxRequestBytes", o.MaxRequestBytes),
		boundedInt("MaxSessions", o.MaxSessions), boundedInt("KeepAlive", o.KeepAlive),
		boundedInt("WriteTimeout", o.WriteTimeout))
}

// Check refuses a negative value for an option that cannot be off; a nil
// o is the defaults, which pass.
func (o *WebSocketOptions) Check() error {
	if o == nil {
		return nil
	}
	return checkBounded("WebSocketOptions", boundedInt("MaxMessageBytes", o.MaxMessageBytes),
		boundedInt("PingInterval", o.PingInterval), boundedInt("PongTimeout", o.PongTimeout),
		boundedInt("WriteTimeout", o.WriteTimeout), boundedInt("MaxConnections", o.MaxConnections))
}
