package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// OriginProtection wraps next with the browser-safety checks the MCP
// transports require of HTTP servers, so that every HTTP transport (/mcp,
// /sse and /ws) applies the same rules:
//
//   - Host (DNS rebinding): the Host header must be a loopback name
//     (localhost, 127.0.0.1, [::1]), one of allowedHosts ("mcp.example.com"
//     matches any port, "mcp.example.com:8443" only that one), or, on a
//     connection that did not arrive on a loopback address, an IP literal.
//     A page on evil.example that rebinds its name to the gateway's address
//     sends Host: evil.example and is refused; a page cannot make a browser
//     send an IP literal or a loopback name for its own origin, so those
//     are safe.
//   - Origin: a request with an Origin header is refused unless the origin
//     is listed in allowedOrigins (e.g. "https://app.example.com"; "*"
//     allows any). An Origin equal to the Host proves nothing off loopback
//     (a rebound page has exactly that); it is accepted only when the
//     request came over loopback with a loopback Host, where no other page
//     can have that origin. Requests without Origin (non-browser clients)
//     pass.
//   - CORS: a request from a listed origin gets Access-Control-Allow-Origin
//     and Access-Control-Expose-Headers (Mcp-Session-Id, WWW-Authenticate),
//     and its preflight (OPTIONS with Access-Control-Request-Method) is
//     answered 204 with the methods and the headers MCP clients send. Other
//     origins get no CORS header at all.
//
// Refusals are 403 with a JSON-RPC error body.
func OriginProtection(allowedOrigins, allowedHosts []string, next http.Handler) http.Handler {
	g := &originGuard{next: next, hosts: newHostList(allowedHosts), allowed: make(map[string]bool, len(allowedOrigins))}
	for _, o := range allowedOrigins {
		if o == "*" {
			g.any = true
		}
		g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

// HostProtection wraps next with OriginProtection's Host check alone, for
// endpoints browsers have no business calling with credentials but that a
// rebound page could read (/metrics, /readyz, the OAuth metadata).
func HostProtection(allowedHosts []string, next http.Handler) http.Handler {
	hl := newHostList(allowedHosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hl.allows(r) {
			writeJSONError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "forbidden: Host header not allowed"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CORS, what a browser client of MCP needs: the methods of Streamable HTTP
// and the headers the SDKs send and read.
const (
	corsMethods       = "GET, POST, DELETE, OPTIONS"
	corsAllowHeaders  = "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"
	corsExposeHeaders = "Mcp-Session-Id, WWW-Authenticate"
	corsMaxAge        = "600"
)

type originGuard struct {
	next    http.Handler
	hosts   hostList
	allowed map[string]bool
	any     bool
}

func (g *originGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hosts.allows(r) {
		writeJSONError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "forbidden: Host header not allowed"))
		return
	}
	o := headerValue(r.Header, "Origin")
	if o == "" {
		g.next.ServeHTTP(w, r)
		return
	}
	listed := g.any || g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))]
	if !listed && !sameLoopbackOrigin(r, o) {
		writeJSONError(w, http.StatusForbidden, nil, errorf(CodeInvalidRequest, "forbidden: origin not allowed"))
		return
	}
	if listed {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", o)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
	g.next.ServeHTTP(w, r)
}

// sameLoopbackOrigin: a page whose origin is the request's own loopback
// host, on a loopback connection (the Host check has already refused
// rebound names there).
func sameLoopbackOrigin(r *http.Request, origin string) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !loopback.NetAddr(la) || !loopback.Addr(r.Host) {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes "null" (sandboxed and file: pages)
	}
	return strings.EqualFold(u.Host, r.Host)
}

// hostList is an allow-list of Host header values.
type hostList struct {
	names     map[string]bool // lower-case host names, any port
	hostPorts map[string]bool // lower-case host:port, that port only
}

func newHostList(hosts []string) hostList {
	hl := hostList{names: map[string]bool{}, hostPorts: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(h)
		if _, _, err := net.SplitHostPort(h); err == nil {
			hl.hostPorts[h] = true
		} else {
			hl.names[strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")] = true
		}
	}
	return hl
}

// allows applies the Host rule of OriginProtection to r.
func (hl hostList) allows(r *http.Request) bool {
	if loopback.Addr(r.Host) {
		return true
	}
	hp := strings.ToLower(r.Host)
	name := hp
	if h, _, err := net.SplitHostPort(hp); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if hl.hostPorts[hp] || hl.names[name] {
		return true
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		// Not from a network listener (a handler called in process): no
		// browser can have sent it.
		return true
	}
	return !loopback.NetAddr(la) && net.ParseIP(name) != nil
}
