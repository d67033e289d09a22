// Package grpcmeta is the module's one statement of which names may be
// sent to a backend as gRPC metadata: the keys of static metadata and the
// inbound HTTP headers the gateway forwards (gateway's Options.Calls.Metadata,
// Options.Calls.ForwardHeaders and a Backend's Metadata, checked by New and
// ParseMetadata). The command line (cmd/gateway) checks the headers of
// --forward-header and --forward-claim with the same rules as it reads
// them, so a bad name fails at start naming the flag.
package grpcmeta

import (
	"fmt"
	"strings"
)

// hopByHop are headers that describe one HTTP connection, not the request
// (RFC 9110 section 7.6.1, plus Host and the Proxy-* family): forwarding them
// would be meaningless at best and request smuggling at worst.
var hopByHop = map[string]bool{
	"connection": true, "keep-alive": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "host": true,
	"proxy-connection": true, "proxy-authorization": true, "proxy-authenticate": true,
}

// CheckForwardHeader reports whether the inbound HTTP header name may be
// copied into a call's metadata: an HTTP header name that is also a legal
// gRPC metadata key once lowercased (CheckKey), and not hop-by-hop
// (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Host
// and any Proxy-* header).
func CheckForwardHeader(name string) error {
	k := strings.ToLower(name)
	if k == "" {
		return fmt.Errorf("empty header name")
	}
	if hopByHop[k] || strings.HasPrefix(k, "proxy-") {
		return fmt.Errorf("%q is a hop-by-hop header and is never forwarded", name)
	}
	return CheckKey(k)
}

// CheckKey applies gRPC's rules for a lowercase metadata key k (the HTTP/2
// header names gRPC allows: 0-9 a-z _ - .) and refuses the keys gRPC
// reserves (grpc-*) or sets itself (content-type, te, user-agent, host,
// connection).
func CheckKey(k string) error {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%q is not a legal gRPC metadata key (want 0-9 a-z - _ .)", k)
		}
	}
	if k == "" {
		return fmt.Errorf("empty metadata key")
	}
	if strings.HasPrefix(k, "grpc-") {
		return fmt.Errorf("%q: grpc- keys are reserved for gRPC itself", k)
	}
	switch k {
	case "content-type", "te", "user-agent", "host", "connection":
		return fmt.Errorf("%q is set by gRPC itself", k)
	}
	return nil
}
