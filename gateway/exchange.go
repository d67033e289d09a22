package gateway

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// The backend sees the end user: token exchange (Backend.TokenExchange).
//
// A backend with an exchanger gets, on every call (a tool's, and a task
// method's calls to its Operations service), a token the authorization
// server issued for it on behalf of the caller, as "authorization:
// Bearer …", replacing any authorization the static metadata set. The
// caller's own token, issued for the gateway, is only ever sent to the
// token endpoint. The exchanger keeps tokens until shortly before they
// expire, so most calls cost a map lookup; a call whose exchange fails
// is a tool execution error that says what the authorization server
// answered, which a model can relay (a missing consent, a scope the user
// lacks) and an operator can fix (invalid_target: the client may not ask
// for this backend).

// backendToken returns ctx with the backend's token for the caller of
// ctx in its outgoing metadata, or the result of a call that cannot have
// one.
func (g *Gateway) backendToken(ctx context.Context, backend string, x *exchange.Exchanger, scopes []string) (context.Context, *mcp.CallToolResult) {
	ctx, err := g.withBackendToken(ctx, backend, x, scopes)
	if err == nil {
		return ctx, nil
	}
	return ctx, call.WithOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: err.Error()}}},
		telemetry.Outcome{Code: codes.Unauthenticated, Err: err})
}

// withBackendToken is backendToken's work, scopes the method's own (nil
// for none); its error is what the caller is told.
func (g *Gateway) withBackendToken(ctx context.Context, backend string, x *exchange.Exchanger, scopes []string) (context.Context, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.AccessToken() == "" {
		// stdio's local user, or a static bearer token: nothing the
		// authorization server would exchange.
		return ctx, fmt.Errorf("backend %s is called as the end user (token exchange), and this request carries no OAuth access token to exchange: connect over HTTP with an OAuth token", backend)
	}
	// The token's own expiry, not Expiry (which adds the leeway the door
	// tolerates): a kept exchanged token never outlives the caller's.
	tok, err := x.Token(ctx, p.AccessToken(), scopes, p.TokenExpiry)
	if err != nil {
		var xe *exchange.Error
		if errors.As(err, &xe) && xe.Code != "failed" {
			return ctx, fmt.Errorf("the authorization server refused a token for backend %s on your behalf: %s%s", backend, xe.Code, oauthDescription(xe.Description))
		}
		if ctx.Err() != nil {
			return ctx, ctx.Err()
		}
		g.opts.Logger.WarnContext(ctx, "token exchange failed", "backend", backend, "error", err)
		return ctx, fmt.Errorf("the gateway could not get a token for backend %s from the authorization server; try again later", backend)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set("authorization", "Bearer "+tok)
	return metadata.NewOutgoingContext(ctx, md), nil
}

// oauthDescription is an OAuth error_description as the end of a sentence.
func oauthDescription(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}
