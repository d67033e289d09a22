package mcp

// supportedVersions lists every revision this server speaks, oldest first.
// It is the "supported" list of -32022 errors and of server/discover.
var supportedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125, Version20260728}

// handshakeVersions are the revisions negotiated by initialize.
var handshakeVersions = supportedVersions[:4]

// fallbackVersion is offered in initialize when the client asks for a
// revision we do not speak: the newest one that has a handshake.
const fallbackVersion = Version20251125

// isSupported reports whether v is a revision this server speaks.
func isSupported(v string) bool {
	for _, s := range supportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

// isHandshakeVersion reports whether v is negotiated through initialize.
func isHandshakeVersion(v string) bool {
	for _, s := range handshakeVersions {
		if s == v {
			return true
		}
	}
	return false
}

// isStateless reports whether v is a per-request (no handshake, no
// session) revision. Revisions are ISO dates, so string order is time order;
// an unknown future date also counts as stateless, so that it is answered
// with -32022 rather than treated as a session request.
func isStateless(v string) bool { return v >= Version20260728 }

// allowsBatch reports whether JSON-RPC batches are allowed: only 2025-03-26
// permits them (2025-06-18 removed them again).
func allowsBatch(v string) bool { return v == Version20250326 }

// family is a group of revisions that share the tools/list wire shape.
type family uint8

const (
	family20241105 family = iota // name, description, inputSchema
	family20250326               // + annotations
	family20250618               // + title, outputSchema
	family20251125               // + execution.taskSupport
	family20260728               // 2025-06-18 tools + resultType, ttlMs, cacheScope
	numFamilies
)

// familyOf maps a supported revision to its tools/list family.
func familyOf(v string) family {
	switch {
	case v >= Version20260728:
		return family20260728
	case v >= Version20251125:
		return family20251125
	case v >= Version20250618:
		return family20250618
	case v >= Version20250326:
		return family20250326
	default:
		return family20241105
	}
}

// hasStructuredContent reports whether structuredContent is part of
// CallToolResult at revision v.
func hasStructuredContent(v string) bool { return v >= Version20250618 }

// hasTasks reports whether the experimental core tasks of 2025-11-25
// exist at revision v (2026-07-28 moved them to an extension).
func hasTasks(v string) bool { return v == Version20251125 }

// hasProgressMessage reports whether notifications/progress carries message.
func hasProgressMessage(v string) bool { return v >= Version20250326 }
