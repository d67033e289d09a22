// Command zoo runs the zoo demo backend (package zoo) on its own, with gRPC
// health and server reflection, until interrupted:
//
//	go run ./examples/zoo -listen 127.0.0.1:50051
//	go run ./examples/zoo -listen unix:///tmp/zoo.sock
//
// Logs go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:50051", "address to serve gRPC on: HOST:PORT, or unix:///PATH for a unix socket")
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
	network := "tcp"
	if path, ok := strings.CutPrefix(addr, "unix://"); ok {
		// A socket file left by a previous run (a restarted container
		// keeps its volume) would make Listen fail.
		network, addr = "unix", path
		if err := os.Remove(addr); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the old socket %s: %w", addr, err)
		}
	}
	lis, err := net.Listen(network, addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	opts := []zoo.Option{zoo.WithLogger(logger)}
	if noReflection {
		opts = append(opts, zoo.WithoutReflection())
	}
	return zoo.Serve(ctx, lis, opts...)
}
