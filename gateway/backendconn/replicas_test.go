package backendconn

import (
	"context"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// watchedHealth is grpc-go's health service with two hooks on Watch:
// gate, when set, holds every Watch until it is closed; sent, when set,
// is closed once the first response has gone out.
type watchedHealth struct {
	*health.Server
	gate     chan struct{}
	sent     chan struct{}
	sentOnce sync.Once
}

func (h *watchedHealth) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	if h.gate != nil {
		select {
		case <-h.gate:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
	return h.Server.Watch(req, sentStream{stream, h})
}

type sentStream struct {
	healthpb.Health_WatchServer
	h *watchedHealth
}

func (s sentStream) Send(m *healthpb.HealthCheckResponse) error {
	err := s.Health_WatchServer.Send(m)
	if s.h.sent != nil {
		s.h.sentOnce.Do(func() { close(s.h.sent) })
	}
	return err
}

// serveZoo serves the zoo with h as its health service on a loopback
// port, until the test ends or it is stopped.
func serveZoo(t *testing.T, h healthpb.HealthServer) (string, *grpc.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	zoo.Register(gs, zoo.NewServer())
	healthpb.RegisterHealthServer(gs, h)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), gs
}

// healthReplicas are two zoo replicas behind one connection whose
// health services a test steers: a holds every Watch until a.gate is
// closed; b.sent is closed once b has answered its first Watch.
type healthReplicas struct {
	a, b       *watchedHealth
	srvA, srvB *grpc.Server
	conn       *Conn
}

// connectHealthReplicas serves the two replicas and connects to both,
// before any health checking, so the policy that health checking
// replaces can pick either.
func connectHealthReplicas(t *testing.T) *healthReplicas {
	t.Helper()
	r := &healthReplicas{
		a: &watchedHealth{Server: health.NewServer(), gate: make(chan struct{})},
		b: &watchedHealth{Server: health.NewServer(), sent: make(chan struct{})},
	}
	var addrA, addrB string
	addrA, r.srvA = serveZoo(t, r.a)
	addrB, r.srvB = serveZoo(t, r.b)
	conn, err := Dial(addrA+","+addrB, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r.conn = conn
	conn.Connect()
	testkit.WaitFor(t, "both replicas connected", func() bool {
		total, serving := conn.Replicas()
		return total == 2 && serving == 2
	})
	return r
}

// switchToHealthChecks tells the connection what a discovery of the
// backend finds, the health service, which switches the connection's
// policy to health checking, and waits for b's first answer: the
// health-checked policy is then READY through b, and still waits for a.
func (r *healthReplicas) switchToHealthChecks(t *testing.T) {
	t.Helper()
	r.conn.SetDiscovered(nil, true)
	testkit.WaitFor(t, "b's first health response sent", isClosed(r.b.sent))
}

// isClosed is a WaitFor condition: ch is closed.
func isClosed(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

// TestHealthSwitchKeepsReady: when discovery finds grpc.health.v1.Health
// (SetDiscovered) and the connection's policy switches to health checking, the channel
// stays READY throughout, even when the first replica to pass its health
// check turns NOT_SERVING before the other has answered. (The new policy
// used to take over at its first healthy replica; losing that one left
// the channel CONNECTING, and the gateway's /readyz 503, with a healthy
// replica connected.)
func TestHealthSwitchKeepsReady(t *testing.T) {
	t.Parallel()
	r := connectHealthReplicas(t)
	conn, a, b := r.conn, r.a, r.b
	if s := conn.GetState(); s != connectivity.Ready {
		t.Fatalf("channel %s with both replicas connected", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan connectivity.State, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		if conn.WaitForStateChange(ctx, connectivity.Ready) {
			left <- conn.GetState()
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	// The health-checked policy hears SERVING from b (a's Watch is held),
	// then NOT_SERVING on the same stream.
	r.switchToHealthChecks(t)
	b.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	testkit.WaitFor(t, "b's NOT_SERVING recorded", func() bool {
		conn.ch.replicas.mu.Lock()
		defer conn.ch.replicas.mu.Unlock()
		for sc := range conn.ch.replicas.subConns {
			if sc.health != nil && *sc.health == connectivity.TransientFailure {
				return true
			}
		}
		return false
	})
	close(a.gate)
	// The switch done: the replaced policy's connections are gone, and
	// health checks count a serving and b not.
	testkit.WaitFor(t, "one replica of two serving, by health checks", func() bool {
		total, serving := conn.Replicas()
		return total == 2 && serving == 1
	})
	select {
	case s := <-left:
		t.Errorf("the channel left READY (for %s) during the switch to health checking", s)
	default:
	}
	if s := conn.GetState(); s != connectivity.Ready {
		t.Errorf("channel %s after the switch", s)
	}
}

// TestHealthSwitchCurrentLost: the policy being replaced loses every
// replica while the health-checked one is still waiting for a replica's
// first answer. The new policy then takes over at once, and the old one
// is closed from inside its own state report, which must not deadlock
// (it did: endpointsharding holds its lock while it reports, and Close
// takes the same lock, so the channel froze READY with no replica left
// and Close never returned).
func TestHealthSwitchCurrentLost(t *testing.T) {
	t.Parallel()
	r := connectHealthReplicas(t)
	// The old policy keeps picking while the health-checked one waits for
	// a, whose Watch is held.
	r.switchToHealthChecks(t)
	r.srvA.Stop()
	r.srvB.Stop()
	testkit.WaitFor(t, "the channel to leave READY with both replicas gone", func() bool {
		return r.conn.GetState() != connectivity.Ready
	})
	closed := make(chan struct{})
	go func() { r.conn.Close(); close(closed) }()
	testkit.WaitFor(t, "the connection to close", isClosed(closed))
}

// TestHealthCheckingLinked: client-side health checking works only where
// grpc-go's health package is linked; this package must link it itself,
// not rely on a program (or a test) that happens to import it.
func TestHealthCheckingLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if !slices.Contains(strings.Fields(string(out)), "google.golang.org/grpc/health") {
		t.Error("package backendconn does not link google.golang.org/grpc/health: the healthCheckConfig it sets would be ignored")
	}
}
