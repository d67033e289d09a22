package gateway

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/searchmode"
	"github.com/grpc-mcp-gateway/gateway/internal/search/embeddings"
)

// Search mode's wiring. A catalog too large for a model's context is
// listed as two tools, search_tools and call_tool; the search catalog,
// its answers, the two tools' definitions and the semantic reranking are
// package searchmode's. The gateway builds a search catalog with each
// list in search mode (refresh.go, toolsets.go), gives it its tools
// (*compiled.Tool is a searchmode.Tool), answers search_tools from it (serveCall,
// call.go) and runs the tool call_tool names on the one call path
// (runNamed, metacall.go).

// Names of search mode's two tools.
const (
	SearchToolsName = searchmode.SearchToolsName
	CallToolName    = searchmode.CallToolName
)

// Limits of a search_tools answer.
const (
	// DefaultSearchLimit is how many matches search_tools returns when the
	// call does not say.
	DefaultSearchLimit = searchmode.DefaultLimit
	// MaxSearchLimit caps the matches of one answer; a larger limit is
	// answered with this many.
	MaxSearchLimit = searchmode.MaxLimit
	// SearchAnswerBudget is what a search_tools answer aims at on the
	// wire: 16 KiB, about 4,000 tokens at the 4 bytes a token that
	// ToolBudget counts. Every match is listed by name, title,
	// description and hints; the best match carries its input schema,
	// and the next ones theirs while the answer stays within this budget.
	// A single schema larger than the budget is still carried by the best
	// match, alone, within MaxSearchAnswerBytes.
	SearchAnswerBudget = searchmode.AnswerBudget
	// MaxSearchAnswerBytes bounds a search_tools result as encoded on the
	// wire. One answer goes over it: a query that is a tool's exact name
	// gets that tool's schema whatever its size (its other matches come
	// without schemas then). A match whose schema would take any other
	// answer over this bound is listed without it, its entry giving the
	// schema's size and saying that its exact name brings it.
	MaxSearchAnswerBytes = searchmode.MaxAnswerBytes
	// MaxSearchQueryChars bounds a search_tools query: a search is a few
	// words, and reading a query costs time in proportion to its length.
	MaxSearchQueryChars = searchmode.MaxQueryChars
)

// searchTools are tools as search mode reads them: a search index
// (searchmode.New, whose answer entries are made on first use, with the
// tools' schemas) and the meta tools' list (searchmode.ToolList) are
// built from them.
func searchTools(tools []*compiled.Tool) []searchmode.Tool {
	out := make([]searchmode.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out
}

// SearchEmbeddings configures the semantic reranking of search mode: an
// OpenAI-compatible embeddings endpoint (POST {"model", "input": [...]},
// answered with {"data": [{"index", "embedding": [...]}]}).
type SearchEmbeddings struct {
	// URL is the endpoint (https, or http to a loopback host), e.g.
	// https://api.openai.com/v1/embeddings.
	URL string
	// Model is the model name the endpoint serves; required.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTPClient makes the requests; nil means a client of the
	// gateway's own.
	HTTPClient *http.Client
	// BatchSize is how many tools' texts one request embeds, for an
	// endpoint that takes fewer at once; zero means 64.
	BatchSize int
	// MaxDimensions bounds a vector's dimensions: an endpoint answering
	// longer ones is failing (search ranks lexically). Zero means
	// 8,192.
	MaxDimensions int
	// MaxVectorBytes bounds the tools' vectors kept, 4 bytes a
	// dimension: catalogs whose vectors would take more are ranked
	// lexically, and an error naming this option is logged. Each search
	// index holds a unit-length copy of its own tools' vectors on top
	// (the whole catalog's, and each search-mode toolset's). Zero means
	// DefaultMaxVectorBytes.
	MaxVectorBytes int64
	// MaxQueryCacheBytes bounds the query vectors kept (each query's
	// text, its vector at 4 bytes a dimension and 64 bytes of
	// bookkeeping): when one more would not fit, the cache is emptied.
	// Zero means DefaultMaxQueryCacheBytes.
	MaxQueryCacheBytes int64
}

// Defaults of SearchEmbeddings.
const (
	// DefaultMaxVectorBytes holds 20,000 tools' vectors of 3,072
	// dimensions (OpenAI's largest model), 16,000 of 4,096.
	DefaultMaxVectorBytes = 256 << 20
	// DefaultMaxQueryCacheBytes holds about 1,300 queries' vectors of
	// 3,072 dimensions, 2,600 of 1,536.
	DefaultMaxQueryCacheBytes = 16 << 20
)

// semanticPause is how long queries are answered lexically after a
// query's embedding failed (searchmode.DefaultPause). A variable so that
// tests can shorten it.
var semanticPause = searchmode.DefaultPause

// newSemantic checks o and makes the semantic reranking of its endpoint.
func newSemantic(o *SearchEmbeddings, logger *slog.Logger) (*searchmode.Semantic, error) {
	switch {
	case o.MaxVectorBytes < 0:
		return nil, &OptionError{Option: "Options.Search.Embeddings.MaxVectorBytes", Err: fmt.Errorf("want a number of bytes, or 0 for the default (%d), got %d", DefaultMaxVectorBytes, o.MaxVectorBytes)}
	case o.MaxQueryCacheBytes < 0:
		return nil, &OptionError{Option: "Options.Search.Embeddings.MaxQueryCacheBytes", Err: fmt.Errorf("want a number of bytes, or 0 for the default (%d), got %d", DefaultMaxQueryCacheBytes, o.MaxQueryCacheBytes)}
	}
	c, err := embeddings.New(embeddings.Options{URL: o.URL, Model: o.Model, APIKey: o.APIKey, HTTPClient: o.HTTPClient, MaxBatch: o.BatchSize, MaxDimensions: o.MaxDimensions})
	if err != nil {
		return nil, &OptionError{Option: "Options.Search.Embeddings", Err: err}
	}
	return searchmode.NewSemantic(searchmode.SemanticOptions{Client: c, Logger: logger, Pause: semanticPause,
		MaxVectorBytes: cmp.Or(o.MaxVectorBytes, DefaultMaxVectorBytes), MaxQueryBytes: cmp.Or(o.MaxQueryCacheBytes, DefaultMaxQueryCacheBytes)}), nil
}
