package zoo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
)

// shutdownGrace bounds how long Serve waits for calls in flight (a client
// stream that never ends, say) before cutting them off.
const shutdownGrace = 5 * time.Second

// Register adds the zoo service, and only it, to r. Use it to put the zoo
// next to other services on a server of your own; Serve does the rest.
func Register(r grpc.ServiceRegistrar, srv *Server) {
	zoov1.RegisterZooServiceServer(r, srv)
}

// Serve serves a new zoo (NewServer with opts) on lis, together with the
// gRPC health service (grpc.health.v1, SERVING for "" and ServiceName) and,
// unless WithoutReflection is given, server reflection v1 and v1alpha.
//
// It blocks until ctx is done, then stops gracefully: health turns to
// NOT_SERVING, streams in progress end, and calls in flight get up to 5s to
// finish. It returns nil after a stop caused by ctx, or the error that made
// the server fail. It closes lis in either case.
func Serve(ctx context.Context, lis net.Listener, opts ...Option) error {
	c := newConfig(opts)
	srv := newServer(c)
	gs := grpc.NewServer()
	Register(gs, srv)
	hs := health.NewServer()
	hs.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	if c.reflection {
		reflection.Register(gs)
	}

	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	c.logger.Info("zoo serving", "addr", lis.Addr().String(), "reflection", c.reflection)

	select {
	case err := <-served:
		return fmt.Errorf("zoo: serve %s: %w", lis.Addr(), err)
	case <-ctx.Done():
	}
	c.logger.Info("zoo stopping", "addr", lis.Addr().String())
	hs.Shutdown()
	srv.close()
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		c.logger.Warn("zoo: calls still in flight after grace period; closing them", "grace", shutdownGrace)
		gs.Stop()
		<-stopped
	}
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("zoo: serve %s: %w", lis.Addr(), err)
	}
	return nil
}

// Listen starts a zoo (see Serve) on a free loopback port and returns its
// address, for running the zoo in-process: the gateway's no-backend mode and
// tests. stop ends the zoo, waits until its goroutines are gone and returns
// what Serve returned; it may be called more than once. Cancelling ctx stops
// the zoo too, but only stop waits for it.
func Listen(ctx context.Context, opts ...Option) (addr string, stop func() error, err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("zoo: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		serveErr = Serve(ctx, lis, opts...)
	}()
	var once sync.Once
	stop = func() error {
		once.Do(func() {
			cancel()
			<-done
		})
		return serveErr
	}
	return lis.Addr().String(), stop, nil
}
