package gateway

import (
	"fmt"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/watch"
	"github.com/grpc-mcp-gateway/gateway/internal/methodglob"
)

// Open-ended streams (a Watch, a Subscribe, a Tail) are watch tools: a
// call collects for a window and ends the stream as a success
// (gateway/internal/watch). The gateway keeps their options and wires a
// watch's window into its stream path (gateway/internal/call/stream.go).

// Defaults of WatchOptions.
const (
	DefaultWatchWindow    = 10 * time.Second
	DefaultWatchMaxWindow = 2 * time.Minute
)

// WatchOptions shape the tools of open-ended streams.
type WatchOptions struct {
	// Window is the window of a call that does not choose one; default
	// DefaultWatchWindow.
	Window time.Duration
	// MaxWindow bounds the window a call may choose; default
	// DefaultWatchMaxWindow. The tool's stream timeout bounds it too.
	MaxWindow time.Duration
	// Methods are globs on "package.Service/Method" (the syntax of
	// Options.Catalog.Include) naming more server or bidirectional streams as
	// open-ended, whatever their names.
	Methods []string
	// IgnoreNames turns off recognising open-ended streams by their
	// methods' names: only the option and Methods count.
	IgnoreNames bool
}

// newWatchSettings checks o and resolves its defaults.
func newWatchSettings(o WatchOptions) (watch.Settings, error) {
	if o.Window < 0 || o.MaxWindow < 0 {
		return watch.Settings{}, &OptionError{Option: "Options.Calls.Watch", Err: fmt.Errorf("want positive windows, got Window %s, MaxWindow %s", o.Window, o.MaxWindow)}
	}
	s := watch.Settings{Window: o.Window, MaxWindow: o.MaxWindow, ByName: !o.IgnoreNames}
	if s.Window == 0 {
		s.Window = DefaultWatchWindow
	}
	if s.MaxWindow == 0 {
		s.MaxWindow = max(DefaultWatchMaxWindow, s.Window)
	}
	if s.Window > s.MaxWindow {
		return watch.Settings{}, &OptionError{Option: "Options.Calls.Watch", Err: fmt.Errorf("the default window %s is longer than the maximum %s", s.Window, s.MaxWindow)}
	}
	var err error
	if s.Patterns, err = methodglob.CompileOption("Options.Calls.Watch.Methods", o.Methods); err != nil {
		return watch.Settings{}, err
	}
	return s, nil
}
