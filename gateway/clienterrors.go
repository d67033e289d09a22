package gateway

import (
	"context"
	"log/slog"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// What of a failed call's status reaches the client, decided once for
// the unary and streaming call paths. Two things stay in the gateway's
// log: the gateway's own transport errors, whose text names addresses
// and resolver details of the operator's network ("dial tcp
// 10.1.2.3:50051: connect: connection refused"), and google.rpc.DebugInfo
// details (stack entries, internal detail the AIP says are for the
// service's developers), unless Options.ExposeDebugInfo.

// unreachableText replaces the text of the gateway's own transport errors.
const unreachableText = "the gateway could not reach the backend (the cause is in the gateway's log)"

// debugInfoURL is the type URL of google.rpc.DebugInfo.
const debugInfoURL = "type.googleapis.com/google.rpc.DebugInfo"

// clientStatus returns st as the client may see it, logging what it
// leaves out.
func (g *Gateway) clientStatus(t *tool, st *status.Status) *status.Status {
	if isTransportError(st) {
		g.opts.Logger.Warn("tools/call: the gateway could not reach the backend",
			"tool", t.def.Name, "backend", t.backend, "code", telemetry.CodeName(st.Code()), "error", st.Message())
		return status.New(st.Code(), unreachableText)
	}
	if g.opts.ExposeDebugInfo {
		return st
	}
	kept, withheld := withoutDebugInfo(st)
	if len(withheld) > 0 && g.opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		for _, d := range withheld {
			g.opts.Logger.Debug("tools/call: DebugInfo withheld from the client (Options.ExposeDebugInfo shows it)",
				"tool", t.def.Name, "backend", t.backend, "detail", d.String())
		}
	}
	return kept
}

// withoutDebugInfo returns st without its google.rpc.DebugInfo details,
// and the details it left out. A long-running operation's error takes
// the same way as a call's status (doneResult).
func withoutDebugInfo(st *status.Status) (*status.Status, []*anypb.Any) {
	details := st.Proto().GetDetails()
	kept := make([]*anypb.Any, 0, len(details))
	var withheld []*anypb.Any
	for _, d := range details {
		if d.GetTypeUrl() == debugInfoURL {
			withheld = append(withheld, d)
			continue
		}
		kept = append(kept, d)
	}
	if len(withheld) == 0 {
		return st, nil
	}
	sp := st.Proto() // a copy
	sp.Details = kept
	return status.FromProto(sp), withheld
}

// clientMessage is st's message as a client may read it: grpc-go's
// account of a connection failure is replaced (it names addresses).
func clientMessage(st *status.Status) string {
	if isTransportError(st) {
		return "the gateway could not reach the backend"
	}
	return st.Message()
}

// isTransportError reports whether st is grpc-go's own account of a
// connection that failed (dialing, resolving, a connection lost), as
// opposed to a status the backend sent: grpc-go reports these only as
// UNAVAILABLE with these texts.
func isTransportError(st *status.Status) bool {
	if st.Code() != codes.Unavailable || len(st.Proto().GetDetails()) > 0 {
		return false
	}
	msg := st.Message()
	for _, s := range []string{"connection error", "resolver error", "error reading from server", "transport is closing",
		"transport: ", "connection closed before server preface", "dial tcp", "dial unix", "produced zero addresses"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
