package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
)

// demo is the bundled zoo backend, run in-process when no --backend is
// given so a fresh checkout shows the gateway working.
type demo struct {
	addr string
	stop func() error
}

func startDemo(ctx context.Context, logger *slog.Logger) (*demo, error) {
	addr, stop, err := zoo.Listen(ctx, zoo.WithLogger(logger.With("component", "demo-backend")))
	if err != nil {
		return nil, fmt.Errorf("starting the demo backend: %w", err)
	}
	return &demo{addr: addr, stop: stop}, nil
}
