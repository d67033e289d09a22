// Package toolsets holds the rules of a toolset, a named subset of the
// catalog served at endpoints of its own (/mcp/NAME, /ws/NAME,
// /sse/NAME; gateway.Options.FrontDoor.Toolsets): what its name may be,
// which of a catalog's tools it holds, and the scopes a token must hold
// to use its endpoints at all.
//
// It knows a tool only as a Tool (its method and the tools that poll
// its long-running operation) and a toolset only by the fields its
// functions take, nothing of the gateway's tools, catalogs or MCP
// servers; the gateway builds each toolset's listing from what Select
// says, per catalog, and mounts its endpoints behind RequireScopes.
package toolsets

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

// nameRE is compiled on first use, not at every start: only a gateway
// configured with toolsets checks a name.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`) })

// ValidName checks a toolset's name, which is its endpoints' last path
// segment.
func ValidName(name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("%q: want 1 to 63 of a-z 0-9 _ -, starting with a letter or digit (it is the endpoints' path segment: /mcp/NAME)", name)
	}
	if name == "message" {
		// /sse/message is where the whole catalog's SSE sessions post.
		return fmt.Errorf("%q is reserved: /sse/message is the legacy SSE endpoint's message path", name)
	}
	return nil
}

// CheckRequiredScopes checks the RequiredScopes of the toolset named
// toolset, setting being its settings' path
// ("Options.FrontDoor.Toolsets[2]"): OAuth scope tokens, which only an
// OAuth front door (withAuth) can check.
func CheckRequiredScopes(setting, toolset string, scopes []string, withAuth bool) error {
	if len(scopes) > 0 && !withAuth {
		return &option.Error{Option: setting + ".RequiredScopes", Err: fmt.Errorf("toolset %s: needs Options.Auth (an OAuth front door)", toolset)}
	}
	for _, s := range scopes {
		if !auth.ValidScope(s) {
			return &option.Error{Option: setting + ".RequiredScopes", Err: fmt.Errorf("toolset %s: %q is not an OAuth scope token", toolset, s)}
		}
	}
	return nil
}

// Tool is one tool of a catalog as a toolset's selection sees it.
type Tool struct {
	// Name is the tool's name in the catalog.
	Name string
	// Method is "package.Service/Method", what a toolset's Include and
	// Exclude patterns match.
	Method string
	// Pollers name the tools that poll the tool's long-running
	// operation (its get and wait tools; "" for one it has none of), nil
	// for a tool that starts none.
	Pollers []string
}

// Catalog is a catalog's tools, in its order, indexed once for every
// toolset's Select.
type Catalog struct {
	tools []Tool
	index map[string]int
}

// NewCatalog indexes tools by name.
func NewCatalog(tools []Tool) Catalog {
	index := make(map[string]int, len(tools))
	for j, t := range tools {
		index[t.Name] = j
	}
	return Catalog{tools: tools, index: index}
}

// Select reports which of c's tools a toolset holds, match being its
// patterns (nil: every tool): the tools whose methods match, and the
// tools that poll those tools' long-running operations, which come with
// them because their descriptions and results name them.
func (c Catalog) Select(match func(method string) bool) []bool {
	member := make([]bool, len(c.tools))
	for j, t := range c.tools {
		if match != nil && !match(t.Method) {
			continue
		}
		member[j] = true
		for _, name := range t.Pollers {
			if k, ok := c.index[name]; ok && name != "" {
				member[k] = true
			}
		}
	}
	return member
}

// RequireScopes refuses a request to h whose token lacks the scopes the
// toolset named toolset requires, with the step-up challenge a's own
// required scopes get; without scopes it is h.
func RequireScopes(a *auth.Authenticator, toolset string, scopes []string, h http.Handler) http.Handler {
	if len(scopes) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := a.Authorize(r.Context(), scopes)
		var ref *auth.Refusal
		if errors.As(err, &ref) {
			w.Header().Set("WWW-Authenticate", ref.Challenge)
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, "forbidden: "+ref.Description+" (toolset "+toolset+")", ref.Status)
			return
		}
		h.ServeHTTP(w, r)
	})
}
