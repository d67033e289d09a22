package main

import (
	"flag"
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

func (w *watchFlags) register(fs *flag.FlagSet) {
	limitVar(fs, &w.window, "watch-window", gateway.DefaultWatchWindow, false, "how long a call of an open-ended stream (a watch, a subscription, a tail) collects messages when the model does not choose (its window-seconds argument); the call then returns them as a successful result")
	limitVar(fs, &w.maxWindow, "watch-max-window", gateway.DefaultWatchMaxWindow, false, "the longest window a call of an open-ended stream may choose; the stream's deadline (--stream-timeout, --method-timeout) bounds it too")
	fs.Var(&w.methods, "watch", "GLOB: also treat the server or bidirectional streams GLOB matches (package.Service/Method, as --include) as open-ended, whatever their names (repeatable)")
	fs.BoolVar(&w.ignoreNames, "watch-ignore-names", false, "do not recognise open-ended streams by their methods' names (Watch, Subscribe, Tail, Follow, Listen, StreamingPull, LongPoll): only --watch and the (mcpgateway.v1.tool) watch option")
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
