package gateway

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcreflection "google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/internal/testutil"
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

// serveZoo serves the zoo with reflection and h as its health service on
// a loopback port, until the test ends.
func serveZoo(t *testing.T, h healthpb.HealthServer) string {
	t.Helper()
	addr, _ := serveZooServer(t, h)
	return addr
}

// serveZooServer is serveZoo, returning the server too, for a test that
// stops it early.
func serveZooServer(t *testing.T, h healthpb.HealthServer) (string, *grpc.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	zoo.Register(gs, zoo.NewServer())
	healthpb.RegisterHealthServer(gs, h)
	grpcreflection.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), gs
}

// TestHealthSwitchKeepsReady: when discovery finds grpc.health.v1.Health
// and the connection's policy switches to health checking, the channel
// stays READY throughout, even when the first replica to pass its health
// check turns NOT_SERVING before the other has answered. (The new policy
// used to take over at its first healthy replica; losing that one left
// the channel CONNECTING, and /readyz 503, with a healthy replica
// connected.)
func TestHealthSwitchKeepsReady(t *testing.T) {
	t.Parallel()
	a := &watchedHealth{Server: health.NewServer(), gate: make(chan struct{})}
	b := &watchedHealth{Server: health.NewServer(), sent: make(chan struct{})}
	addrA, addrB := serveZoo(t, a), serveZoo(t, b)
	conn, err := DialBackend(addrA+","+addrB, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// Both replicas connected before the switch, so the policy being
	// replaced can pick either.
	conn.Connect()
	testutil.WaitFor(t, "both replicas connected", func() bool {
		total, serving := conn.Replicas()
		return total == 2 && serving == 2
	})
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

	nctx, ncancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ncancel()
	g, err := New(nctx, []Backend{{Name: "zoo", Address: conn.Target, Conn: conn}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)

	// The health-checked policy hears SERVING from b (a's Watch is held),
	// then NOT_SERVING on the same stream.
	testutil.WaitFor(t, "b's first health response sent", func() bool {
		select {
		case <-b.sent:
			return true
		default:
			return false
		}
	})
	b.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	testutil.WaitFor(t, "b's NOT_SERVING recorded", func() bool {
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
	testutil.WaitFor(t, "one replica of two serving, by health checks", func() bool {
		total, serving := conn.Replicas()
		return total == 2 && serving == 1
	})
	select {
	case s := <-left:
		t.Errorf("the channel left READY (for %s) during the switch to health checking", s)
	default:
	}
	if r := g.Ready(); !r.Ready {
		t.Errorf("not ready after the switch: %+v", r)
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
	a := &watchedHealth{Server: health.NewServer(), gate: make(chan struct{})}
	b := &watchedHealth{Server: health.NewServer(), sent: make(chan struct{})}
	addrA, srvA := serveZooServer(t, a)
	addrB, srvB := serveZooServer(t, b)
	conn, err := DialBackend(addrA+","+addrB, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn.Connect()
	testutil.WaitFor(t, "both replicas connected", func() bool {
		total, serving := conn.Replicas()
		return total == 2 && serving == 2
	})
	nctx, ncancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ncancel()
	g, err := New(nctx, []Backend{{Name: "zoo", Address: conn.Target, Conn: conn}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	// The health-checked policy is READY through b and still waits for
	// a, whose Watch is held: the old policy keeps picking.
	testutil.WaitFor(t, "b's first health response sent", func() bool {
		select {
		case <-b.sent:
			return true
		default:
			return false
		}
	})
	srvA.Stop()
	srvB.Stop()
	testutil.WaitFor(t, "the channel to leave READY with both replicas gone", func() bool {
		return conn.GetState() != connectivity.Ready
	})
	closed := make(chan struct{})
	go func() { conn.Close(); close(closed) }()
	testutil.WaitFor(t, "the connection to close", func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	})
}
