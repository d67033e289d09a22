package gateway

import (
	"encoding/json"
	"fmt"
	"sync"

	"google.golang.org/grpc/balancer"
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
	mu        sync.Mutex
	addresses int
	subConns  map[*replicaSubConn]struct{}
	// observe, when set, is told the counts after every change (the
	// gateway's metrics); it is called without mu held.
	observe func(total, serving int)
}

// setObserver makes f receive the counts now and after every change.
func (s *replicaSet) setObserver(f func(total, serving int)) {
	s.mu.Lock()
	s.observe = f
	s.mu.Unlock()
	s.changed()
}

// changed tells the observer the current counts.
func (s *replicaSet) changed() {
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
	return s.addresses, serving
}

type replicasConfig struct {
	serviceconfig.LoadBalancingConfig `json:"-"`
	// Child is the policy that picks: round_robin or pick_first.
	Child string `json:"child"`
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
	b := &replicasBalancer{opts: opts, set: &replicaSet{}}
	b.cc = &replicasCC{ClientConn: cc, b: b}
	return b
}

type replicasBalancer struct {
	cc        *replicasCC
	opts      balancer.BuildOptions
	child     balancer.Balancer
	childName string
	// set is replaced by the connection's own on the first update; grpc-go
	// calls the balancer from one goroutine at a time, so b.set needs no
	// lock of its own.
	set *replicaSet
}

func (b *replicasBalancer) UpdateClientConnState(s balancer.ClientConnState) error {
	cfg, ok := s.BalancerConfig.(*replicasConfig)
	if !ok {
		return fmt.Errorf("%s: config of type %T: %w", replicasPolicy, s.BalancerConfig, balancer.ErrBadResolverState)
	}
	if set, ok := s.ResolverState.Attributes.Value(replicaSetKey{}).(*replicaSet); ok {
		b.set = set
	}
	if b.child == nil || b.childName != cfg.Child {
		if b.child != nil {
			b.child.Close()
		}
		b.child, b.childName = balancer.Get(cfg.Child).Build(b.cc, b.opts), cfg.Child
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
	return b.child.UpdateClientConnState(s)
}

func (b *replicasBalancer) ResolverError(err error) {
	if b.child != nil {
		b.child.ResolverError(err)
	}
}

func (b *replicasBalancer) UpdateSubConnState(sc balancer.SubConn, s balancer.SubConnState) {
	// Every SubConn is made with a StateListener, so grpc-go never calls
	// this; forward it for a child that expects it anyway.
	if b.child != nil {
		b.child.UpdateSubConnState(sc, s)
	}
}

func (b *replicasBalancer) Close() {
	if b.child != nil {
		b.child.Close()
	}
}

func (b *replicasBalancer) ExitIdle() {
	if b.child != nil {
		b.child.ExitIdle()
	}
}

// replicasCC is the ClientConn the child sees.
type replicasCC struct {
	balancer.ClientConn
	b *replicasBalancer
}

func (c *replicasCC) NewSubConn(addrs []resolver.Address, opts balancer.NewSubConnOptions) (balancer.SubConn, error) {
	sc := &replicaSubConn{set: c.b.set, state: connectivity.Idle}
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

func (c *replicasCC) UpdateState(s balancer.State) {
	if s.Picker != nil {
		s.Picker = unwrapPicker{s.Picker}
	}
	c.ClientConn.UpdateState(s)
}

// unwrapPicker hands grpc-go the subchannel it made: grpc-go accepts no
// other in a pick.
type unwrapPicker struct{ balancer.Picker }

func (p unwrapPicker) Pick(info balancer.PickInfo) (balancer.PickResult, error) {
	r, err := p.Picker.Pick(info)
	if sc, ok := r.SubConn.(*replicaSubConn); ok {
		r.SubConn = sc.SubConn
	}
	return r, err
}

// replicaSubConn is one replica's subchannel as the child sees it.
type replicaSubConn struct {
	balancer.SubConn
	set *replicaSet
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
