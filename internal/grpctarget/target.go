// Package grpctarget parses the address of a gRPC backend as the gateway
// accepts it: any target grpc-go resolves, or a fixed list of replicas. It
// is the one parser of that syntax, shared by the backend connection
// (gateway/backendconn), which dials what it returns, and cmd/gateway,
// which checks every address before anything starts and splits the
// NAME=TARGET of its --backend flag.
package grpctarget

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	// grpc-go registers its resolvers (dns, unix, unix-abstract,
	// passthrough) in the grpc package's init, and Parse asks the
	// registry which schemes exist: without the import it would know none.
	_ "google.golang.org/grpc"
	"google.golang.org/grpc/resolver"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// A backend's address is a gRPC target, in any form grpc-go resolves:
//
//	HOST:PORT                  DNS, as grpc.NewClient resolves a bare address
//	dns:///HOST:PORT           every address of HOST, re-resolved
//	dns://SERVER/HOST:PORT     the same, asking the DNS server SERVER
//	unix:///ABS/PATH, unix:PATH    a unix socket (plaintext by default)
//	unix-abstract:NAME         a Linux abstract socket (plaintext by default)
//	passthrough:///ADDR        ADDR dialled as is, never resolved
//	HOST:PORT,HOST:PORT,...    a fixed list of replicas (our own resolver)
//
// A target never contains '=' before its first ':', which is what lets the
// flag and config syntax NAME=TARGET put a backend name in front of it
// unambiguously (see SplitBackendFlag).

// StaticScheme is the scheme of the resolver for a fixed list of
// replicas, which gateway/backendconn registers on the backend's
// connection only (never globally), so it cannot be typed as a target.
const StaticScheme = "grpc-mcp-gateway-static"

// Target is a backend address parsed once, at start.
type Target struct {
	// Given is the address as the operator wrote it, for messages.
	Given string
	// Scheme is the resolver that serves it (dns, unix, unix-abstract,
	// passthrough, another registered with grpc-go, or StaticScheme).
	Scheme string
	// URI is what grpc.NewClient is given.
	URI string
	// Hosts are the host parts that decide the loopback default for TLS
	// (empty for unix sockets, which never leave the machine).
	Hosts []string
	// Static is the fixed replica list of a comma-separated target.
	Static []string
}

// local reports whether the target is a unix socket, which nobody off the
// machine can observe, so plaintext is its default.
func (t *Target) local() bool { return t.Scheme == "unix" || t.Scheme == "unix-abstract" }

// Loopback reports whether every address the target names is this
// machine (the rule for defaulting to plaintext).
func (t *Target) Loopback() bool {
	if t.local() {
		return true
	}
	if len(t.Hosts) == 0 {
		return false
	}
	for _, h := range t.Hosts {
		if !loopback.Addr(h) {
			return false
		}
	}
	return true
}

// Parse checks a backend address and says how to dial it. Its errors
// name the address and what is wrong, with grpc-go's own words where it
// is grpc-go that refuses.
func Parse(s string) (*Target, error) {
	if s == "" {
		return nil, fmt.Errorf("backend address is empty: want HOST:PORT or a gRPC target such as dns:///HOST:PORT or unix:///PATH")
	}
	if strings.Contains(s, ",") {
		return parseStaticTarget(s)
	}
	if scheme, rest, ok := strings.Cut(s, ":"); ok && isSchemeName(scheme) && !isPort(rest) {
		if resolver.Get(scheme) != nil {
			return parseURITarget(s, scheme)
		}
		if strings.HasPrefix(rest, "//") {
			return nil, fmt.Errorf("backend address %q: grpc-go has no resolver for the scheme %q: want dns, unix, unix-abstract or passthrough", s, scheme)
		}
	}
	// A bare address: what grpc.NewClient does with it too (the default
	// scheme, dns), spelled out so that every target reaches grpc-go in
	// URI form.
	if _, _, err := net.SplitHostPort(s); err != nil {
		return nil, fmt.Errorf("backend address %q: want HOST:PORT, NAME=HOST:PORT or a gRPC target (dns:///HOST:PORT, unix:///PATH, unix-abstract:NAME, passthrough:///ADDR, HOST:PORT,HOST:PORT): %w", s, err)
	}
	return &Target{Given: s, Scheme: "dns", URI: "dns:///" + s, Hosts: []string{s}}, nil
}

