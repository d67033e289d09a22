package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// OriginProtection wraps next with the browser-safety checks the MCP
// transports require of HTTP servers, so that every HTTP transport (/mcp,
// /sse and /ws) applies the same rules:
//
//   - DNS rebinding: when the connection arrived on a loopback address, the
//     Host header must name localhost, 127.0.0.1 or [::1] (any port).
//     A page on evil.example that rebinds its name to 127.0.0.1 sends
//     Host: evil.example and is refused.
//   - Origin: a request with an Origin header is refused unless the origin's
//     host equals the request's Host or the origin is listed in
//     allowedOrigins (e.g. "https://app.example.com"; "*" allows any).
//     Requests without Origin (non-browser clients) pass.
//
// Refusals are 403 with a JSON-RPC error body.
func OriginProtection(allowedOrigins []string, next http.Handler) http.Handler {
	g := &originGuard{next: next, allowed: make(map[string]bool, len(allowedOrigins))}
	for _, o := range allowedOrigins {
		if o == "*" {
			g.any = true
		}
		g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

type originGuard struct {
	next    http.Handler
	allowed map[string]bool
	any     bool
}

func (g *originGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(la) && !isLocalHost(r.Host) {
		writeJSONError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "forbidden: Host header is not a loopback name"))
		return
	}
	if o := headerValue(r.Header, "Origin"); o != "" && !g.originOK(o, r.Host) {
		writeJSONError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "forbidden: origin not allowed"))
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *originGuard) originOK(origin, host string) bool {
	if g.any || g.allowed[strings.ToLower(strings.TrimSuffix(origin, "/"))] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes "null" (sandboxed and file: pages)
	}
	return strings.EqualFold(u.Host, host)
}

func isLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isLocalHost(hostport string) bool {
	h := hostport
	if sh, _, err := net.SplitHostPort(hostport); err == nil {
		h = sh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.EqualFold(h, "localhost") || h == "127.0.0.1" || h == "::1"
}
