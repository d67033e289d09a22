package compiled

import (
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// methodAnnotations gives every tool all four MCP hints and a title. Each
// hint comes from the strongest source that speaks to it: the
// (mcpgateway.v1.tool) option, hint by hint; then what the method
// declares or its verb implies (describe.Method.Hints: idempotency_level,
// the google.api.http verb, the verb table, the conservative default).
// Clients and app reviews that refuse tools with missing hints get none
// missing. The option's hints are made consistent with each other: a tool
// it says is read-only is not destructive and is idempotent, one it says
// is destructive is not read-only, unless it says otherwise. The title is
// the option's, else the one written from the method's structure;
// annotations.title carries it for 2025-03-26 clients.
func methodAnnotations(a *describe.Method, to *mcpgatewayv1.Tool) *mcp.ToolAnnotations {
	h, _ := a.Hints()
	ann := &mcp.ToolAnnotations{
		Title:           toolTitle(a, to),
		ReadOnlyHint:    boolPtr(h.ReadOnly),
		DestructiveHint: boolPtr(h.Destructive),
		IdempotentHint:  boolPtr(h.Idempotent),
		OpenWorldHint:   boolPtr(h.OpenWorld),
	}
	overlayHints(ann, to)
	return ann
}

// overlayHints sets the hints to states over ann's, made consistent as
// methodAnnotations says.
func overlayHints(ann *mcp.ToolAnnotations, to *mcpgatewayv1.Tool) {
	if to == nil {
		return
	}
	if to.ReadOnlyHint != nil {
		ann.ReadOnlyHint = boolPtr(to.GetReadOnlyHint())
		if to.GetReadOnlyHint() {
			ann.DestructiveHint, ann.IdempotentHint = boolPtr(false), boolPtr(true)
		}
	}
	if to.DestructiveHint != nil {
		ann.DestructiveHint = boolPtr(to.GetDestructiveHint())
		if to.GetDestructiveHint() && to.ReadOnlyHint == nil {
			ann.ReadOnlyHint = boolPtr(false)
		}
	}
	if to.IdempotentHint != nil {
		ann.IdempotentHint = boolPtr(to.GetIdempotentHint())
	}
	if to.OpenWorldHint != nil {
		ann.OpenWorldHint = boolPtr(to.GetOpenWorldHint())
	}
}

// toolTitle is the (mcpgateway.v1.tool) title, else a short human one
// written from the method's structure ("Create instance (Google Cloud
// Compute v1)").
func toolTitle(a *describe.Method, to *mcpgatewayv1.Tool) string {
	if t := to.GetTitle(); t != "" {
		return t
	}
	return a.Title()
}

func boolPtr(b bool) *bool { return &b }

// safeToRepeat is the one decision of whether the gateway may call a
// method twice: what its owners declared makes it idempotent, in the
// (mcpgateway.v1.tool) option (idempotent_hint, or read_only_hint), its
// idempotency_level, or its HTTP rule's verb. A verb of the method's name
// tells the model what the tool likely does (describe's verb table), but
// a guess is no ground for repeating a call the backend may have done:
// the model may be told a tool is idempotent that the gateway does not
// retry, never the other way round. The methods found safe are given to
// their backend's connection at each discovery (refresh.go), whose retry
// policy repeats their calls that fail with UNAVAILABLE
// (gateway/backendconn).
func safeToRepeat(a *describe.Method, to *mcpgatewayv1.Tool) bool {
	switch {
	case to != nil && to.IdempotentHint != nil:
		return to.GetIdempotentHint()
	case to != nil && to.GetReadOnlyHint():
		return true
	}
	h, src := a.Hints()
	return h.Idempotent && (src.Idempotent == describe.FromIdempotencyLevel || src.Idempotent == describe.FromHTTPRule)
}
