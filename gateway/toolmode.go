package gateway

import (
	"errors"
	"fmt"
)

// ToolMode says how the catalog is offered to clients: one tool per
// method, or two tools that search the catalog and call into it.
type ToolMode int

const (
	// ToolModeAuto (the default) is typed while the whole tools/list
	// stays within the tool budget (Options.Search.ToolBudget), and search beyond
	// it. It is decided again at every catalog change; a change of mode
	// sends notifications/tools/list_changed.
	ToolModeAuto ToolMode = iota
	// ToolModeTyped lists every exposed method as its own tool.
	ToolModeTyped
	// ToolModeSearch lists two tools, search_tools and call_tool
	// (package searchmode), whatever the catalog's size.
	ToolModeSearch
)

// String is the mode's name as options and logs spell it.
func (m ToolMode) String() string {
	switch m {
	case ToolModeAuto:
		return "auto"
	case ToolModeTyped:
		return "typed"
	case ToolModeSearch:
		return "search"
	}
	return fmt.Sprintf("ToolMode(%d)", int(m))
}

// MarshalText is the mode's name, so a command line or a config file
// can bind a ToolMode directly (flag.TextVar).
func (m ToolMode) MarshalText() ([]byte, error) {
	if m < ToolModeAuto || m > ToolModeSearch {
		return nil, fmt.Errorf("tool mode %d: want auto, typed or search", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a mode's name: "auto", "typed" or "search".
func (m *ToolMode) UnmarshalText(b []byte) error {
	for _, mode := range []ToolMode{ToolModeAuto, ToolModeTyped, ToolModeSearch} {
		if string(b) == mode.String() {
			*m = mode
			return nil
		}
	}
	return errors.New(`want "auto", "typed" or "search"`)
}

// DefaultToolBudget is the tool budget of ToolModeAuto, in estimated
// tokens (tools/list JSON bytes / 4): 40,000 tokens, about 160 KB, a fifth
// of a 200,000-token context. A small or medium service (a few dozen
// methods with ordinary messages; the demo zoo is about 7,000) stays well
// inside it and is served typed; an estate of hundreds of methods goes
// over it and is served by search.
const DefaultToolBudget = 40000

// estimatedTokens is the token estimate the budget is measured in.
func estimatedTokens(jsonBytes int) int { return jsonBytes / 4 }

// effectiveMode decides typed or search for a catalog whose tools/list is
// listBytes long.
func (g *Gateway) effectiveMode(listBytes int) ToolMode {
	switch g.opts.Search.ToolMode {
	case ToolModeTyped, ToolModeSearch:
		return g.opts.Search.ToolMode
	}
	if g.opts.Search.ToolBudget < 0 || estimatedTokens(listBytes) <= g.opts.Search.ToolBudget {
		return ToolModeTyped
	}
	return ToolModeSearch
}
