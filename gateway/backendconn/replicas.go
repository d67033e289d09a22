package backendconn

//lint:file-ignore SA1019 replicasCC wraps the ClientConn a child balancer sees, so it must forward every method a child may call, deprecated ones included; replicasBalancer.UpdateSubConnState is the Balancer interface's.

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/balancer/endpointsharding"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/serviceconfig"
)

// Counting serving replicas.
//
// grpc-go keeps each replica's state (connected, and healthy per
// grpc.health.v1) inside its load balancing policy and exposes only the
// channel's aggregate. To report per backend how many replicas serve,
// every backend connection's policy is replicasPolicy: a thin wrapper that
// builds the real policy (round_robin or pick_first) as its child and
// watches, on the way through, each subchannel's connectivity state and
// the health updates the child registers for. Calls are picked by the
// child as they would be without it; the wrapper only unwraps the
// subchannel a pick returns. The counts go to the channel's replicaSet,
// which the resolver wrapper (channel.go) hands over in the resolver
// state's attributes.

// replicasPolicy is the registered name of the wrapper policy.
const replicasPolicy = "grpc_mcp_gateway_replicas"

func init() { balancer.Register(replicasBuilder{}) }

// replicaSetKey is the resolver state attribute carrying a *replicaSet.
type replicaSetKey struct{}

// replicaSet counts one connection's replicas.
type replicaSet struct {
	// observeMu orders the observer's calls: counts are read and handed
	// over under it, so the last count the observer gets is the latest.
	// (Without it, two changes on two goroutines could hand over their
	// counts in the other order and leave a stale figure in the metric.)
	observeMu sync.Mutex
	mu        sync.Mutex
	addresses int
	subConns  map[*replicaSubConn]struct{}
	// observe, when set, is told the counts after every change (the
	// connection's user, for its metrics); it is called with observeMu held
	// and mu not.
	observe func(total, serving int)
}

// setObserver makes f receive the counts now and after every change.
func (s *replicaSet) setObserver(f func(total, serving int)) {
	s.mu.Lock()
	s.observe = f
	s.mu.Unlock()
	s.changed()
}

// changed tells the observer the current counts. The caller holds
// neither mutex.
func (s *replicaSet) changed() {
	s.observeMu.Lock()
	defer s.observeMu.Unlock()
	s.mu.Lock()
	f := s.observe
	s.mu.Unlock()
	if f != nil {
		f(s.counts())
	}
}

// counts reports the replicas resolved and those serving now.
func (s *replicaSet) counts() (total, serving int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc := range s.subConns {
		if sc.serving() {
			serving++
		}
	}
	// While a new child takes over, both children's replicas exist.
	return s.addresses, min(serving, s.addresses)
}

type replicasConfig struct {
	serviceconfig.LoadBalancingConfig `json:"-"`
	// Child is the policy that picks: round_robin or pick_first.
	Child string `json:"child"`
	// Health says the service config asks for health checks. When it
	// turns on (the first discovery found the health service), the child
	// is built anew: grpc-go starts a replica's health check only when the
	// replica becomes READY, so replicas connected before would go
	// unchecked.
	Health bool `json:"health,omitempty"`
}

type replicasBuilder struct{}

func (replicasBuilder) Name() string { return replicasPolicy }

func (replicasBuilder) ParseConfig(js json.RawMessage) (serviceconfig.LoadBalancingConfig, error) {
	var c replicasConfig
	if err := json.Unmarshal(js, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", replicasPolicy, err)
	}
	if balancer.Get(c.Child) == nil {
		return nil, fmt.Errorf("%s: no load balancing policy %q", replicasPolicy, c.Child)
	}
	return &c, nil
}

func (replicasBuilder) Build(cc balancer.ClientConn, opts balancer.BuildOptions) balancer.Balancer {
	return &replicasBalancer{cc: cc, opts: opts, set: &replicaSet{}}
}

