//go:build unix

package gateway_test

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU starts counting this process's CPU time (user and system:
// client, server and backend together, the same for every case, so the
// difference between cases is the server side's) and returns what
// reports it per call as cpu-µs/op. On a shared machine it moves far less
// than ns/op, which counts the waits for a core.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((processCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
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
