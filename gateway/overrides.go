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

// ToolOverride corrects the tools of the methods Match selects. It is
// the type the rules are compiled from, defined with its field docs in
// gateway/internal/overrides (go doc ./gateway/internal/overrides
// ToolOverride); docs/curation.md shows it at work. Its fields:
//
//   - Match (string) selects methods by a "package.Service/Method" glob,
//     as [CatalogOptions].Include takes them.
//   - Origin (string) is where the rule was written, for its errors
//     ("gateway.yaml:12 tools[0]"); empty: Options.Catalog.Tools[i] or
//     Toolset.Tools[i].
//   - Name (string) is the tool's name (^[a-zA-Z0-9_-]{1,64}$); Match
//     must then select one method per backend.
//   - Title (string) is the tool's human title.
//   - Description (string) replaces the tool's description.
//   - DescriptionAppend (string) is added to the description, replaced
//     or not, as a sentence of its own.
//   - ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint
//     (*bool) are the four MCP hints; nil leaves a hint as the method's
//     (mcpgateway.v1.tool) option or the gateway's inference says.
//   - Arguments (map[string][ArgumentOverride]) correct the request's
//     fields, by path: a field's proto or JSON name, or names joined by
//     dots through singular message fields ("execution.workflow_id").
//
// New checks the rules' syntax ([CheckToolOverrides] alone); what a rule
// matches is checked at discovery, with [ErrToolOverride].
type ToolOverride = overrides.ToolOverride

// ArgumentOverride corrects one argument; exactly one of its fields is
// given. Defined in gateway/internal/overrides; its fields:
//
//   - Hidden (bool) leaves the argument out of the schema; a call that
//     sends it is refused.
//   - Fixed (json.RawMessage) is the value, as the schema takes it, set
//     in every request; the argument is left out of the schema and a
//     call that sends it is refused, so no caller can choose another.
//   - Default (json.RawMessage) is the value set when a call leaves the
//     argument out (or sends its zero value, which protobuf cannot tell
//     from absence); the schema shows it as the default.
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
