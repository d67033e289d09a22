package backendconn

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// Defaults of Options.
const (
	// DefaultKeepalive is how long a backend connection with calls in
	// flight may be silent before the gateway pings it. Five minutes is
	// the shortest interval grpc-go servers accept by default
	// (keepalive.EnforcementPolicy.MinTime): pinging more often makes them
	// close the connection with GOAWAY "too_many_pings".
	DefaultKeepalive = 5 * time.Minute
	// DefaultMaxMessageBytes is the largest message the gateway receives
	// from, or sends to, a backend: above grpc-go's 4 MiB default, which
	// real APIs' list responses exceed, and above the gateway's streaming
	// result limit (gateway.DefaultStreamMaxBytes), so one message of a
	// stream is never refused for a size the stream as a whole may have.
	DefaultMaxMessageBytes = 16 << 20
	// keepaliveTimeout is how long a ping may go unanswered before the
	// connection is considered dead.
	keepaliveTimeout = 20 * time.Second
	// maxReconnectDelay caps grpc-go's backoff between attempts to
	// reconnect to a backend that went away (1 s, then 1.6x each time,
	// jittered). grpc-go's own cap, 120 s, meant a backend back after a
	// few minutes' outage went unused for up to two minutes more, every
	// call failing UNAVAILABLE meanwhile (loadtest's
	// TestBackendLongOutage); an attempt every 5 s to an address that is
	// down costs a refused connection.
	maxReconnectDelay = 5 * time.Second
)

// LB policies for Options.LB: how calls are spread over a backend's
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

// Options say how the gateway connects to one backend. The zero value
// means the defaults: TLS as the TLS type says, round_robin, keepalive
// pings after DefaultKeepalive, DefaultMaxMessageBytes each way, and
// retries of safe methods.
type Options struct {
	TLS TLS
	// LB is LBRoundRobin (default, "") or LBPickFirst.
	LB string
	// Keepalive is the silence, with calls in flight, after which the
	// gateway pings the backend to find a dead peer (behind a NAT or a
	// load balancer that drops idle flows); zero means DefaultKeepalive,
	// negative no pings. Pings are never sent on a connection without
	// calls, which grpc-go servers refuse by default.
	Keepalive time.Duration
	// MaxRecvBytes and MaxSendBytes bound one message from and to the
	// backend; zero means DefaultMaxMessageBytes, negative no limit of
	// the gateway's own. grpc-go refuses a message over either with
	// RESOURCE_EXHAUSTED, which [Conn.ExceededLimit] recognises.
	MaxRecvBytes, MaxSendBytes int
	// NoRetry turns off the retries of calls to methods safe to repeat
	// (see [Conn] for which and how).
	NoRetry bool
}

// Conn is a connection to one backend, made by Dial: a *grpc.ClientConn
// plus a hold on its service config, which its user fills at each
// discovery of the backend's API (SetDiscovered) with the methods safe to
// repeat and whether the backend serves health checks, and on its
// replicas, whose count and health Replicas reports.
//
// Retries: a call to a method given to SetDiscovered as safe to repeat
// that fails with UNAVAILABLE is retried by grpc-go (retryPolicy in the
// service config), on another replica where there is one, up to
// retryAttempts attempts with backoff, all within the call's deadline.
// Other methods are never retried: a backend sees each call to them at
// most once.
//
// A Conn's methods are safe for concurrent use; see the package doc for
// the locks behind them.
type Conn struct {
	*grpc.ClientConn
	// Target is the address as given.
	Target string
	ch     *channel
	limits limits
	opts   Options
}

// Options are the connection's settings, defaults resolved: what the
// operator's flags and config file amounted to for this backend.
func (c *Conn) Options() Options { return c.opts }

// limits are the message size limits, for error messages.
type limits struct{ recv, send int }

// Dial opens a client connection to a backend at target: any gRPC target
// grpc-go resolves, or a list of replicas (see internal/grpctarget). It
// does not wait for the connection: the first RPC does, and fails with
// its cause when the backend is unreachable. extra options are applied
// after the connection's own, e.g. telemetry.GRPCDialOption for the
// backend's spans.
func Dial(target string, o Options, extra ...grpc.DialOption) (*Conn, error) {
	t, err := grpctarget.Parse(target)
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
	lim := limits{recv: sizeLimit(o.MaxRecvBytes), send: sizeLimit(o.MaxSendBytes)}
	ch := newChannel(o.LB, !o.NoRetry)
	builder, err := ch.builder(t)
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithResolvers(builder),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lim.recv), grpc.MaxCallSendMsgSize(lim.send)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnectBackoff, MinConnectTimeout: minConnectTimeout}),
	}
	if ka := limit.Or(o.Keepalive, DefaultKeepalive); ka > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: ka, Timeout: keepaliveTimeout}))
	}
	cc, err := grpc.NewClient(t.URI, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("backend %s: grpc-go refused the target: %w", target, err)
	}
	o.MaxRecvBytes, o.MaxSendBytes = lim.recv, lim.send
	o.Keepalive = limit.Or(o.Keepalive, DefaultKeepalive)
	return &Conn{ClientConn: cc, Target: target, ch: ch, limits: lim, opts: o}, nil
}