// replicasBalancer runs the child policy. grpc-go calls the balancer's
// methods one at a time, but children report their state from other
// goroutines too (endpointsharding leaves idle on one of its own), so mu
// guards which child is which. No child method is called with mu held: a
// child may report its state from inside one.
type replicasBalancer struct {
	cc   balancer.ClientConn
	opts balancer.BuildOptions
	// set is replaced by the connection's own on the first update, before
	// any child exists.
	set *replicaSet

	mu sync.Mutex
	// current picks; pending, when set, is a child being built for a new
	// config, which takes over once it has caught up with current (see
	// caughtUp), or as soon as current is not READY.
	current, pending *childPolicy
	// closing tracks the replaced children being closed, which Close
	// waits for; closed, set by Close, stops further replacements, so
	// nothing is added to closing once Close waits on it.
	closing sync.WaitGroup
	closed  bool
}

// childPolicy is one built child and the config it was built for.
type childPolicy struct {
	balancer.Balancer
	cc   *replicasCC
	cfg  replicasConfig
	last *balancer.State // the child's last state (pending's is not forwarded)
	// ready are the endpoints (replicas) READY in last, by address;
	// settling counts those that have not answered yet: IDLE or
	// CONNECTING, which with health checks includes connected but
	// awaiting the first health response.
	ready    map[string]bool
	settling int
}

// caughtUp says pending may replace current: it is READY and can pick
// every replica current can, or it has heard from every replica (those
// it leaves out are down or not SERVING).
//
// READY alone is not enough. When health checking turns on, pending is
// READY as soon as one replica answers its health check, while current
// (no health checks) picks from every connected replica. Taking over
// then left the channel on that one replica until the others answered:
// if it went away or NOT_SERVING meanwhile, the channel went CONNECTING
// with healthy replicas behind it, and /readyz answered 503
// (TestHealthSwitchKeepsReady). The price: while a replica is connected
// but has not answered its first health check, current keeps picking
// (without health checks); a replica whose health Watch never answers
// at all keeps the switch from happening.
func (c *childPolicy) caughtUp(current *childPolicy) bool {
	if c.last == nil || c.last.ConnectivityState != connectivity.Ready {
		return false
	}
	if c.settling == 0 {
		return true
	}
	for e := range current.ready {
		if !c.ready[e] {
			return false
		}
	}
	return true
}

// endpointStates reads the endpoints of a child's state s: those READY,
// by address, and the number still settling. round_robin's picker
// (endpointsharding's) carries each endpoint's state; pick_first is one
// endpoint, in the state it reports, under the key "".
func endpointStates(s balancer.State) (ready map[string]bool, settling int) {
	states := endpointsharding.ChildStatesFromPicker(s.Picker)
	if states == nil {
		states = []endpointsharding.ChildState{{State: s}}
	}
	ready = make(map[string]bool, len(states))
	for _, e := range states {
		switch e.State.ConnectivityState {
		case connectivity.Ready:
			ready[endpointKey(e.Endpoint)] = true
		case connectivity.Idle, connectivity.Connecting:
			settling++
		}
	}
	return ready, settling
}

// endpointKey names an endpoint by its addresses.
func endpointKey(e resolver.Endpoint) string {
	var k strings.Builder
	for i, a := range e.Addresses {
		if i > 0 {
			k.WriteByte(',')
		}
		k.WriteString(a.Addr)
	}
	return k.String()
}

func (b *replicasBalancer) build(cfg replicasConfig) *childPolicy {
	c := &childPolicy{cfg: cfg}
	c.cc = &replicasCC{ClientConn: b.cc, b: b, child: c}
	c.Balancer = balancer.Get(cfg.Child).Build(c.cc, b.opts)
	return c
}

