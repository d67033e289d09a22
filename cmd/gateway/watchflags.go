package main

import (
	"fmt"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// watchFlags shape the tools of open-ended streams (gateway.WatchOptions).
type watchFlags struct {
	window, maxWindow time.Duration
	methods           stringList
	ignoreNames       bool
}

func (w *watchFlags) check() error {
	for _, g := range w.methods {
		if err := methodglob.Check("--watch", g); err != nil {
			return err
		}
	}
	if w.window > w.maxWindow {
		return fmt.Errorf("--watch-window %s: longer than --watch-max-window %s", w.window, w.maxWindow)
	}
	return nil
}

func (w *watchFlags) options() gateway.WatchOptions {
	return gateway.WatchOptions{Window: w.window, MaxWindow: w.maxWindow, Methods: w.methods, IgnoreNames: w.ignoreNames}
}
