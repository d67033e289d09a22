// Package rpcstatus decides how a gRPC status reads to a model: the one
// table of what each code means and whether retrying may help, the
// rendering of google.rpc error details (the backend's own detail types
// through its [anytypes.Types]), and what of a status stays in the
// gateway's log (its own transport errors, google.rpc.DebugInfo).
//
// It is below the gateway, which decides when a call failed and what
// the client may see (Options.Calls.ExposeDebugInfo); of this module it knows
// the MCP result type, the telemetry outcome and the Any types.
package rpcstatus

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// codeInfo is the one table that decides how a gRPC status reads to a
// model beyond its name (which [telemetry.CodeName] gives): whether
// retrying the same call may succeed, and what the model should do about it.
var codeInfo = [...]struct {
	retryable bool
	advice    string
}{
	codes.OK:                 {false, ""},
	codes.Canceled:           {false, "The call was cancelled before it completed."},
	codes.Unknown:            {false, "The backend failed with an unknown error."},
	codes.InvalidArgument:    {false, "The backend rejected the arguments; correct them and call again."},
	codes.DeadlineExceeded:   {true, "The backend did not answer in time."},
	codes.NotFound:           {false, "The requested entity does not exist."},
	codes.AlreadyExists:      {false, "The entity already exists."},
	codes.PermissionDenied:   {false, "The caller may not do this."},
	codes.ResourceExhausted:  {true, "A quota or rate limit was hit; back off before retrying."},
	codes.FailedPrecondition: {false, "The system is not in a state that allows this call; change the state first."},
	codes.Aborted:            {true, "The call conflicted with another; retry it."},
	codes.OutOfRange:         {false, "An argument is outside the valid range."},
	codes.Unimplemented:      {false, "The backend does not implement this method."},
	codes.Internal:           {false, "The backend hit an internal error."},
	codes.Unavailable:        {true, "The backend is unavailable right now."},
	codes.DataLoss:           {false, "Unrecoverable data loss or corruption."},
	codes.Unauthenticated:    {false, "The gateway's credentials for the backend were rejected."},
}

// Retryable reports whether retrying the same call may succeed.
func Retryable(c codes.Code) bool {
	return int(c) < len(codeInfo) && codeInfo[c].retryable
}

// Result turns a non-OK gRPC status into a tool execution error; a
// failed call's comes through callFailed, a finished operation's error
// through the gateway's doneResult. The text starts with the code name and the
// backend's message, then lists the decoded google.rpc error details and
// whether a retry may help, so the model has what it needs to act. It is
// where a call's code is decided, so the result carries it as its
// outcome (observe.go). ctx bounds the lookups of detail types the
// gateway meets for the first time (gateway/internal/anytypes).
func Result(ctx context.Context, st *status.Status, types *anytypes.Types) *mcp.CallToolResult {
	var b strings.Builder
	b.WriteString(telemetry.CodeName(st.Code()))
	b.WriteString(": ")
	if msg := st.Message(); msg != "" {
		b.WriteString(msg)
	} else {
		b.WriteString("(no message)")
	}
	var retryDelay time.Duration
	for _, a := range st.Proto().GetDetails() {
		line, delay := detailLine(ctx, a, types)
		if delay > 0 {
			retryDelay = delay
		}
		b.WriteString("\n- ")
		b.WriteString(line)
	}
	if i := int(st.Code()); i < len(codeInfo) && codeInfo[i].advice != "" {
		b.WriteString("\n")
		b.WriteString(codeInfo[i].advice)
	}
	if Retryable(st.Code()) {
		b.WriteString(" This error is retryable")
		if retryDelay > 0 {
			fmt.Fprintf(&b, ": retry after %s", retryDelay)
		}
		b.WriteString(".")
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: b.String()}},
		Outcome: telemetry.Outcome{Code: st.Code()}}
}

// detailLine renders one error detail as one line (describeDetail). A
// detail that does not render for want of a type the gateway does not know
// yet is rendered again once its types are learnt (gateway/internal/anytypes); one that
// still does not says in words why, never with a Go error's text.
func detailLine(ctx context.Context, a *anypb.Any, types *anytypes.Types) (string, time.Duration) {
	line, delay, err := describeDetail(a, types)
	if err == nil {
		return line, delay
	}
	learnt, missing := types.Learn(ctx, a.ProtoReflect())
	if learnt {
		if line, delay, err = describeDetail(a, types); err == nil {
			return line, delay
		}
	}
	name := anytypes.TypeNameOf(a.GetTypeUrl())
	switch {
	case missing != nil && missing.Name == name:
		return missing.Sentence("details"), 0
	case missing != nil:
		return missing.Sentence(fmt.Sprintf("details of type %s holding a value", name)), 0
	case errors.Is(err, protoregistry.NotFound):
		// Nothing to learn from: the type is not in the backend's
		// descriptor files, and there is no reflection to ask.
		return (&anytypes.UnknownTypeError{Name: name}).Sentence("details"), 0
	}
	return fmt.Sprintf("the backend sent details of type %s whose bytes do not decode as that type", name), 0
}

