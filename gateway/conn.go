package gateway

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// Defaults of ConnOptions.
const (
	// DefaultBackendKeepalive is how long a backend connection with calls
	// in flight may be silent before the gateway pings it. Five minutes is
	// the shortest interval grpc-go servers accept by default
	// (keepalive.EnforcementPolicy.MinTime): pinging more often makes them
	// close the connection with GOAWAY "too_many_pings".
	DefaultBackendKeepalive = 5 * time.Minute
	// DefaultBackendMaxMessageBytes is the largest message the gateway
	// receives from, or sends to, a backend: above grpc-go's 4 MiB
	// default, which real APIs' list responses exceed, and above the
	// streaming result limit (DefaultStreamMaxBytes), so one message of a
	// stream is never refused for a size the stream as a whole may have.
	DefaultBackendMaxMessageBytes = 16 << 20
	// keepaliveTimeout is how long a ping may go unanswered before the
	// connection is considered dead.
	keepaliveTimeout = 20 * time.Second
)

// LB policies for ConnOptions.LB: how calls are spread over a backend's
// addresses (its replicas).
const (
	// LBRoundRobin connects to every address and sends each call to the
	// next ready one. The default: behind a Kubernetes Service's DNS name
	// or a list of replicas, every replica gets its share.
	LBRoundRobin = "round_robin"
	// LBPickFirst connects to the first address that answers and sends
	// every call there until it fails: for a backend that must see one
	// client connection.
	LBPickFirst = "pick_first"
)

// ConnOptions say how the gateway connects to one backend. The zero value
// means the defaults: TLS as BackendTLS says, round_robin, keepalive
// pings after DefaultBackendKeepalive, DefaultBackendMaxMessageBytes
// each way, and retries of safe methods.
type ConnOptions struct {
	TLS BackendTLS
	// LB is LBRoundRobin (default, "") or LBPickFirst.
	LB string
	// Keepalive is the silence, with calls in flight, after which the
	// gateway pings the backend to find a dead peer (behind a NAT or a
	// load balancer that drops idle flows); zero means
	// DefaultBackendKeepalive, negative no pings. Pings are never sent on
	// a connection without calls, which grpc-go servers refuse by default.
	Keepalive time.Duration
	// MaxRecvBytes and MaxSendBytes bound one message from and to the
	// backend; zero means DefaultBackendMaxMessageBytes, negative no limit
	// of the gateway's own. A response over MaxRecvBytes is a
	// RESOURCE_EXHAUSTED tool error naming the limit.
	MaxRecvBytes, MaxSendBytes int
	// NoRetry turns off the retries of calls to methods safe to repeat
	// (see [Conn] for which and how).
	NoRetry bool
}

// Conn is a connection to one backend, made by DialBackend: a
// *grpc.ClientConn plus the gateway's hold on its service config, which
// the gateway fills at each discovery with the retry policy of the
// backend's methods safe to repeat, and on its replicas, whose count and
// health /readyz reports.
//
// Retries: a call to a method marked safe to repeat (protobuf
// idempotency_level NO_SIDE_EFFECTS or IDEMPOTENT, or the tool's
// idempotent hint) that fails with UNAVAILABLE is retried by grpc-go
// (retryPolicy in the service config), on another replica where there is
// one, up to retryAttempts attempts with backoff, all within the call's
// deadline. Other methods are never retried: a backend sees each call to
// them at most once.
type Conn struct {
	*grpc.ClientConn
	// Target is the address as given.
	Target string
	ch     *channel
	limits connLimits
	opts   ConnOptions
}

// Options are the connection's settings, defaults resolved: what the
// operator's flags and config file amounted to for this backend.
func (c *Conn) Options() ConnOptions { return c.opts }

// connLimits are the message size limits, for error messages.
type connLimits struct{ recv, send int }

// Dial opens a connection to a backend with the default ConnOptions and
// tls; see DialBackend.
func Dial(target string, tls BackendTLS, extra ...grpc.DialOption) (*Conn, error) {
	return DialBackend(target, ConnOptions{TLS: tls}, extra...)
}

