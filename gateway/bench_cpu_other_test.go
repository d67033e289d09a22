//go:build !unix

package gateway_test

import "testing"

// reportCPU reports nothing where getrusage is not available.
func reportCPU(*testing.B) func() { return func() {} }
