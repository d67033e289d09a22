// Command zoo runs the zoo demo backend (package zoo) on its own, with gRPC
// health and server reflection, until interrupted:
//
//	go run ./examples/zoo -listen 127.0.0.1:50051
//
// Logs go to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:50051", "address to serve gRPC on")
	noReflection := flag.Bool("no-reflection", false, "do not serve gRPC server reflection (to try a backend without it)")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(logger, *listen, *noReflection); err != nil {
		logger.Error("zoo failed", "err", err)
		os.Exit(1)
	}
}

func run(logger *slog.Logger, addr string, noReflection bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	opts := []zoo.Option{zoo.WithLogger(logger)}
	if noReflection {
		opts = append(opts, zoo.WithoutReflection())
	}
	return zoo.Serve(ctx, lis, opts...)
}
