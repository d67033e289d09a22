// Package realservices runs the gateway in front of real, large gRPC
// servers that no one here wrote: Temporal's, through its in-process
// test server (go.temporal.io/server/temporaltest, run by temporaldev),
// and etcd's, in package etcd (realservices/etcd). It is a module of its
// own, like estate/, so that the server and its many dependencies stay out
// of the gateway's go.mod; it holds tests only.
package realservices
