package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
)

// Result budgets.
//
// A client puts a tool's result into its model's context, and clients cap
// what they accept: Claude Code saves a result over 50,000 characters to a
// file (the model sees a reference) and caps results at 25,000 tokens by
// default. So every result has a budget (Options.Results.MaxBytes, default
// DefaultMaxResultBytes) on its structuredContent JSON (the text block
// carries the same JSON). A result over it is cut by results.Fit: long
// arrays keep their first elements, long strings are shortened, and the
// result's "truncated" member lists every cut; a text block says the same
// in a sentence. Nothing is lost: the whole result is kept in a
// results.Store for Options.Results.TTL and linked from the result
// (resource_link from 2025-06-18 on; the sentence names the URI for every
// revision), readable with resources/read by the same session, or for a
// stateless request the same principal (resultOwner). One principal
// keeps at most its share of the store (Options.Results.StoreBytesPerPrincipal),
// so its results cannot push out another's.
//
// A result within budget costs one length comparison: the check runs on
// the JSON the transcoder produced anyway, and only a cut scans it.

// DefaultMaxResultBytes keeps a result (its JSON counted once) under the
// 50,000 characters at which Claude Code moves a result out of the
// model's context, with room for the sentence about a cut, and at about
// 10,000 to 13,000 tokens well under its default cap of 25,000 tokens.
const DefaultMaxResultBytes = 40000

// MinMaxResultBytes is the smallest budget accepted: below it a cut has no
// room for anything but its own list.
const MinMaxResultBytes = 1024

// ResultURIPrefix starts the URI of every kept result; the rest is an
// unguessable id.
const ResultURIPrefix = "grpc-mcp-gateway://result/"

// resultMIMEType is the MIME type of a kept result.
const resultMIMEType = "application/json"

// fitResult applies the result budget to res: a result within it is
// returned as it is; a larger one gets its structuredContent (and the
// text block holding the same JSON) cut, a sentence saying what was cut,
// and a link to the whole result, kept for the call's session.
func (g *Gateway) fitResult(ctx context.Context, session mcp.SessionInfo, t *compiled.Tool, res *mcp.CallToolResult) *mcp.CallToolResult {
	js := res.StructuredContent
	if g.budget <= 0 || len(js) <= g.budget {
		return res
	}
	f := results.Fit(js, g.budget, t.Budget.Shape)
	if !f.Cut {
		return res
	}
	// The text blocks that are the structured content (mcp.Content's
	// Structured) follow it.
	res.StructuredContent = f.JSON
	var note strings.Builder
	fmt.Fprintf(&note, "This result was cut to fit the gateway's result budget of %d bytes (the whole result is %d bytes): ", g.budget, len(js))
	for i, r := range f.Records {
		if i > 0 {
			note.WriteString("; ")
		}
		path := r.Path
		if path == "" {
			path = "the result"
		}
		unit := "elements"
		if r.Unit != "" {
			unit = r.Unit
		}
		fmt.Fprintf(&note, "%s kept %d of %d %s", path, r.Kept, r.Total, unit)
	}
	if f.Unlisted > 0 {
		fmt.Fprintf(&note, "; and %d more cuts of the same kind", f.Unlisted)
	}
	fmt.Fprintf(&note, " (listed in %q).", f.Member)
	note.WriteString(t.Budget.AskLess)
	id, err := g.results.Put(ctx, resultOwner(ctx, session), principalOf(ctx).ID, js)
	if err == nil {
		uri := ResultURIPrefix + id
		ttl := g.results.TTL()
		fmt.Fprintf(&note, " The whole result is the resource %s (%s): read it with resources/read within %s (only the session, or without one the principal, that made this call can).", uri, resultMIMEType, ttl)
		res.Content = append(res.Content, mcp.Content{Type: mcp.ContentText, Text: note.String()}, mcp.Content{
			Type: mcp.ContentResourceLink, URI: uri, Name: "result of " + t.Definition.Name, MIMEType: resultMIMEType, Size: int64(len(js)),
			Description: fmt.Sprintf("The whole result of this %s call, before the gateway cut it to its result budget; readable for %s.", t.Definition.Name, ttl),
		})
		return res
	}
	if errors.Is(err, results.ErrTooLarge) {
		note.WriteString(" The whole result is larger than the gateway keeps, so it cannot be read in full: ask for less.")
	} else {
		g.opts.Logger.WarnContext(ctx, "result not kept", "tool", t.Definition.Name, "err", err)
		fmt.Fprintf(&note, " The whole result could not be kept (%v), so it cannot be read in full now: ask for less, or call again later.", mcp.ErrFleetUnavailable)
	}
	res.Content = append(res.Content, mcp.Content{Type: mcp.ContentText, Text: note.String()})
	return res
}

