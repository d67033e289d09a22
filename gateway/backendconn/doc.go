// Package backendconn is the gateway's connection to one gRPC backend: a
// *grpc.ClientConn (Conn, made by Dial) with the transport security a
// backend's address calls for (tls.go), a service config of its own
// (channel.go), a load balancing policy that counts the replicas serving
// (replicas.go), and grpc-go's retries of the methods safe to repeat,
// whose attempts a caller may count (retry.go). Addresses are parsed by
// internal/grpctarget.
//
// It knows nothing of MCP or of the gateway that uses it: it never
// imports package gateway or gateway/mcp (TestPackageBoundaries). What a
// discovery of the backend's API decides (which methods are safe to
// repeat, whether the backend serves grpc.health.v1.Health) comes in
// through Conn.SetDiscovered; what the gateway reports (replicas for
// /readyz and the metrics, the message limit a refused call ran into)
// goes out through Conn.Replicas, Conn.ObserveReplicas and
// Conn.ExceededLimit.
//
// # Concurrency
//
// Every method of Conn is safe for concurrent use. grpc-go calls the
// resolver wrapper and the balancer from its own goroutines, and the
// package's locks keep three orders:
//
//   - channel.pushMu, then channel.mu. pushMu is held across every push of
//     a resolver state to grpc-go (an address update from the resolver,
//     or a new service config from SetDiscovered), so a config change and
//     an address change cannot overtake each other. mu guards the
//     channel's fields and is never held while calling grpc-go or the
//     wrapped resolver.
//   - grpc-go hands a pushed state to the balancer before the push
//     returns, so the balancer's and the replica set's locks are taken
//     below pushMu: pushMu, then replicasBalancer.mu or
//     replicaSet.observeMu, then replicaSet.mu. None of them is held while
//     taking pushMu.
//   - replicaSet.observeMu, then replicaSet.mu. Counts are read and handed
//     to the observer under observeMu, so the observer sees them in
//     order; it is called without mu. A subchannel's state is recorded
//     under mu and the observer told after mu is released.
//
// Hence the one rule for a caller: an observer given to
// Conn.ObserveReplicas runs below pushMu and observeMu, so it must return
// quickly and must not call the Conn (SetDiscovered would wait for pushMu,
// ObserveReplicas for observeMu, forever).
//
// The balancer (replicasBalancer) is called by grpc-go one method at a
// time, but its children (round_robin, pick_first) report their state
// from other goroutines too, so replicasBalancer.mu guards which child is
// current and which pending. No child method is called with it held: a
// child may report its state from inside one. States are forwarded to
// grpc-go under it, so they arrive in the order decided there (grpc-go's
// UpdateState calls back into no balancer). A replaced child is closed on
// a goroutine of its own, as grpc-go's gracefulswitch does: closing it
// from inside its own state report deadlocked, since endpointsharding
// holds its lock while reporting and Close takes it too
// (TestHealthSwitchCurrentLost). Close marks the balancer closed, so no
// child is replaced afterwards, and waits for those goroutines: they are
// the only ones the package starts.
//
// This package is library API because a program embedding the gateway
// dials each backend with [Dial] and hands the [Conn] over as
// gateway.Backend.Conn; a plain *grpc.ClientConn works there too, without
// the replica reports, retries and message-limit errors.
package backendconn
