package gateway

import (
	"fmt"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
)

// Tool overrides (Options.Catalog.Tools, Toolset.Tools; the config file's
// tools:), as the gateway applies them. gateway/internal/overrides
// compiles the rules (matching them to methods, merging them over the
// (mcpgateway.v1.tool) option, the argument rules, the input schema's
// rewrite); this file applies what it compiles to a tool (the added
// sentence, the notes that named a hidden argument, the search facts),
// makes a toolset's copies of its tools, and checks after a discovery
// that every rule matched.

// ErrToolOverride is wrapped by the errors of a tool override that cannot
// apply: a rule that matches no method once every backend is discovered,
// an argument path the request does not have, a fixed or default value
// of the wrong type, a name given to several methods. New fails with it
// at start; a later discovery logs it and keeps the backend's last tools.
var ErrToolOverride = overrides.ErrToolOverride

// ToolOverride corrects the tools of the methods Match selects: the
// tool's name, title, description (replaced or added to), hints, and
// arguments (hidden, fixed, default), each field as its doc in
// gateway/internal/overrides says and docs/curation.md shows.
type ToolOverride = overrides.ToolOverride

// ArgumentOverride corrects one argument: exactly one of Hidden, Fixed
// (a JSON value no call can change) or Default (a JSON value for a call
// that leaves the argument out) is given.
type ArgumentOverride = overrides.ArgumentOverride

// checkOverrides says what an operator must know of the tool overrides
// after a rebuild from parts: a rule that matches no method is New's
// error at start once every backend is discovered, a warning otherwise.
func (g *Gateway) checkOverrides(c *catalog, parts []*compiled.Backend, first bool, undiscovered []string) error {
	matched := make(map[int]bool)
	resolved := make(map[overrides.ArgKey]bool)
	for _, bt := range parts {
		for i := range bt.MatchedRules {
			matched[i] = true
		}
		for k := range bt.ResolvedArgs {
			resolved[k] = true
		}
	}
	un := g.overrides.Unmatched(matched, resolved)
	for i, ts := range g.toolsets {
		un = append(un, ts.overrides.Unmatched(c.toolsets[i].matchedRules, c.toolsets[i].resolvedArgs)...)
	}
	if len(un) == 0 {
		return nil
	}
	if first && len(undiscovered) == 0 {
		return fmt.Errorf("%w: %s (see what each method has with gateway catalog)", ErrToolOverride, strings.Join(un, "; "))
	}
	g.opts.Logger.Warn("tool override matches no method: it applies to none until a method it matches appears", "rules", un, "not_discovered", undiscovered)
	return nil
}

// CheckToolOverrides checks what can be checked of list without the
// methods it matches: the patterns, the names, one setting per argument,
// JSON values. The rest (a rule that matches nothing, an unknown argument,
// a value of the wrong type) is checked against each backend's methods at
// discovery.
func CheckToolOverrides(list []ToolOverride) error {
	if _, err := overrides.Compile("Options.Catalog.Tools", list); err != nil {
		return fmt.Errorf("%w: %w", ErrToolOverride, err)
	}
	return nil
}