// reconnectBackoff is grpc-go's default backoff but for its cap.
var reconnectBackoff = func() backoff.Config {
	c := backoff.DefaultConfig
	c.MaxDelay = maxReconnectDelay
	return c
}()

// minConnectTimeout is grpc-go's default, which WithConnectParams would
// otherwise set to zero.
const minConnectTimeout = 20 * time.Second

// sizeLimit maps an Options size onto grpc-go's: zero is the default,
// negative no limit.
func sizeLimit(n int) int {
	if n = limit.Or(n, DefaultMaxMessageBytes); n < 0 {
		return math.MaxInt32
	}
	return n
}

// Replicas reports how many addresses the backend's target resolves to
// now, and how many of them are serving: connected and, where the backend
// serves grpc.health.v1.Health, reporting SERVING.
func (c *Conn) Replicas() (total, serving int) { return c.ch.replicas.counts() }

// ObserveReplicas makes f receive the counts Replicas reports now and
// after every change, in order: the last counts f is given are the
// current ones. f replaces any earlier observer. It is called on grpc-go's
// goroutines, possibly while a SetDiscovered is pushing a new service
// config, so it must return quickly and must not call the Conn's methods
// (see the package doc).
func (c *Conn) ObserveReplicas(f func(total, serving int)) { c.ch.replicas.setObserver(f) }

// SetDiscovered gives the connection what a discovery of the backend's
// API found: retried are the methods safe to repeat, as
// "/package.Service/Method" (ignored when Options.NoRetry is set);
// health says the backend serves grpc.health.v1.Health, so its replicas
// are health checked and one that is not SERVING gets no calls. The
// connection's service config changes, and is pushed to grpc-go, only
// when these differ from the last ones.
func (c *Conn) SetDiscovered(retried []string, health bool) { c.ch.discovered(retried, health) }

// ResolveNow asks the target's resolver to resolve it again: grpc-go asks
// only when a connection fails or closes, so without this a dns:/// name
// whose records gained an address (a Deployment scaled up behind a
// headless Service) would send the new replica nothing until an old
// connection broke. grpc-go's DNS resolver still resolves at most once
// per its minimum interval (30s), and the other resolvers ignore it.
func (c *Conn) ResolveNow() { c.ch.resolveNow() }

// RetriesSafeMethods reports whether calls to the methods given to
// SetDiscovered are retried (Options.NoRetry is not set), so a caller
// knows whose attempts are worth counting (CountAttempts).
func (c *Conn) RetriesSafeMethods() bool { return c.ch.retry }

// ExceededLimit reports whether st is grpc-go refusing a message for one
// of the connection's message size limits (Options.MaxRecvBytes and
// MaxSendBytes): limit is that limit in bytes, 0 when st is about neither
// (then sent is false); sent says it is the limit on messages sent to the
// backend (the request), not on those received (the response). grpc-go
// reports its size checks only as RESOURCE_EXHAUSTED with a text that
// names the limit's value, so a status from the backend itself (its
// quota, or its own receive limit on the request) does not match.
func (c *Conn) ExceededLimit(st *status.Status) (limit int, sent bool) {
	if st.Code() != codes.ResourceExhausted {
		return 0, false
	}
	return c.limits.exceeded(st.Message())
}

// exceeded is ExceededLimit for a RESOURCE_EXHAUSTED message.
func (l *limits) exceeded(msg string) (limit int, sent bool) {
	switch {
	case strings.HasPrefix(msg, "trying to send message larger than max") && strings.HasSuffix(msg, " "+strconv.Itoa(l.send)+")"):
		return l.send, true
	case strings.HasPrefix(msg, "grpc: ") && strings.Contains(msg, "larger than max") &&
		(strings.HasSuffix(msg, " "+strconv.Itoa(l.recv)+")") || strings.HasSuffix(msg, " "+strconv.Itoa(l.recv))):
		return l.recv, false
	}
	return 0, false
}
