//go:build unix

package telemetry_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts counting this process's CPU time (user and system)
// and returns what reports it per operation as cpu-ns/op: on a shared
// machine it moves far less than ns/op, which counts the waits for a
// core. With a pipe it includes the goroutine draining the pipe.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
