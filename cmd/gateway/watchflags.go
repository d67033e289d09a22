package main

import (
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

// watchFlags shape the tools of open-ended streams (gateway.WatchOptions).
type watchFlags struct {
	window, maxWindow time.Duration
	methods           stringList
	ignoreNames       bool
}

func (w *watchFlags) check() error {
	for _, g := range w.methods {
		if err := checkGlob("watch", g); err != nil {
			return err
		}
	}
	if w.window > w.maxWindow {
		return settingErrorf("%s %s: longer than %s %s", flagName("watch-window"), w.window, flagName("watch-max-window"), w.maxWindow)
	}
	return nil
}

func (w *watchFlags) options() gateway.WatchOptions {
	return gateway.WatchOptions{Window: w.window, MaxWindow: w.maxWindow, Methods: w.methods, IgnoreNames: w.ignoreNames}
}
