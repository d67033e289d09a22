package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
)

// demo is the bundled zoo backend, run in-process so a fresh checkout
// shows the gateway working: with --demo, or when nothing names a backend
// at all (see checkDemo).
type demo struct {
	addr string
	stop func() error
}

// checkDemo decides whether the demo runs, after the command line, the
// variables and the file are applied. It runs only when asked (--demo) or
// when nothing at all names a backend; settings that only make sense for a
// backend of one's own (a config file, descriptor files) without one are
// a mistake, answered with what to add rather than with the demo.
func (c *config) checkDemo() error {
	named := len(c.backends.parsed) > 0
	switch {
	case c.demo && named:
		return settingErrorf("%s starts the bundled demo backend instead of yours: give %s or %s, not both", flagName("demo"), flagName("demo"), flagName("backend"))
	case c.demo || named:
		return nil
	case c.configFile != "" || c.checkConfig != "":
		file := c.configFile
		if file == "" {
			file = c.checkConfig
		}
		return settingErrorf("%s %s names no backend: add a backends: entry (name, address) to it, or give %s NAME=HOST:PORT; %s runs the bundled demo backend", flagName("config"), file, flagName("backend"), flagName("demo"))
	case len(c.backends.descriptorSets) > 0 || len(c.backends.protos) > 0:
		return settingErrorf("%s and %s describe a backend of yours, and none is named: add %s NAME=HOST:PORT; %s runs the bundled demo backend", flagName("descriptor-set"), flagName("proto"), flagName("backend"), flagName("demo"))
	}
	c.demo = true
	return nil
}

func startDemo(ctx context.Context, logger *slog.Logger) (*demo, error) {
	addr, stop, err := zoo.Listen(ctx, zoo.WithLogger(logger.With("component", "demo-backend")))
	if err != nil {
		return nil, fmt.Errorf("starting the demo backend: %w", err)
	}
	return &demo{addr: addr, stop: stop}, nil
}
