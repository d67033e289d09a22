//go:build !unix

package gateway_test

import (
	"testing"
	"time"
)

// reportCPU reports nothing where getrusage is not available.
func reportCPU(*testing.B) func() { return func() {} }

// processCPU is zero where getrusage is not available.
func processCPU(*testing.B) time.Duration { return 0 }