// DialBackend opens a client connection to a backend at target, any gRPC
// target grpc-go resolves (see target.go). It does not wait for the
// connection: discovery's first RPC does, and reports an unreachable
// backend with its cause. extra options are applied after the gateway's,
// e.g. telemetry.GRPCDialOption for the backend's spans.
func DialBackend(target string, o ConnOptions, extra ...grpc.DialOption) (*Conn, error) {
	t, err := parseTarget(target)
	if err != nil {
		return nil, err
	}
	creds, err := transportCredentials(t, o.TLS)
	if err != nil {
		return nil, err
	}
	switch o.LB {
	case "", LBRoundRobin:
		o.LB = LBRoundRobin
	case LBPickFirst:
	default:
		return nil, fmt.Errorf("backend %s: load balancing policy %q: want %s or %s", target, o.LB, LBRoundRobin, LBPickFirst)
	}
	lim := connLimits{recv: sizeLimit(o.MaxRecvBytes), send: sizeLimit(o.MaxSendBytes)}
	ch := newChannel(o.LB, !o.NoRetry)
	builder, err := ch.builder(t)
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithResolvers(builder),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lim.recv), grpc.MaxCallSendMsgSize(lim.send)),
	}
	if ka := o.Keepalive; ka >= 0 {
		if ka == 0 {
			ka = DefaultBackendKeepalive
		}
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: ka, Timeout: keepaliveTimeout}))
	}
	cc, err := grpc.NewClient(t.uri, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("backend %s: grpc-go refused the target: %w", target, err)
	}
	o.MaxRecvBytes, o.MaxSendBytes = lim.recv, lim.send
	if o.Keepalive == 0 {
		o.Keepalive = DefaultBackendKeepalive
	}
	return &Conn{ClientConn: cc, Target: target, ch: ch, limits: lim, opts: o}, nil
}

// sizeLimit maps a ConnOptions size onto grpc-go's: zero is the default,
// negative no limit.
func sizeLimit(n int) int {
	switch {
	case n == 0:
		return DefaultBackendMaxMessageBytes
	case n < 0:
		return math.MaxInt32
	}
	return n
}

// Replicas reports how many addresses the backend's target resolves to
// now, and how many of them are serving: connected and, where the backend
// serves grpc.health.v1.Health, reporting SERVING.
func (c *Conn) Replicas() (total, serving int) { return c.ch.replicas.counts() }

// errorResult is the tool error of a failed call: statusResult, except
// for a message grpc-go refused for one of the connection's size limits,
// which says which limit and that repeating the call cannot help.
func (t *tool) errorResult(ctx context.Context, st *status.Status) *mcp.CallToolResult {
	if st.Code() == codes.ResourceExhausted && t.limits != nil {
		if what := t.limits.exceeded(st.Message()); what != "" {
			recordOutcome(ctx, telemetry.Outcome{Code: codes.ResourceExhausted})
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: fmt.Sprintf(
				"%s: %s backend %s (grpc-go: %s). Repeating the same call will not help; ask for less, e.g. a smaller page or fewer fields.",
				CodeName(codes.ResourceExhausted), what, t.backend, st.Message())}}}
		}
	}
	return statusResult(ctx, st, t.types)
}

// exceeded says which limit a RESOURCE_EXHAUSTED message from grpc-go is
// about ("the response is larger than ..."), or "" when it is not about
// the gateway's own: grpc-go reports its size checks only as text, which
// names the limit's value, so a status from the backend itself (its
// quota, or its own receive limit on the request) does not match.
func (l *connLimits) exceeded(msg string) string {
	switch {
	case strings.HasPrefix(msg, "trying to send message larger than max") && strings.HasSuffix(msg, " "+strconv.Itoa(l.send)+")"):
		return fmt.Sprintf("the request is larger than the gateway's limit of %d bytes per message to", l.send)
	case strings.HasPrefix(msg, "grpc: ") && strings.Contains(msg, "larger than max") &&
		(strings.HasSuffix(msg, " "+strconv.Itoa(l.recv)+")") || strings.HasSuffix(msg, " "+strconv.Itoa(l.recv))):
		return fmt.Sprintf("the response is larger than the gateway's limit of %d bytes per message from", l.recv)
	}
	return ""
}