// isPort reports whether s (what follows "localhost:" say) is a port
// number, so HOST:PORT is never read as SCHEME:OPAQUE.
func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isSchemeName reports whether s has the syntax of a URI scheme.
func isSchemeName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

func parseURITarget(s, scheme string) (*Target, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("backend address %q: not a valid gRPC target: %w", s, err)
	}
	t := &Target{Given: s, Scheme: scheme, URI: s}
	switch scheme {
	case "unix":
		if u.Host != "" {
			return nil, fmt.Errorf("backend address %q: a unix target names a path, as unix:///ABSOLUTE/PATH or unix:RELATIVE/PATH, not a host (%q)", s, u.Host)
		}
		if u.Path == "" && u.Opaque == "" {
			return nil, fmt.Errorf("backend address %q: the unix socket path is empty", s)
		}
	case "unix-abstract":
		if u.Opaque == "" && u.Path == "" {
			return nil, fmt.Errorf("backend address %q: the abstract socket name is empty", s)
		}
	case "dns", "passthrough":
		ep := strings.TrimPrefix(u.Path, "/")
		if u.Opaque != "" {
			ep = u.Opaque
		}
		if ep == "" {
			return nil, fmt.Errorf("backend address %q: no address after the scheme: want %s:///HOST:PORT", s, scheme)
		}
		host := ep
		if h, _, err := net.SplitHostPort(ep); err == nil {
			host = h
		} else if scheme == "passthrough" {
			return nil, fmt.Errorf("backend address %q: want passthrough:///HOST:PORT: %w", s, err)
		}
		t.Hosts = []string{host}
	default:
		// Another registered resolver (xds, say, when a build imports it):
		// nothing to check here, and never plaintext by default.
	}
	return t, nil
}

// parseStaticTarget reads HOST:PORT,HOST:PORT,... : a fixed set of
// replicas, for fleets without DNS names for them all.
func parseStaticTarget(s string) (*Target, error) {
	t := &Target{Given: s, Scheme: StaticScheme, URI: StaticScheme + ":///" + s}
	seen := map[string]bool{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, fmt.Errorf("backend address %q: an empty address in the list", s)
		}
		host, port, err := net.SplitHostPort(a)
		if err == nil && !isPort(port) {
			err = fmt.Errorf("port %q is not a number", port)
		}
		if err != nil {
			return nil, fmt.Errorf("backend address %q: a list of replicas is HOST:PORT,HOST:PORT,... (no schemes), got %q: %w", s, a, err)
		}
		if seen[a] {
			return nil, fmt.Errorf("backend address %q: %s is listed twice", s, a)
		}
		seen[a] = true
		t.Static = append(t.Static, a)
		t.Hosts = append(t.Hosts, host)
	}
	return t, nil
}

// Check reports whether s is a backend address the gateway can dial,
// with an error naming it and what is wrong; cmd/gateway checks every
// address with it before anything starts.
func Check(s string) error {
	_, err := Parse(s)
	return err
}

// SplitBackendFlag splits NAME=TARGET into the backend name and its
// target. Every target has a ':' before any '=' it contains, so the text
// before the first '=' is a name exactly when it has no ':':
// "zoo=unix:///run/zoo.sock" is the backend zoo, "unix:///run/a=b.sock"
// an unnamed unix target. The caller checks the name with
// gateway.ValidBackendName.
func SplitBackendFlag(s string) (name, target string, named bool) {
	n, t, ok := strings.Cut(s, "=")
	if !ok || strings.Contains(n, ":") {
		return "", s, false
	}
	return n, t, true
}
