package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// codeForbidden is the JSON-RPC error code of a call refused for lack of
// authorization. JSON-RPC and MCP define none; it is in the range JSON-RPC
// leaves to implementations, away from the codes the SDKs give their own
// conditions (TypeScript and Python: -32000 connection closed, -32001
// timeout; Go: -32001 to -32005, e.g. -32003 "client is closing", which
// its client would mistake for a closed connection; -32020 to -32022 and
// -32042 in the specification). Over HTTP the status line (401 or 403)
// and WWW-Authenticate carry the refusal as the MCP authorization
// specification asks; the code and data say the same on every transport.
const codeForbidden = -32010

// authorize is the authorization of one call, decided with the tool about
// to run, on every transport: the principal the front door authenticated
// travels in ctx (the WebSocket upgrade's or the SSE stream's for calls on
// those connections), and Options.Auth checks the tool's scopes (resolved
// from the rules when its catalog was built, package scopes), the token's
// expiry and its revocation. stdio has no front door and no principal: its
// calls are the local user's.
func (g *Gateway) authorize(ctx context.Context, t *compiled.Tool, req *mcp.CallToolRequest) error {
	if g.opts.Auth == nil || req.Session.Transport == "stdio" {
		return nil
	}
	err := g.opts.Auth.Authorize(ctx, t.Access.Scopes)
	if err == nil {
		return nil
	}
	var ref *auth.Refusal
	if !errors.As(err, &ref) {
		return err
	}
	return refused(ref)
}

// refused is the error of a call refused before it reached the backend:
// the MCP layer's refusal (refusal), with the code a gRPC server would
// have answered as the call's outcome, for its metrics, span and log.
func refused(ref *auth.Refusal) error {
	c := codes.PermissionDenied
	if ref.Status == http.StatusUnauthorized {
		c = codes.Unauthenticated
	}
	return &outcomeError{telemetry.Outcome{Code: c}, refusal(ref)}
}

// refusal turns an auth refusal into the MCP layer's: the HTTP status and
// challenge for Streamable HTTP, and the same facts as JSON-RPC error data
// for transports without a status line.
func refusal(ref *auth.Refusal) *mcp.Refusal {
	data, _ := json.Marshal(struct {
		Error            string `json:"error"`
		Description      string `json:"error_description"`
		Scope            string `json:"scope,omitempty"`
		ResourceMetadata string `json:"resource_metadata,omitempty"`
	}{ref.Code, ref.Description, ref.Scope, ref.ResourceMetadata})
	return &mcp.Refusal{
		Status: ref.Status,
		Header: http.Header{"Www-Authenticate": {ref.Challenge}, "Cache-Control": {"no-store"}},
		Err:    &mcp.Error{Code: codeForbidden, Message: "forbidden: " + ref.Description, Data: data},
	}
}

// principalOf is mcp.ServerOptions.PrincipalOf: the auth package's
// principal in the protocol layer's terms. Without auth every request is
// anonymous, and sessions and connections behave as before.
func principalOf(ctx context.Context) mcp.Principal {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return mcp.Principal{}
	}
	return mcp.Principal{ID: p.Identity(), Expires: p.Expiry, TokenExpires: p.TokenExpiry, Revoked: p.Revoked()}
}