// describeDetail renders one google.rpc error detail as one readable line.
// The standard detail types get a compact form; anything else is written as
// protojson with its @type, resolved from the global registry or the
// backend's own descriptors. It fails when the detail or an Any in it
// does not decode.
func describeDetail(a *anypb.Any, types *anytypes.Types) (string, time.Duration, error) {
	m, err := anyMessage(a, types)
	if err != nil {
		return "", 0, err
	}
	switch d := m.(type) {
	case *errdetails.BadRequest:
		parts := make([]string, 0, len(d.GetFieldViolations()))
		for _, v := range d.GetFieldViolations() {
			p := fmt.Sprintf("field %q: %s", v.GetField(), v.GetDescription())
			if v.GetReason() != "" {
				p += " (" + v.GetReason() + ")"
			}
			parts = append(parts, p)
		}
		return "BadRequest: " + strings.Join(parts, "; "), 0, nil
	case *errdetails.ErrorInfo:
		s := fmt.Sprintf("ErrorInfo: reason=%s domain=%s", d.GetReason(), d.GetDomain())
		for _, k := range slices.Sorted(maps.Keys(d.GetMetadata())) {
			s += fmt.Sprintf(" %s=%s", k, d.GetMetadata()[k])
		}
		return s, 0, nil
	case *errdetails.RetryInfo:
		delay := d.GetRetryDelay().AsDuration()
		return fmt.Sprintf("RetryInfo: retry after %s", delay), delay, nil
	case *errdetails.QuotaFailure:
		parts := make([]string, 0, len(d.GetViolations()))
		for _, v := range d.GetViolations() {
			parts = append(parts, fmt.Sprintf("%s: %s", v.GetSubject(), v.GetDescription()))
		}
		return "QuotaFailure: " + strings.Join(parts, "; "), 0, nil
	case *errdetails.PreconditionFailure:
		parts := make([]string, 0, len(d.GetViolations()))
		for _, v := range d.GetViolations() {
			parts = append(parts, fmt.Sprintf("[%s] %s: %s", v.GetType(), v.GetSubject(), v.GetDescription()))
		}
		return "PreconditionFailure: " + strings.Join(parts, "; "), 0, nil
	case *errdetails.ResourceInfo:
		s := fmt.Sprintf("ResourceInfo: %s %q", d.GetResourceType(), d.GetResourceName())
		if d.GetOwner() != "" {
			s += " owner " + d.GetOwner()
		}
		if d.GetDescription() != "" {
			s += ": " + d.GetDescription()
		}
		return s, 0, nil
	case *errdetails.Help:
		parts := make([]string, 0, len(d.GetLinks()))
		for _, l := range d.GetLinks() {
			parts = append(parts, fmt.Sprintf("%s <%s>", l.GetDescription(), l.GetUrl()))
		}
		return "Help: " + strings.Join(parts, "; "), 0, nil
	case *errdetails.LocalizedMessage:
		return fmt.Sprintf("LocalizedMessage (%s): %s", d.GetLocale(), d.GetMessage()), 0, nil
	case *errdetails.DebugInfo:
		return "DebugInfo: " + d.GetDetail(), 0, nil
	case *errdetails.RequestInfo:
		return fmt.Sprintf("RequestInfo: request_id=%s", d.GetRequestId()), 0, nil
	}
	js, err := protojson.MarshalOptions{Resolver: types}.Marshal(a)
	if err != nil {
		return "", 0, err
	}
	return string(js), 0, nil
}

// anyMessage unpacks a detail, preferring the linked-in errdetails types
// (so the switch above sees concrete types) and falling back to the
// backend's descriptors for its own detail messages.
func anyMessage(a *anypb.Any, types *anytypes.Types) (proto.Message, error) {
	if m, err := a.UnmarshalNew(); err == nil {
		return m, nil
	}
	return anypb.UnmarshalNew(a, proto.UnmarshalOptions{Resolver: types})
}

// What of a failed call's status reaches the client, decided once for
// the unary and streaming call paths. Two things stay in the gateway's
// log: the gateway's own transport errors, whose text names addresses
// and resolver details of the operator's network ("dial tcp
// 10.1.2.3:50051: connect: connection refused"), and google.rpc.DebugInfo
// details (stack entries, internal detail the AIP says are for the
// service's developers), unless Options.Calls.ExposeDebugInfo.

// UnreachableText replaces the text of the gateway's own transport errors.
const UnreachableText = "the gateway could not reach the backend (the cause is in the gateway's log)"

// debugInfoURL is the type URL of google.rpc.DebugInfo.
const debugInfoURL = "type.googleapis.com/google.rpc.DebugInfo"

// WithoutDebugInfo returns st without its google.rpc.DebugInfo details,
// and the details it left out. A long-running operation's error takes
// the same way as a call's status (doneResult).
func WithoutDebugInfo(st *status.Status) (*status.Status, []*anypb.Any) {
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

// ClientMessage is st's message as a client may read it: grpc-go's
// account of a connection failure is replaced (it names addresses).
func ClientMessage(st *status.Status) string {
	if IsTransportError(st) {
		return "the gateway could not reach the backend"
	}
	return st.Message()
}

// IsTransportError reports whether st is grpc-go's own account of a
// connection that failed (dialing, resolving, a connection lost), as
// opposed to a status the backend sent: grpc-go reports these only as
// UNAVAILABLE with these texts.
func IsTransportError(st *status.Status) bool {
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
