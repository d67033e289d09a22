package main

import (
	"context"
	"errors"
	"testing"
)

// TestInFlagWords: library errors reach the operator in flag names, and a
// phrase that already names the flag beside the option is not doubled.
func TestInFlagWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"backend big: its descriptor files, not the backend, took longer than the discovery's deadline, Options.Catalog.DiscoveryTimeout (gateway: --discovery-timeout): raise it",
			"backend big: its descriptor files, not the backend, took longer than the discovery's deadline, --discovery-timeout: raise it"},
		{"Options.Catalog.DiscoveryTimeout: must be positive", "--discovery-timeout: must be positive"},
		{"nothing to restate", "nothing to restate"},
	} {
		err := inFlagWords(errors.Join(errors.New(tc.in), context.DeadlineExceeded))
		if got := err.Error(); got != tc.want+"\n"+context.DeadlineExceeded.Error() {
			t.Errorf("inFlagWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("inFlagWords(%q) lost the error it wraps", tc.in)
		}
	}
}
