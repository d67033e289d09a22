// Package estate is a large, real API estate for tests and benchmarks: the
// published descriptors of five Google Cloud APIs (Vertex AI v1, Compute
// Engine v1, Pub/Sub v1, Spanner database admin v1, Storage control v2;
// 168 services, 1,450 methods) served by a grpc-go server with server
// reflection and a dynamic handler behind every method.
//
// The descriptors come from the Google Cloud Go client modules, which
// register them when their generated packages are imported. Those modules
// are large, so they are dependencies of this nested module only: the
// gateway's own go.mod never sees them, and the gateway's tests that need
// the estate live here.
//
// Every method answers: a unary method returns an empty response (or what
// an [Options.Unary] handler returns), a server stream sends one empty
// message, a client stream reads to the end and answers once, and a
// bidirectional stream answers each request with one empty message.
package estate
