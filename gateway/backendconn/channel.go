package backendconn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	// Client-side health checking is a function this package registers
	// with grpc-go; without the import, healthCheckConfig is ignored
	// (grpc-go logs "health package is not imported") and a replica that
	// is not SERVING keeps receiving calls. The gateway binary linked it
	// only through the demo backend, so the library lacked it
	// (TestHealthCheckingLinked).
	_ "google.golang.org/grpc/health"
	"google.golang.org/grpc/resolver"

	"github.com/grpc-mcp-gateway/gateway/internal/grpctarget"
)

// The service config of a backend connection is the connection's own,
// not the name system's: channel wraps the target's resolver (dns, unix,
// passthrough, or our static list) so that every address update it makes
// carries the config built here: the balancing policy (wrapped by
// replicasPolicy, which counts serving replicas), client-side health
// checking when the backend serves grpc.health.v1.Health, and the retry
// policy of the methods found safe to repeat at the last discovery
// (Conn.SetDiscovered). When discovery changes either, the last addresses
// are pushed again with the new config. A service config published in
// DNS TXT records is ignored.

// Retry policy of safe methods: a few attempts, backoff from
// retryInitialBackoff doubling up to retryMaxBackoff (grpc-go adds
// jitter), only on UNAVAILABLE: the one code that says the call did not
// run, or may not have, because the server or the connection went away.
const (
	retryAttempts       = 3
	retryInitialBackoff = "0.1s"
	retryMaxBackoff     = "1s"
)

// channel is the hold on one connection's name resolution. Lock order:
// pushMu, then mu; mu is never held while calling grpc-go.
type channel struct {
	lb       string
	retry    bool
	replicas *replicaSet

	// pushMu serialises pushes to grpc-go, so a config change and an
	// address change cannot overtake each other.
	pushMu sync.Mutex
	mu     sync.Mutex
	// cc is the resolver.ClientConn of the resolver now running (grpc-go
	// builds a new one when the connection leaves idle); last is the last
	// state it sent, nil before one.
	cc   *resolverCC
	last *resolver.State
	// res is the resolver now running, for resolveNow.
	res resolver.Resolver
	// methods are the retried methods, "/pkg.Service/Method", sorted.
	methods []string
	// health: the backend serves grpc.health.v1.Health (as its last
	// discovery found), so replicas are health checked.
	health bool
	config string
}

func newChannel(lb string, retry bool) *channel {
	ch := &channel{lb: lb, retry: retry, replicas: &replicaSet{}}
	ch.config = ch.serviceConfig()
	return ch
}

// serviceConfig is the JSON service config for the current settings.
func (ch *channel) serviceConfig() string {
	type name struct {
		Service string `json:"service"`
		Method  string `json:"method"`
	}
	type retryPolicy struct {
		MaxAttempts          int      `json:"maxAttempts"`
		InitialBackoff       string   `json:"initialBackoff"`
		MaxBackoff           string   `json:"maxBackoff"`
		BackoffMultiplier    float64  `json:"backoffMultiplier"`
		RetryableStatusCodes []string `json:"retryableStatusCodes"`
	}
	type methodConfig struct {
		Name        []name       `json:"name"`
		RetryPolicy *retryPolicy `json:"retryPolicy"`
	}
	type healthCheckConfig struct {
		ServiceName string `json:"serviceName"`
	}
	sc := struct {
		LoadBalancingConfig []map[string]any   `json:"loadBalancingConfig"`
		HealthCheckConfig   *healthCheckConfig `json:"healthCheckConfig,omitempty"`
		MethodConfig        []methodConfig     `json:"methodConfig,omitempty"`
	}{
		LoadBalancingConfig: []map[string]any{{replicasPolicy: replicasConfig{Child: ch.lb, Health: ch.health}}},
	}
	if ch.health {
		// The server's overall health (service ""): grpc-go asks
		// grpc.health.v1.Health/Watch on each replica and sends no calls
		// to one that is not SERVING. Only for a backend whose discovery
		// listed the service: a server that answers unknown methods
		// generically (a proxy, a dynamic server) would fail every check.
		sc.HealthCheckConfig = &healthCheckConfig{}
	}
	if len(ch.methods) > 0 {
		mc := methodConfig{RetryPolicy: &retryPolicy{
			MaxAttempts: retryAttempts, InitialBackoff: retryInitialBackoff, MaxBackoff: retryMaxBackoff,
			BackoffMultiplier: 2, RetryableStatusCodes: []string{"UNAVAILABLE"},
		}}
		for _, m := range ch.methods {
			svc, meth, _ := strings.Cut(strings.TrimPrefix(m, "/"), "/")
			mc.Name = append(mc.Name, name{Service: svc, Method: meth})
		}
		sc.MethodConfig = []methodConfig{mc}
	}
	js, err := json.Marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("backendconn: service config: %v", err)) // fixed types; cannot fail
	}
	return string(js)
}

