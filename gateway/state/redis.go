// Package state keeps what the replicas of a gateway fleet share, in Redis
// or Valkey (--state): whole results behind resource links, so that any
// replica serves resources/read; revoked sessions (named by a digest of
// their token, never the token itself), so that DELETE through one replica
// ends a session on all; cancellations on their way to the replica
// running the call; and each principal's requests in flight. One process
// needs none of it: the gateway then keeps results in memory (package
// results).
//
// Nothing here sits on the path of a call that does not need the store:
// revocations are mirrored in memory (once a replica has read them, in
// pages, Revoked never waits on Redis; until then it looks each token up
// there, and refuses to vouch for one it cannot), and only a cut result
// (one write), resources/read of a kept result (one read), DELETE and a
// relayed cancellation talk to Redis. When Redis is lost those answer
// ErrUnavailable and everything else goes on; the client reconnects by
// itself, and the mirror of revocations is read again whenever the
// subscription comes back, so nothing revoked while a replica was cut off
// is missed. Revocations are bounded, for the fleet and per principal
// (Options.MaxRevocations), since each is kept until its token expires
// and sessions cost nothing to create.
//
// Redis holds no credential: sessions are named by mcp.FleetKey of their
// token, and a result's id and owner and every principal by the same
// digest (digest), so whoever reads the store, or a copy of it, can use
// nothing it finds there against the gateway.
//
// Every key and channel starts with "{PREFIX}:" (Options.Prefix): several
// fleets share one Redis, and the braces (a Redis Cluster hash tag) keep
// one fleet's keys in one slot, which the scripts that keep the result
// store's accounting need.
//
// This package is library API because a program running a fleet of
// gateways opens the shared store with [Open] and hands it over as
// gateway.Options.State; one process needs none of it.
package state

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// ErrUnavailable is wrapped by every error that comes from not reaching
// the store. It is mcp.ErrFleetUnavailable, so the protocol layer and the
// gateway tell it apart from "not found".
var ErrUnavailable = mcp.ErrFleetUnavailable

// DefaultPrefix namespaces keys when Options.Prefix is empty.
const DefaultPrefix = "mcpgw"

// Timeouts of one exchange with Redis; the store is near (same network),
// and a call that needs it must fail quickly rather than hang when it is
// gone.
const (
	dialTimeout = 2 * time.Second
	ioTimeout   = 2 * time.Second
	// healthEvery is how often the store is pinged, which is what Up and
	// the readiness report show.
	healthEvery = time.Second
	// ackWait bounds how long Revoke waits for the other replicas to
	// confirm; one that does not is reported in the log, and reads the
	// revocations again when its subscription comes back.
	ackWait = 3 * time.Second
)

// Options configure Open; nil means defaults.
type Options struct {
	// Prefix namespaces every key and channel (1-64 of a-z A-Z 0-9 _ - .
	// :); default DefaultPrefix. Replicas of one fleet must share it.
	Prefix string
	// Password, when set, authenticates instead of the URL's password
	// (which would otherwise sit in a flag or a config file).
	Password string
	// RootCAs, for a rediss:// URL, are the certificate authorities that
	// the store's certificate must chain to; nil means the system's.
	RootCAs *x509.CertPool
	// Results bounds the shared result store exactly as it bounds the
	// memory one (TTL, total and per-principal bytes and entries; Now is
	// ignored: the store's clock is Redis's).
	Results results.StoreOptions
	// MaxRevocations bounds the deleted sessions the fleet keeps (each
	// until its token expires), MaxRevocationsPerPrincipal those of one
	// authenticated principal; anonymous sessions count against
	// MaxRevocations only. A DELETE beyond either is refused and the
	// session stays valid (mcp.RevocationLimitError). Zero means the
	// defaults (DefaultMaxRevocations, DefaultMaxRevocationsPerPrincipal),
	// negative unlimited.
	MaxRevocations             int
	MaxRevocationsPerPrincipal int
	// SlotLease is how long a request's slot in a principal's fleet-wide
	// count (mcp.FleetSlots) outlives the last renewal by its replica,
	// which renews every third of it: the slots of a replica that dies
	// come free after at most this. Default DefaultSlotLease.
	SlotLease time.Duration
	// pageHook, when set (by tests, export_test.go), runs before each
	// page of a read of the revocations; it may block until ctx ends.
	pageHook func(ctx context.Context, page int)
	// checkHook, when set (by tests), runs after each health check with
	// what Up then reports.
	checkHook func(up bool)
	// Logger receives the store's warnings (nil: slog.Default()). The Redis
	// client's own log lines, process-wide in its library, go there too.
	Logger *slog.Logger
}