func (b *replicasBalancer) UpdateClientConnState(s balancer.ClientConnState) error {
	cfg, ok := s.BalancerConfig.(*replicasConfig)
	if !ok {
		return fmt.Errorf("%s: config of type %T: %w", replicasPolicy, s.BalancerConfig, balancer.ErrBadResolverState)
	}
	if set, ok := s.ResolverState.Attributes.Value(replicaSetKey{}).(*replicaSet); ok && set != b.set {
		// Once, before the first child: children read b.set from their
		// own goroutines afterwards.
		b.set = set
	}
	n := len(s.ResolverState.Endpoints)
	if n == 0 {
		n = len(s.ResolverState.Addresses)
	}
	b.set.mu.Lock()
	b.set.addresses = n
	b.set.mu.Unlock()
	b.set.changed()
	s.BalancerConfig = nil
	// Only this method adds children, and grpc-go calls it one at a time;
	// children are built without mu held.
	b.mu.Lock()
	current, pending := b.current, b.pending
	b.mu.Unlock()
	var built, dropped *childPolicy
	if current == nil || current.cfg != *cfg && (pending == nil || pending.cfg != *cfg) {
		built = b.build(*cfg)
	}
	b.mu.Lock()
	switch {
	case built == nil:
	case b.current == nil:
		b.current = built
	default:
		dropped, b.pending = b.pending, built
	}
	current, pending = b.current, b.pending
	b.mu.Unlock()
	if dropped != nil {
		dropped.Close()
	}
	err := current.UpdateClientConnState(s)
	if pending != nil {
		err = pending.UpdateClientConnState(s)
	}
	return err
}

// childState handles a child's new state: current's goes to grpc-go
// unless a pending child is taking over; pending's is held until it has
// caught up with current (or current is not READY), when pending
// replaces current. mu is held while forwarding, so states reach grpc-go
// in the order decided here (grpc-go's UpdateState calls back into no
// balancer).
func (b *replicasBalancer) childState(c *childPolicy, s balancer.State) {
	ready, settling := endpointStates(s)
	if s.Picker != nil {
		s.Picker = unwrapPicker{s.Picker}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	var old *childPolicy
	switch c {
	case b.current:
		c.last, c.ready, c.settling = &s, ready, settling
		if b.pending != nil && b.pending.last != nil && (s.ConnectivityState != connectivity.Ready || b.pending.caughtUp(c)) {
			old = b.promoteLocked()
		} else {
			b.cc.UpdateState(s)
		}
	case b.pending:
		c.last, c.ready, c.settling = &s, ready, settling
		if b.current.last == nil || b.current.last.ConnectivityState != connectivity.Ready || c.caughtUp(b.current) {
			old = b.promoteLocked()
		}
	}
	if old != nil {
		b.closing.Add(1)
	}
	b.mu.Unlock()
	if old != nil {
		// Closed on its own goroutine, as grpc-go's gracefulswitch does:
		// the child reporting may be old itself, and endpointsharding
		// holds its lock while it reports, which Close takes too
		// (TestHealthSwitchCurrentLost). Its replicas shut down
		// gracefully: calls on them finish.
		go func() {
			defer b.closing.Done()
			old.Close()
		}()
	}
}

// promoteLocked makes pending current and forwards its state; it returns
// the old child, for the caller to close without mu.
func (b *replicasBalancer) promoteLocked() *childPolicy {
	old := b.current
	b.current, b.pending = b.pending, nil
	if b.current.last != nil {
		b.cc.UpdateState(*b.current.last)
	}
	return old
}

func (b *replicasBalancer) children() []*childPolicy {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*childPolicy, 0, 2)
	for _, c := range []*childPolicy{b.current, b.pending} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (b *replicasBalancer) ResolverError(err error) {
	for _, c := range b.children() {
		c.ResolverError(err)
	}
}

func (b *replicasBalancer) UpdateSubConnState(sc balancer.SubConn, s balancer.SubConnState) {
	// Every SubConn is made with a StateListener, so grpc-go never calls
	// this; forward it for a child that expects it anyway.
	if r, ok := sc.(*replicaSubConn); ok {
		r.child.UpdateSubConnState(r, s)
	}
}

func (b *replicasBalancer) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	for _, c := range b.children() {
		c.Close()
	}
	b.closing.Wait()
}

func (b *replicasBalancer) ExitIdle() {
	for _, c := range b.children() {
		c.ExitIdle()
	}
}

// replicasCC is the ClientConn the child sees.
type replicasCC struct {
	balancer.ClientConn
	b     *replicasBalancer
	child *childPolicy
}

