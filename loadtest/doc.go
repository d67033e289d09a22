// Package loadtest drives the gateway binary under load and faults, over
// loopback only: a real grpc-go backend (the zoo, in this process, or any
// address), the gateway built once from this checkout and run as a
// subprocess, and many MCP clients speaking Streamable HTTP and WebSocket
// from this process. It measures what an operator sizes a fleet with:
// calls per second per core of the gateway, latency percentiles, errors,
// and the gateway process's resident memory and goroutines.
//
// It is a module of its own (like estate/) so that its test-only
// dependency, Shopify's toxiproxy (the fault proxy the fault tests put
// between gateway and backend), stays out of the gateway's go.mod.
//
// Every loop is bounded in count and time. The capacity table in
// docs/performance.md comes from `make bench-load` (cmd/load); the short
// smoke and fault tests (go test ./loadtest/...) run in `make test`.
package loadtest
