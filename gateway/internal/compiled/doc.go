// Package compiled is catalog compilation: one backend's discovered
// methods made into tools (Compile), each a *Tool holding everything a
// tools/call needs, resolved once at discovery so the call path does no
// descriptor work.
//
// A Tool holds each concept's compiled description as one field: its
// definition and schemas (built on first use, schemas.go, bounded to
// MaxToolBytes, toolsize.go, and packed, pack.go), the call (method,
// connection, validator, response encoder, stream kind, deadline,
// metadata, limits, and its Invoker), observability, the result budget,
// paging, a long-running operation, a watch, search facts, access
// (scopes, token exchange) and, for the catalog report, where each part
// of the definition came from (Origin). A toolset's copy of a tool with
// its own overrides is ToolsetCopy's.
//
// The package knows nothing of the gateway that assembles catalogs and
// serves calls: the gateway passes in, through Options, what its settings
// decide (which methods are exposed, deadlines and metadata) and the
// invoker of each tool shape, so that the call path sits above this
// package and a compiled tool holds its invoker, chosen once.
package compiled