func (c *replicasCC) NewSubConn(addrs []resolver.Address, opts balancer.NewSubConnOptions) (balancer.SubConn, error) {
	sc := &replicaSubConn{set: c.b.set, child: c.child, state: connectivity.Idle}
	listener := opts.StateListener
	opts.StateListener = func(s balancer.SubConnState) {
		sc.setState(s.ConnectivityState)
		if listener != nil {
			listener(s)
		}
	}
	inner, err := c.ClientConn.NewSubConn(addrs, opts)
	if err != nil {
		return nil, err
	}
	sc.SubConn = inner
	sc.set.mu.Lock()
	if sc.set.subConns == nil {
		sc.set.subConns = map[*replicaSubConn]struct{}{}
	}
	sc.set.subConns[sc] = struct{}{}
	sc.set.mu.Unlock()
	return sc, nil
}

func (c *replicasCC) RemoveSubConn(sc balancer.SubConn) {
	if r, ok := sc.(*replicaSubConn); ok {
		r.Shutdown()
		return
	}
	c.ClientConn.RemoveSubConn(sc)
}

func (c *replicasCC) UpdateAddresses(sc balancer.SubConn, addrs []resolver.Address) {
	if r, ok := sc.(*replicaSubConn); ok {
		sc = r.SubConn
	}
	c.ClientConn.UpdateAddresses(sc, addrs)
}

func (c *replicasCC) UpdateState(s balancer.State) { c.b.childState(c.child, s) }

// unwrapPicker hands grpc-go the subchannel it made (grpc-go accepts no
// other in a pick), and counts the attempts of calls that asked for it
// (CountAttempts, retry.go): each attempt grpc-go makes picks a replica
// once.
type unwrapPicker struct{ balancer.Picker }

func (p unwrapPicker) Pick(info balancer.PickInfo) (balancer.PickResult, error) {
	r, err := p.Picker.Pick(info)
	if sc, ok := r.SubConn.(*replicaSubConn); ok {
		r.SubConn = sc.SubConn
		if a, ok := info.Ctx.Value(attemptsKey{}).(*Attempts); ok {
			a.n.Add(1)
		}
	}
	return r, err
}

// replicaSubConn is one replica's subchannel as the child sees it.
type replicaSubConn struct {
	balancer.SubConn
	set   *replicaSet
	child *childPolicy
	// Guarded by set.mu: the connectivity state, and the health state
	// when the child registered for it (nil: not registered, as with
	// pick_first, which does no health checks).
	state  connectivity.State
	health *connectivity.State
}

// serving: connected and, when health is watched, SERVING. The caller
// holds set.mu.
func (sc *replicaSubConn) serving() bool {
	return sc.state == connectivity.Ready && (sc.health == nil || *sc.health == connectivity.Ready)
}

func (sc *replicaSubConn) setState(s connectivity.State) {
	defer sc.set.changed()
	sc.set.mu.Lock()
	defer sc.set.mu.Unlock()
	sc.state = s
	if s != connectivity.Ready {
		// A health listener lives for one READY period.
		sc.health = nil
	}
	if s == connectivity.Shutdown {
		delete(sc.set.subConns, sc)
	}
}

func (sc *replicaSubConn) RegisterHealthListener(l func(balancer.SubConnState)) {
	if l == nil {
		sc.SubConn.RegisterHealthListener(nil)
		return
	}
	sc.set.mu.Lock()
	waiting := connectivity.Connecting
	sc.health = &waiting
	sc.set.mu.Unlock()
	sc.SubConn.RegisterHealthListener(func(s balancer.SubConnState) {
		sc.set.mu.Lock()
		h := s.ConnectivityState
		sc.health = &h
		sc.set.mu.Unlock()
		sc.set.changed()
		l(s)
	})
}

func (sc *replicaSubConn) Shutdown() {
	sc.set.mu.Lock()
	delete(sc.set.subConns, sc)
	sc.set.mu.Unlock()
	sc.set.changed()
	sc.SubConn.Shutdown()
}
