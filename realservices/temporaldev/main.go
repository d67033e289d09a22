// Command temporaldev runs Temporal's server as its test server does
// (go.temporal.io/server/temporaltest: every service in one process, an
// in-memory store, server reflection on the frontend, one namespace
// registered), for the tests in realservices to put the gateway in front
// of. It is a module of its own because the server and the gateway need
// versions of OpenTelemetry that cannot be built into one binary.
//
// It prints one line, "frontend=HOST:PORT namespace=NAME", once the
// server is ready, and stops when its standard input closes (the test
// that started it ended, or died) or on SIGINT or SIGTERM.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	fmt.Printf("frontend=%s namespace=%s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	ts.Stop()
}