// prefixRE is compiled on first use: most gateways run without --state,
// and a package-level pattern would be compiled (and kept) at every start.
var prefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`) })

// Redis is the fleet's shared state in one Redis (standalone over TCP, TLS
// or a unix socket, or the master a Sentinel names, followed across
// failovers). It is safe for concurrent use; Close stops its
// goroutine.
type Redis struct {
	c       *redis.Client
	prefix  string // "{PREFIX}:"
	log     *slog.Logger
	res     resultLimits
	lease   time.Duration
	replica string        // this process's random name in slot members
	seq     atomic.Uint64 // numbers this replica's slots
	bg      sync.WaitGroup

	up      atomic.Bool
	lastErr atomic.Pointer[string]
	// loaded is set once the mirror of revocations was read whole since
	// the subscription last (re)started; until then Revoked asks Redis
	// for each token it is not sure of.
	loaded atomic.Bool
	// maxRevoked and maxRevokedPerWho are the revocation bounds, 0 for
	// none.
	maxRevoked, maxRevokedPerWho int
	// loads are the goroutines reading the revocations (one at a time:
	// a new one cancels the last); Close waits for them.
	loads     sync.WaitGroup
	pageHook  func(ctx context.Context, page int)
	checkHook func(up bool)

	mu        sync.Mutex
	revoked   map[string]int64 // session key (mcp.FleetKey) → expiry, unix seconds
	listeners []mcp.FleetListener
	slots     map[string]string        // this replica's slots: member → principal
	waiting   map[string]chan struct{} // Revoke's confirmations by id
	closed    bool
	// loadGen numbers the reads of the revocations; only the latest may
	// set loaded. stopLoad cancels it, loading says it runs.
	loadGen  uint64
	stopLoad context.CancelFunc
	loading  bool

	stop chan struct{}
	done chan struct{}
}

// CheckURL checks a --state URL: redis://[user:password@]HOST:PORT/DB,
// rediss://… (TLS), or unix:///PATH?db=N; with ?master_name=NAME,
// redis[s]://HOST:PORT names a Sentinel (more with &addr=HOST:PORT) that
// tells where the master NAME is. Errors name what is wrong and never
// show the password.
func CheckURL(raw string) error {
	_, _, err := parseURL(raw)
	return err
}

// parseURL returns the client options raw names: a plain client's, or a
// Sentinel-discovered master's (failover).
func parseURL(raw string) (*redis.Options, *redis.FailoverOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password and all: keep only why.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("state URL (password hidden): %w", err)
	}
	switch u.Scheme {
	case "redis", "rediss", "unix":
	default:
		return nil, nil, fmt.Errorf("state URL %q: want redis://HOST:PORT/DB, rediss://HOST:PORT/DB (TLS) or unix:///PATH, not scheme %q", redact(u), u.Scheme)
	}
	if u.Query().Has("master_name") {
		if u.Scheme == "unix" {
			return nil, nil, fmt.Errorf("state URL %q: master_name (Sentinel) wants redis:// or rediss:// addresses of Sentinels", redact(u))
		}
		fo, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("state URL %q: %w", redact(u), err)
		}
		return nil, fo, nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("state URL %q: %w", redact(u), err)
	}
	return o, nil, nil
}

// redact hides a URL's password for messages.
func redact(u *url.URL) string { return u.Redacted() }

// Redacted is raw with its password, if any, hidden: for logs and errors.
func Redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return redact(u)
}

// CheckPrefix checks an Options.Prefix ("" is the default).
func CheckPrefix(prefix string) error {
	if prefix != "" && !prefixRE().MatchString(prefix) {
		return fmt.Errorf("state prefix %q: want 1-64 of a-z A-Z 0-9 _ - . :", prefix)
	}
	return nil
}

// Open makes the store named by rawURL and starts watching it. It does not
// wait for Redis: Ping tells whether it is there (--require-state), and
// the store works as soon as it is.
func Open(rawURL string, opts *Options) (*Redis, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := CheckPrefix(o.Prefix); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	ro, fo, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var c *redis.Client
	if fo != nil {
		// A Sentinel's password is the URL's; the master's comes from
		// Options.Password.
		if o.Password != "" {
			fo.Password = o.Password
		}
		if o.RootCAs != nil {
			if fo.TLSConfig == nil {
				return nil, errors.New("state: Options.RootCAs is for a rediss:// URL (TLS)")
			}
			fo.TLSConfig.RootCAs = o.RootCAs
		}
		fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout = dialTimeout, ioTimeout, ioTimeout
		c = redis.NewFailoverClient(fo)
	} else {
		if o.Password != "" {
			ro.Password = o.Password
		}
		if o.RootCAs != nil {
			if ro.TLSConfig == nil {
				return nil, errors.New("state: Options.RootCAs is for a rediss:// URL (TLS)")
			}
			ro.TLSConfig.RootCAs = o.RootCAs
		}
		ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = dialTimeout, ioTimeout, ioTimeout
		// Redis's maintenance notifications are for its cloud service's
		// failovers; asking a plain server for them only logs refusals.
		ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		c = redis.NewClient(ro)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	redis.SetLogger(clientLog{o.Logger})
	r := &Redis{
		c:       c,
		prefix:  "{" + o.Prefix + "}:",
		log:     o.Logger,
		res:     newResultLimits(o.Results),
		revoked: make(map[string]int64),
		slots:   make(map[string]string),
		waiting: make(map[string]chan struct{}),
		lease:   limit.OrDefault(o.SlotLease, DefaultSlotLease),
		// Off (negative) is no bound, which the script spells 0.
		maxRevoked:       max(0, limit.Or(o.MaxRevocations, DefaultMaxRevocations)),
		maxRevokedPerWho: max(0, limit.Or(o.MaxRevocationsPerPrincipal, DefaultMaxRevocationsPerPrincipal)),
		replica:          newID(),
		pageHook:         o.pageHook,
		checkHook:        o.checkHook,
		stop:             make(chan struct{}),
		done:             make(chan struct{}),
	}
	r.setErr(errors.New("not checked yet"))
	go r.watch()
	return r, nil
}

// Ping checks that the store answers within ctx; an answer counts as a
// health check (Up).
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return unavailable(err)
	}
	r.up.Store(true)
	return nil
}

// Up reports whether the store answered its last health check, and the
// error of the last one that failed.
func (r *Redis) Up() (bool, string) {
	if r.up.Load() {
		return true, ""
	}
	return false, *r.lastErr.Load()
}

// Close stops watching and closes the connections. A goroutine of the
// Redis client that probes an unreachable address ends within a second
// after it.
func (r *Redis) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	<-r.done
	r.bg.Wait()
	return r.c.Close()
}

func (r *Redis) setErr(err error) {
	s := err.Error()
	r.lastErr.Store(&s)
	r.up.Store(false)
}

// errDown is why a call that would wait on the store fails at once: its
// last health check failed.
var errDown = errors.New("its last health check failed")

// unavailable wraps an error of the client as ErrUnavailable.
func unavailable(err error) error {
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// key is name in this fleet's namespace.
func (r *Redis) key(name string) string { return r.prefix + name }

// digest is what Redis holds in place of s, a principal, a result's
// owner or a result's id: its SHA-256 (mcp.FleetKey). Whoever reads the
// store, or a copy of it, then holds no session id, no token, no result
// id that the gateway would accept, and no subject; the gateway, which
// has s, finds its entries all the same. "" (anonymous) stays "".
func digest(s string) string {
	if s == "" {
		return ""
	}
	return mcp.FleetKey(s)
}

// newID is a random identifier: acknowledgement keys, replica names.
func newID() string { return strings.ToLower(rand.Text()) }

// clientLog sends the Redis client's log lines to the gateway's logger.
type clientLog struct{ l *slog.Logger }

func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	c.l.DebugContext(ctx, "state: redis client: "+fmt.Sprintf(format, v...))
}
