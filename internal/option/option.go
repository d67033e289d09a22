// Package option holds the error of a bad option, shared by the packages
// that take option structs (gateway.Options, auth.OAuthConfig), so a
// program that sets them from its own names (cmd/gateway: flags,
// variables, config keys) finds which option an error is about by type,
// with errors.As, never by reading the message.
package option

// Error is an error in the value of one option, or found about it while
// the gateway runs (a tool scope rule that matches no tool, a JWKS that
// cannot be fetched, a discovery that outlasts its deadline).
type Error struct {
	// Option is the option's path from its struct's type name, as a Go
	// program writes it: "Options.Calls.Timeout",
	// "Options.FrontDoor.Toolsets[2].Name", "OAuthConfig.JWKSURL".
	Option string
	// Err says what is wrong, in words that name no other option, so a
	// caller that names the option its own way can say
	// "--call-timeout: " + Err.Error().
	Err error
}

func (e *Error) Error() string { return e.Option + ": " + e.Err.Error() }

// Unwrap returns Err, so errors.Is sees what it wraps
// (gateway.ErrUnmatchedScopeRule, context.DeadlineExceeded...).
func (e *Error) Unwrap() error { return e.Err }
