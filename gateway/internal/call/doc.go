// Package call is the core of the call path: the calls of a compiled
// tool of each shape but a long-running one (Env.Unary, Env.ServerStream,
// Env.RequestStream for client and bidirectional streams, Env.Watch: the
// invokers the gateway gives those tools),
// the arguments read as a JSON object and decoded, the answer transcoded
// into a result, and the answers every call shape shares: invalid
// arguments (Env.InputError), a failed call's status as the client may
// see it (Env.Failed, Env.ClientStatus), a result's outcome for metrics
// and logs (WithOutcome).
//
// It needs of the gateway only an Env (its logger and the call options
// that shape answers), never the Gateway itself; the gateway binds Env's
// invokers to the tools it compiles (gateway/internal/compiled), so
// imports run gateway -> call -> compiled. No long-running operation or
// task code is on this path: those invokers are the gateway's.
package call

import "log/slog"

// Env is what the call path needs of the gateway, resolved in New.
type Env struct {
	Logger *slog.Logger
	// InputErrorsProtocol: invalid arguments are a protocol error
	// (-32602), not a tool execution error (Options.Calls.InputErrors).
	InputErrorsProtocol bool
	// ExposeDebugInfo is Options.Calls.ExposeDebugInfo.
	ExposeDebugInfo bool
	// StreamMaxMessages and StreamMaxBytes are Options.Calls' (resolved):
	// what one streaming call collects at most.
	StreamMaxMessages int
	StreamMaxBytes    int64
	// ResultBudget is the resolved result budget (Off: none), which a
	// watch's window counts against.
	ResultBudget int
}
