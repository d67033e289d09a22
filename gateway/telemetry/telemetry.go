// Package telemetry is how an operator watches the gateway: Prometheus
// metrics on a registry of their own, OpenTelemetry spans for tools/call
// with the W3C trace context carried from the MCP request to the backend,
// and one structured log line per call ([LogCall]), which a logger made
// by [NewLogger] formats without log/slog's per-attribute work.
//
// Every piece is optional and off costs nothing: a nil *Metrics, a nil
// *Tracer and a nil *ToolMetrics or *ToolTracer are valid and do nothing,
// so tests and library users who configure none of it pay no more than a
// nil check per call. What a call does when it is on is resolved once per
// tool at discovery ([Metrics.Tool], [Tracer.Tool]), so the per-call cost
// is an atomic add, a histogram observation and, with tracing, one span.
//
// The package knows nothing of MCP or of the gateway's catalog: it takes
// names, gRPC codes and raw JSON, so the gateway composes it and so could
// anything else that calls gRPC on behalf of a client.
//
// This package is library API because a program embedding the gateway
// hands it a [Metrics] made by [NewMetrics] (gateway.Options.Telemetry,
// served at /metrics) and dials its backends with [GRPCDialOption] of the
// tracer provider it gives the gateway ([SetupTracing] makes one from the
// OTEL_* environment); the rest is what the gateway records per call.
package telemetry

import (
	"strconv"

	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"
)

// numCodes is how many canonical gRPC codes there are (OK..UNAUTHENTICATED).
const numCodes = int(codes.Unauthenticated) + 1

// codeNames are the canonical names of the gRPC codes as the gRPC
// specification spells them, read once from the google.rpc.Code enum
// rather than kept as a table of our own, so a metric label, a span
// attribute and the text a model reads all say NOT_FOUND alike. grpc-go's
// codes.Code.String spells them differently ("NotFound"), so it cannot
// serve.
var codeNames = func() (names [numCodes]string) {
	for c := range names {
		names[c] = rpccode.Code(c).String()
	}
	return names
}()

// canonical folds a code outside the 17 defined ones into UNKNOWN, as the
// gRPC specification tells clients to treat them; it keeps the code label
// to 17 values whatever a backend sends.
func canonical(c codes.Code) codes.Code {
	if uint32(c) >= uint32(numCodes) {
		return codes.Unknown
	}
	return c
}

// CodeName returns the canonical upper-case name of a gRPC code
// (NOT_FOUND), as the gRPC specification and google.rpc.Code spell it. It
// is the module's one spelling of a code: the gateway's results, task
// statuses and errors name codes with it, and so do the metrics, spans and
// call logs of this package.
//
// A code past the 17 defined ones reads CODE_n (CODE_42), so the model sees
// what the backend sent. The grpc_code metric label, the
// rpc.response.status_code and error.type span attributes and the call
// log's code fold such a code into UNKNOWN first, as the gRPC specification
// tells clients to, which keeps them to 17 values whatever a backend sends.
func CodeName(c codes.Code) string {
	if uint32(c) < uint32(numCodes) {
		return codeNames[c]
	}
	return "CODE_" + strconv.FormatUint(uint64(c), 10)
}

// codeLabel is the name of c folded into the 17 codes: the value of the
// grpc_code label, the span attributes and the call log's code.
func codeLabel(c codes.Code) string { return codeNames[canonical(c)] }
