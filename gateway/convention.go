package gateway

import (
	"fmt"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/limit"
)

// One rule for every numeric option of this package (Options,
// MethodSettings, Backend), of gateway/backendconn's Options and of
// gateway/mcp's option structs, implemented once in internal/limit, so a
// caller never has to look up what 0 or -1 means:
//
//   - The zero value means the default, which the option's doc names
//     (usually a Default... constant). Leaving an option out and setting
//     it to 0 are the same thing.
//   - Off (any negative value) switches the option off or leaves it
//     unbounded, where its doc says it may be: Refresh: Off stops the
//     timer, MaxConcurrentCalls: Off sets no limit, Keepalive: Off sends
//     no pings.
//   - An option that may not be off (a call always has a deadline, a
//     stream is always bounded) makes New fail on a negative value, with
//     an error naming the option.
//
// cmd/gateway follows the same rule on the command line, in GATEWAY_*
// variables and in the config file, spelling Off as a word ("off" for
// durations, "unlimited" for counts and sizes); see docs/settings.md, "Settings:
// defaults and off".

// Off switches off, or unbounds, an option that allows it; see the rule
// above. It is untyped, so it serves durations and counts alike, and it
// is the only value that means "off": Options.Results.MaxBytes: Off is no
// result budget, Options.Search.ToolBudget: Off always lists typed tools.
const Off = limit.Off

// DefaultCallTimeout is the default of Options.Calls.Timeout.
const DefaultCallTimeout = 30 * time.Second

// mustNotBeOff is the error of an option that may not be off given a
// negative value.
func mustNotBeOff[T limit.Number](option string, v T, why string) error {
	if v >= 0 {
		return nil
	}
	return &OptionError{Option: option, Err: fmt.Errorf("cannot be off (%s), got %v; 0 means the default", why, v)}
}

// wrapOption names the Options field whose own Check failed.
func wrapOption(field string, err error) error {
	if err == nil {
		return nil
	}
	return &OptionError{Option: field, Err: err}
}

// Defaults of the streaming limits (Options.Calls.StreamTimeout,
// StreamMaxMessages, StreamMaxBytes).
const (
	DefaultStreamTimeout     = 5 * time.Minute
	DefaultStreamMaxMessages = 10000
	// DefaultStreamMaxBytes keeps a full result (its JSON appears twice,
	// in structuredContent and in the text block) under the 16 MiB per
	// message that the official SDK clients accept by default.
	DefaultStreamMaxBytes = 4 << 20
)
