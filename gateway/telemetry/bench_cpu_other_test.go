//go:build !unix

package telemetry_test

import "testing"

// reportCPU reports nothing where getrusage is not available.
func reportCPU(*testing.B) func() { return func() {} }