// discovered updates the config from a discovery: methods
// ("/pkg.Service/Method") are the ones to retry (ignored with retries
// off), health says whether the backend serves grpc.health.v1.Health. The
// new config is pushed when it differs.
func (ch *channel) discovered(methods []string, health bool) {
	if !ch.retry {
		methods = nil
	}
	methods = slices.Clone(methods)
	slices.Sort(methods)
	ch.pushMu.Lock()
	defer ch.pushMu.Unlock()
	ch.mu.Lock()
	if slices.Equal(methods, ch.methods) && health == ch.health {
		ch.mu.Unlock()
		return
	}
	ch.methods, ch.health = methods, health
	ch.config = ch.serviceConfig()
	cc, last, config := ch.cc, ch.last, ch.config
	ch.mu.Unlock()
	if cc != nil && last != nil {
		_ = cc.push(*last, config)
	}
}

// builder wraps the resolver of t's scheme.
func (ch *channel) builder(t *grpctarget.Target) (resolver.Builder, error) {
	if t.Scheme == grpctarget.StaticScheme {
		return &wrappedBuilder{ch: ch, scheme: grpctarget.StaticScheme, inner: staticBuilder{addrs: t.Static}}, nil
	}
	inner := resolver.Get(t.Scheme)
	if inner == nil {
		return nil, fmt.Errorf("backend %s: no gRPC resolver for the scheme %q", t.Given, t.Scheme)
	}
	wb := &wrappedBuilder{ch: ch, scheme: t.Scheme, inner: inner}
	if ao, ok := inner.(resolver.AuthorityOverrider); ok {
		// unix targets' :authority is "localhost"; keep what grpc-go does.
		return &authorityBuilder{wrappedBuilder: wb, ao: ao}, nil
	}
	return wb, nil
}

// wrappedBuilder builds the scheme's own resolver with a ClientConn that
// adds the connection's service config to its updates.
type wrappedBuilder struct {
	ch     *channel
	scheme string
	inner  resolver.Builder
}

func (b *wrappedBuilder) Scheme() string { return b.scheme }

func (b *wrappedBuilder) Build(t resolver.Target, cc resolver.ClientConn, opts resolver.BuildOptions) (resolver.Resolver, error) {
	w := &resolverCC{ClientConn: cc, ch: b.ch}
	b.ch.mu.Lock()
	b.ch.cc, b.ch.last, b.ch.res = w, nil, nil
	b.ch.mu.Unlock()
	r, err := b.inner.Build(t, w, opts)
	if err != nil {
		return nil, err
	}
	b.ch.mu.Lock()
	if b.ch.cc == w {
		b.ch.res = r
	}
	b.ch.mu.Unlock()
	return r, nil
}

// resolveNow asks the running resolver to resolve the target again (see
// Conn.ResolveNow).
func (ch *channel) resolveNow() {
	ch.mu.Lock()
	r := ch.res
	ch.mu.Unlock()
	if r != nil {
		r.ResolveNow(resolver.ResolveNowOptions{})
	}
}

type authorityBuilder struct {
	*wrappedBuilder
	ao resolver.AuthorityOverrider
}

func (b *authorityBuilder) OverrideAuthority(t resolver.Target) string {
	return b.ao.OverrideAuthority(t)
}

// resolverCC is the ClientConn the wrapped resolver reports to.
type resolverCC struct {
	resolver.ClientConn
	ch *channel
}

func (w *resolverCC) UpdateState(s resolver.State) error {
	w.ch.pushMu.Lock()
	defer w.ch.pushMu.Unlock()
	w.ch.mu.Lock()
	if w.ch.cc == w {
		w.ch.last = &s
	}
	config := w.ch.config
	w.ch.mu.Unlock()
	return w.push(s, config)
}

// push hands s to grpc-go with config and the replica counter (read by
// replicasPolicy). The caller holds pushMu.
func (w *resolverCC) push(s resolver.State, config string) error {
	s.ServiceConfig = w.ClientConn.ParseServiceConfig(config)
	s.Attributes = s.Attributes.WithValue(replicaSetKey{}, w.ch.replicas)
	return w.ClientConn.UpdateState(s)
}

// staticBuilder resolves a fixed list of replicas, once.
type staticBuilder struct{ addrs []string }

func (staticBuilder) Scheme() string { return grpctarget.StaticScheme }

func (b staticBuilder) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	s := resolver.State{}
	for _, a := range b.addrs {
		s.Endpoints = append(s.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	// An error here is grpc-go refusing the state, which it reports
	// through the connection's state.
	_ = cc.UpdateState(s)
	return staticResolver{}, nil
}

type staticResolver struct{}

func (staticResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (staticResolver) Close()                                {}
