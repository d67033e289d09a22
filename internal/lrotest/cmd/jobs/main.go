// Command jobs runs the long-running operations test backend (package
// lrotest) on a loopback port until interrupted, for the interop suites:
//
//	go run ./internal/lrotest/cmd/jobs
//
// It logs `msg="jobs serving" addr=HOST:PORT` on stderr once it serves.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
)

func main() {
	noWait := flag.Bool("no-wait", false, "answer WaitOperation with UNIMPLEMENTED")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, stopServer, err := lrotest.Start(lrotest.Options{NoWait: *noWait})
	if err != nil {
		logger.Error("jobs failed", "err", err)
		os.Exit(1)
	}
	logger.Info("jobs serving", "addr", srv.Addr)
	<-ctx.Done()
	stopServer()
}
