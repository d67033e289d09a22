package gateway

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/overrides"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/scopes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolname"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// MaxToolNameLength is the longest tool name the gateway emits
// (gateway/internal/toolname has the naming rules).
const MaxToolNameLength = toolname.MaxLength

// MaxToolBytes is the most bytes one tool's tools/list entry takes (name,
// title, description, inputSchema, outputSchema, annotations, execution
// and _meta, as a 2025-11-25 client receives it), in either tool mode:
// search_tools shows a part of the same entry. A client puts every listed
// tool into its model's context, and a search answer carries a schema
// only when it fits in MaxSearchAnswerBytes; a Google Cloud request
// written out in full can reach megabytes.
const MaxToolBytes = compiled.MaxToolBytes

// catalog is an immutable snapshot of the exposed tools (and services,
// for resources), assembled from every backend's last good discovery by
// refresh.go. A call that loaded a *compiled.Tool keeps it, whatever is swapped in
// after.
type catalog struct {
	// listing is the whole catalog's list, served at /mcp; toolsets
	// are the lists of Options.FrontDoor.Toolsets, in order (toolsets.go).
	listing
	toolsets []*listing
	// typedTokens is the estimated size of the typed tools/list, which
	// ToolModeAuto weighs against the budget: at least that many when the
	// typed list was not built (chooseMode).
	typedTokens int
	// resources are the exposed services as MCP resources (resources.go).
	resources *resourceCatalog
	// byMethod finds a tool by its backend and full method
	// ("backend\x00/pkg.Service/Method"): a task is its starting tool's,
	// whatever that tool is named in this catalog (tasks.go).
	byMethod map[string]*compiled.Tool
	// operations are the backends serving google.longrunning.Operations,
	// by backend name, for the task methods (tasks.go).
	operations map[string]*operationsBackend
	// withheldOps are the backends whose Operations tools are withheld
	// (assemble), for the log.
	withheldOps []string
	// listed are the backends whose discovered tools this catalog holds
	// (a backend with none exposed included): /readyz waits for a
	// backend's name here, not for its discovery alone, so ready means
	// that tools/list and search_tools already show its tools.
	listed map[string]bool
	// rules are the tool scope rules as resolved for this catalog: which
	// match nothing, and which name a tool by a name a collision took from
	// it (package scopes); rebuild logs them.
	rules scopes.Resolution
}

// listing is one list of tools: the whole catalog's, or a toolset's,
// which holds some of the catalog's tools (the same *compiled.Tool values).
type listing struct {
	tools  []*compiled.Tool
	byName map[string]*compiled.Tool
	// set is what tools/list shows: every tool in typed mode, search
	// mode's two tools otherwise (then search is set).
	set    *mcp.ToolList
	mode   ToolMode
	search *searchmode.Catalog
	// scopeSets are the distinct scopes the tools need, and views the
	// lists kept for callers by the sets their tokens hold (visible.go).
	scopeSets scopes.Sets
	views     scopes.Views[*mcp.ToolList]
	// restricted: the listing is a toolset's, whose endpoint reaches only
	// its own tools' tasks, Operations methods (ops) and resources
	// (services, reach); the whole catalog's reaches all of the catalog's.
	restricted bool
	// resources are what resources/list shows: the catalog's services, or
	// a toolset's tools' services; services are a toolset's by URI
	// (toolsets.go).
	resources *mcp.ResourceSet
	services  map[string]bool
	// reach are, by backend, the messages a toolset's tools reach, the
	// only message resources it serves (listing.reaches builds it).
	reachOnce sync.Once
	reach     map[string]map[protoreflect.FullName]bool
	// matchedRules are the indexes of a toolset's own overrides that
	// matched one of its tools (overrides.go), and replaced the catalog's
	// tools it holds its own copies of, for the tasks they start.
	matchedRules map[int]bool
	resolvedArgs map[overrides.ArgKey]bool
	replaced     map[*compiled.Tool]bool
	// ops are the Operations tools, listed or withheld, whose methods a
	// toolset's task methods may call: those its patterns name and the
	// pollers its long-running tools bring (buildToolsets). Nil for the
	// whole catalog, which may call every one it has.
	ops map[*compiled.Tool]bool
}
