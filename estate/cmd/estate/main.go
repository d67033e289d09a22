// Command estate serves the estate (see package estate) until interrupted,
// to try the gateway by hand in front of a large real API:
//
//	go run ./cmd/estate -listen 127.0.0.1:50051
//	go run ../cmd/gateway --backend 127.0.0.1:50051
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/grpc-mcp-gateway/gateway/estate"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:50051", "address to serve the estate on")
	flag.Parse()
	srv, err := estate.Serve(&estate.Options{Listen: *listen})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "estate: %d services, %d methods on %s\n", estate.NumServices, estate.NumMethods, srv.Addr)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	srv.Stop()
}