// resultStore keeps whole results: results.Store in one process,
// state.Redis in a fleet (Options.State).
type resultStore interface {
	Put(ctx context.Context, owner, principal string, data []byte) (id string, err error)
	Get(ctx context.Context, owner, id string) ([]byte, error)
	TTL() time.Duration
}

// memoryResults is a results.Store as a resultStore.
type memoryResults struct{ *results.Store }

func (m memoryResults) Put(_ context.Context, owner, principal string, data []byte) (string, error) {
	id, ok := m.Store.Put(owner, principal, data)
	if !ok {
		return "", results.ErrTooLarge
	}
	return id, nil
}

func (m memoryResults) Get(_ context.Context, owner, id string) ([]byte, error) {
	js, ok := m.Store.Get(owner, id)
	if !ok {
		return nil, results.ErrNotFound
	}
	return js, nil
}

// resultStoreOptions are the Options' bounds of the result store.
func (g *Gateway) resultStoreOptions() *results.StoreOptions {
	return &results.StoreOptions{TTL: g.opts.Results.TTL, MaxBytes: g.opts.Results.StoreBytes, MaxEntries: g.opts.Results.StoreEntries,
		MaxBytesPerPrincipal: g.opts.Results.StoreBytesPerPrincipal, MaxEntriesPerPrincipal: g.opts.Results.StoreEntriesPerPrincipal}
}

// resultOwner is who may read a kept result: the session it was made in
// and, when the request was authenticated, the principal. A stateless
// (2026-07-28) request belongs to no session, so its results belong to
// the principal; without authentication they belong to whoever holds
// their URI, whose id (130 random bits) is the capability.
func resultOwner(ctx context.Context, s mcp.SessionInfo) string {
	return "session " + s.Key + "\x00principal " + principalOf(ctx).ID
}

// readResult serves resources/read of a kept result.
func (g *Gateway) readResult(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ResourceContents, error) {
	id := strings.TrimPrefix(req.URI, ResultURIPrefix)
	js, err := g.results.Get(ctx, resultOwner(ctx, req.Session), id)
	switch {
	case errors.Is(err, results.ErrNotFound):
		return nil, fmt.Errorf("%w: %s (a kept result is readable for %s, by the session that made it)", mcp.ErrResourceNotFound, req.URI, g.results.TTL())
	case err != nil:
		g.opts.Logger.WarnContext(ctx, "kept result not read", "uri", req.URI, "err", err)
		return nil, fmt.Errorf("reading %s: %w; it may still be there: retry shortly", req.URI, mcp.ErrFleetUnavailable)
	}
	return &mcp.ResourceContents{URI: req.URI, MIMEType: resultMIMEType, Text: string(js), Private: true, TTL: g.results.TTL()}, nil
}

// resultBudget resolves Options.Results.MaxBytes: 0 is the default, a
// negative value no budget (Off), and anything else at least
// MinMaxResultBytes.
func resultBudget(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxResultBytes, nil
	case n < 0:
		return Off, nil
	case n < MinMaxResultBytes:
		return 0, &OptionError{Option: "Options.Results.MaxBytes", Err: fmt.Errorf("%d: want at least %d, 0 for the default (%d) or a negative value for no budget", n, MinMaxResultBytes, DefaultMaxResultBytes)}
	}
	return n, nil
}
